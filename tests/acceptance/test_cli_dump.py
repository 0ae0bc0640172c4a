"""``memflow export`` and ``memflow import-dump`` end to end, as a user runs them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, TEMPLATE, _scratch_database

from .test_cli_foundation import SEED, js, run

CHAT = (
    "Mia: I live in Boston.\nLeo: Nice, how is the weather there?\n"
    "Mia: Big news: we moved to Seattle last week!\n"
)


@pytest.fixture
def other_url(pg_admin_url: str, template_db: str) -> Iterator[str]:
    with _scratch_database(pg_admin_url, TEMPLATE) as url:
        yield url


def _results(url: str, dataset: str, *extra: str) -> list[Any]:
    out = js(run(url, "search", "where does Mia live?", "--dataset", dataset, "--json", *extra))
    return [(r["name"], r["score"], r["context"]) for r in out["results"]]


def test_export_then_import_dump_into_another_store(
    db_url: str, other_url: str, tmp_path: Path
) -> None:
    run(db_url, "add-episode", str(SEED), "--dataset", "notes", "--scope", "user=u1",
        "--metadata", '{"team": "core"}')  # fmt: skip
    run(db_url, "memorize", "-", "--dataset", "notes", "--content-type", "dialog", stdin=CHAT)

    piped = run(db_url, "export", "--dataset", "notes", "--with-vectors", "--progress", "none")
    lines = piped.stdout.splitlines()
    header, end = json.loads(lines[0]), json.loads(lines[-1])
    assert (header["format"], header["vectors"], header["dataset"]["name"]) == (
        "memflow-dump", True, "notes",
    )  # fmt: skip
    assert end["type"] == "end" and sum(end["counts"].values()) == len(lines) - 2
    assert "exported dataset 'notes'" in piped.stderr and "with vectors" in piped.stderr

    dump = tmp_path / "notes.jsonl"
    saved = js(run(db_url, "export", "-d", "notes", "--with-vectors", "-o", str(dump), "--json"))
    assert saved["path"] == str(dump) and saved["counts"] == end["counts"]
    assert sorted(dump.read_text("utf-8").splitlines()[1:]) == sorted(lines[1:])

    # Into a fresh store under the same name: the same answers, scopes and filters included.
    back = js(run(other_url, "import-dump", str(dump), "--json"))
    assert back["dataset"] == "notes" and back["vectors"] == "imported" and back["rekeyed"] == 0
    assert back["counts"] == end["counts"]
    expected = _results(db_url, "notes")
    assert _results(other_url, "notes") == expected
    scoped = ("--scope", "user=u1", "--where", '{"team": "core"}')
    assert _results(other_url, "notes", *scoped) == _results(db_url, "notes", *scoped)

    # From stdin, under another name, with progress on stderr as JSON lines.
    copy = run(other_url, "import-dump", "-", "--dataset", "copy", "--progress", "json",
               stdin=piped.stdout)  # fmt: skip
    assert "imported dataset 'copy' (exported as 'notes')" in copy.stdout
    stages = [json.loads(line)["stage"] for line in copy.stderr.splitlines()]
    assert stages[0] == "read" and stages[-1] == "done" and "rekey" in stages
    assert [r[0] for r in _results(other_url, "copy")] == [r[0] for r in expected]
    listed = js(run(other_url, "datasets", "--json"))["datasets"]
    assert {d["name"] for d in listed} == {"notes", "copy"}


def test_import_dump_errors_say_what_to_do(db_url: str, tmp_path: Path) -> None:
    run(db_url, "add-episode", str(SEED), "--dataset", "notes")
    text = run(db_url, "export", "--dataset", "notes").stdout
    again = run(db_url, "import-dump", "-", stdin=text, ok=False)
    assert again.returncode == 1
    assert "already holds memories: import into a new name (--dataset NEW)" in again.stderr
    cut = "\n".join(text.splitlines()[:-3])
    res = run(db_url, "import-dump", "-", "--dataset", "cut", "--json", stdin=cut, ok=False)
    assert res.returncode == 1 and "without its end record" in res.stderr
    assert js(res)["error"] == "InvalidInput"
    missing = run(db_url, "import-dump", str(tmp_path / "none.jsonl"), "-d", "x", ok=False)
    assert "none.jsonl: no such file" in missing.stderr
    nothing = run(db_url, "export", "--dataset", "nope", ok=False)
    assert nothing.returncode == 1 and "memflow datasets" in nothing.stderr
    names = {d["name"] for d in js(run(db_url, "datasets", "--json"))["datasets"]}
    assert names == {"notes"}


def test_the_python_example_of_docs_export_runs(db_url: str, tmp_path: Path) -> None:
    doc = (REPO / "docs" / "export.md").read_text(encoding="utf-8")
    (code,) = re.findall(r"```python\n(.*?)```", doc, re.S)
    env = {**os.environ, "MEMFLOW_DATABASE_URL": db_url, "MEMFLOW_EMBEDDER": "hash"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
        timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    nodes, moved, found = out.stdout.splitlines()
    assert int(nodes.split()[0]) > 3 and moved.startswith("imported ")
    assert (int(moved.split()[1]) > 3 and "Lisbon" in found) or "offsite" in found.lower()
    assert (tmp_path / "notes.jsonl").exists()
