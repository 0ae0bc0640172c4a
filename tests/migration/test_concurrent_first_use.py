"""Several processes using a fresh store at once: one creates it, the others wait and use it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from memflow.config import libpq_url
from memflow.db import migrate
from memflow.db.embedded import EmbeddedServer

from ..conftest import server_home

PARALLEL = 4
OPEN = (
    "import sys; from memflow import Memory; "
    "m = Memory.open(sys.argv[1], embedder='hash', auto_upgrade=True); "
    "print(m.dataset('d').stats()['episodes']); m.close()"
)


def _all_at_once(cmds: list[list[str]], env: dict[str, str] | None = None) -> list[str]:
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for cmd in cmds
    ]
    outs = []
    for proc in procs:
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err
        outs.append(out)
    return outs


def test_parallel_first_opens_of_a_fresh_database_all_succeed(fresh_db: str) -> None:
    outs = _all_at_once([[sys.executable, "-c", OPEN, fresh_db]] * PARALLEL)
    assert [o.strip() for o in outs] == ["0"] * PARALLEL
    with psycopg.connect(libpq_url(fresh_db)) as conn:
        assert conn.execute("SELECT version_num FROM memflow.alembic_version").fetchall() == [
            (migrate.head_revision(),)
        ]
        dim = conn.execute("SELECT value FROM memflow.store_meta").fetchall()
    assert dim == [("384",)]


@pytest.fixture
def home() -> Iterator[Path]:
    h = server_home()
    yield h
    EmbeddedServer(h).destroy()


def test_parallel_commands_on_a_fresh_home_all_succeed(home: Path) -> None:
    """Issue 13: three memflow commands on a new MEMFLOW_HOME, two used to fail with 23505.
    (`datasets`, since `stats` on a store without datasets rightly says there is none.)"""
    env = {k: v for k, v in os.environ.items() if k != "MEMFLOW_DATABASE_URL"}
    env["MEMFLOW_HOME"] = str(home)
    cmd = [sys.executable, "-m", "memflow.cli", "datasets", "--json", "--embedder", "hash"]
    outs = _all_at_once([cmd] * 3, env)
    assert [json.loads(o) for o in outs] == [{"datasets": []}] * 3
    assert EmbeddedServer(home).is_running()
