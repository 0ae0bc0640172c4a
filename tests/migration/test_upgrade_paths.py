"""Upgrading a store that holds memories: same search results; every upgrade names its steps."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memflow.db import engine as dbe
from memflow.db import migrate
from memflow.embed.hash import HashEmbedder
from memflow.memory import Memory

from .snapshot import store_catalog
from .test_catalog import RELEASED

DOCS = (
    "Mira: the staging database ran out of disk on Tuesday\n"
    "Tomas: I moved the backups to the cold bucket and it recovered\n"
    "Mira: let's alert at 80 percent from now on\n",
    "小林: 周五的发布推迟到下周一\n"
    "陈静: 因为支付回调的签名校验还没通过\n"
    "小林: 我会在周日再跑一遍回归测试\n",
)
QUERIES = ("why did staging fail?", "发布为什么推迟", "backups cold bucket", "回归测试什么时候跑")


def _results(mem: Memory) -> list[list[tuple[str, float]]]:
    ds = mem.dataset("team", create=False)
    out = []
    for query in QUERIES:
        for mode in ("episodic", "vector", "lexical"):
            resp = ds.search(query, top_k=5, mode=mode)  # type: ignore[arg-type]
            out.append([(r.name, round(r.score, 9)) for r in resp.results])
    return out


def _release_memory(url: str) -> Memory:
    """memflow on a store left at the released revision (Memory.open would refuse to use a
    store behind head without upgrading it): what a user of the release had written."""
    return Memory(dbe.make_engine(url, app_role=True), HashEmbedder(384), url=url)


def test_release_store_with_memories_upgrades_with_the_same_search_results(
    fresh_db: str, capfd: pytest.CaptureFixture[str]
) -> None:
    # The memories are written at head and the store taken down to the release: the writer of
    # this tree fills columns later revisions added (revision 0004's times), which a store at the
    # release lacks; the downgrade leaves exactly the rows the release would hold.
    store_catalog(fresh_db, "head")
    with _release_memory(fresh_db) as mem:
        ds = mem.dataset("team")
        for doc in DOCS:
            ds.memorize(doc, content_type="dialog", extractor="rules")
        before = _results(mem)
    assert sum(len(r) for r in before) > len(QUERIES), "the memories must be found"
    store_catalog(fresh_db, RELEASED)
    capfd.readouterr()
    with Memory.open(fresh_db, embedder=HashEmbedder(384), auto_upgrade=True) as mem:
        stats = mem.dataset("team").stats()
        after = _results(mem)
    announced = capfd.readouterr().err
    assert after == before
    assert stats["documents"] == len(DOCS)
    for step in migrate.pending(RELEASED):
        assert f"memflow: upgrading schema {step.describe()}" in announced


def test_auto_upgrade_names_each_revision_it_applies(
    fresh_db: str, capfd: pytest.CaptureFixture[str]
) -> None:
    Memory.open(fresh_db, embedder=HashEmbedder(384), auto_upgrade=True).close()
    lines = [ln for ln in capfd.readouterr().err.splitlines() if "upgrading schema" in ln]
    assert lines == [
        "memflow: upgrading schema none -> 0001 (initial schema)",
        "memflow: upgrading schema 0001 -> 0002 (row-level security)",
        *(f"memflow: upgrading schema {s.describe()}" for s in migrate.pending("0002")),
    ]
    Memory.open(fresh_db, embedder=HashEmbedder(384), auto_upgrade=True).close()
    assert "upgrading schema" not in capfd.readouterr().err  # up to date: nothing to say


def test_db_upgrade_lists_the_revisions_it_applied(fresh_db: str) -> None:
    store_catalog(fresh_db, "0001")

    def upgrade() -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "memflow.cli", "db", "upgrade", "--json"]
        cmd += ["--database-url", fresh_db, "--embedder", "hash"]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr
        return res

    first = upgrade()
    applied = json.loads(first.stdout)["applied"]
    assert applied[0] == {"from": "0001", "to": "0002", "title": "Row-level security"}
    assert [a["to"] for a in applied] == migrate.revision_chain()[1:]
    assert "memflow: upgrading schema 0001 -> 0002 (row-level security)" in first.stderr
    again = json.loads(upgrade().stdout)
    assert again == {"revision": migrate.head_revision(), "applied": []}
