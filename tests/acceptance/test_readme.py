"""The README's Python example runs as written (against the test database, hash embedder)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Any

import psycopg
import pytest

from ..conftest import REPO
from ..support.roles import login_role


def test_readme_python_example_runs(db_url: str) -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Python") : text.index("## Command line")]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 2
    code = blocks[0] + blocks[1]
    env = {**os.environ, "MEMFLOW_DATABASE_URL": db_url, "MEMFLOW_EMBEDDER": "hash"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert "'written': 1" in out.stdout
    assert "Tom reviews every schema change" in out.stdout


def test_readme_async_example_runs(db_url: str) -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Use it from an agent") : text.index("## Errors")]
    blocks = [b for b in re.findall(r"```python\n(.*?)```", section, re.S) if "AsyncMemory" in b]
    assert len(blocks) == 1
    env = {**os.environ, "MEMFLOW_DATABASE_URL": db_url, "MEMFLOW_EMBEDDER": "hash"}
    out = subprocess.run(
        [sys.executable, "-c", blocks[0]], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert "June 14" in out.stdout


def test_readme_psql_section_runs_as_a_plain_role(db_url: str, seed_drafts: list[Any]) -> None:
    """The README's psql section, run as a LOGIN role that is neither superuser nor owner."""
    from memflow.cli.app import main
    from memflow.embed.hash import HashEmbedder
    from memflow.memory import Memory

    with Memory.open(db_url, embedder=HashEmbedder(384)) as m:
        m.dataset("seed").add_episodes(seed_drafts)
        m.dataset("其他").add_episode({"name": "别的事", "summary": "不该被看到"})
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Inspect it with psql") : text.index("## Where PostgreSQL")]
    grant = re.search(r"memflow db grant-reader (\S+) --dataset (\S+)", section)
    assert grant is not None
    sql = re.findall(r"```sql\n(.*?)```", section, re.S)[0]
    statements = [s.strip() for s in sql.split(";") if s.strip()]
    assert statements[0] == f"SELECT memflow.use_dataset('{grant.group(2)}')"

    with login_role(db_url, "mf_reader") as (role, reader):
        argv = ["db", "grant-reader", role, "--dataset", grant.group(2), "--database-url", db_url]
        assert main(argv) == 0
        with psycopg.connect(reader, autocommit=True) as conn:
            assert conn.execute(statements[1]).fetchall() == []  # unbound: RLS shows nothing
            for stmt in statements[:-1]:
                conn.execute(stmt)
            rows = conn.execute(statements[-1]).fetchall()
            assert any("Episode: API 流式返回改造" in r[0] for r in rows)
            assert any("鉴权中间件不能改" in (r[1] or "") for r in rows)
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="may not read dataset"):
                conn.execute("SELECT memflow.use_dataset('其他')")
            # the refusal leaves the granted binding in place, and shows nothing of the other
            assert conn.execute(statements[-1]).fetchall() == rows
            other = "select count(*) from memflow.episodes where dataset = '其他'"
            assert conn.execute(other).fetchone() == (0,)


def test_readme_scopes_example_runs(db_url: str) -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Scopes and filters") : text.index("## Inspect it with psql")]
    [block] = re.findall(r"```python\n(.*?)```", section, re.S)
    env = {**os.environ, "MEMFLOW_DATABASE_URL": db_url, "MEMFLOW_EMBEDDER": "hash"}
    out = subprocess.run(
        [sys.executable, "-c", block], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "lena travel 1"
