"""The embedded server: started on demand, reused by other processes, recovered after a crash."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from memflow.config import libpq_url
from memflow.db.embedded import EmbeddedServer, tuned_settings
from memflow.db.private import copy_install
from memflow.embed.hash import HashEmbedder
from memflow.memory import Memory

from ..conftest import server_home


@pytest.fixture
def home() -> Iterator[Path]:
    h = server_home()
    yield h
    EmbeddedServer(h).destroy()


def test_open_starts_the_server_and_a_second_process_reuses_it(home: Path) -> None:
    with Memory.open(home=home, embedder=HashEmbedder(384)) as mem:
        mem.dataset("d").add_episode({"name": "n", "summary": "s"})
        pid = EmbeddedServer(home).pid()
        assert pid is not None
    code = (
        "from memflow import Memory; from memflow.embed.hash import HashEmbedder;"
        f"m = Memory.open(home={str(home)!r}, embedder=HashEmbedder(384));"
        "print(m.dataset('d').stats()['episodes']); m.close()"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1"
    assert EmbeddedServer(home).pid() == pid  # the same server, not a second one


def test_server_outlives_the_process_and_db_url_works_with_psql(home: Path) -> None:
    env = {**os.environ, "MEMFLOW_HOME": str(home)}
    out = subprocess.run(
        [sys.executable, "-m", "memflow.cli", "db", "url"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    url = out.stdout.strip()
    assert url.startswith("postgresql://")
    with psycopg.connect(url) as conn:  # libpq understands the printed URL, like psql does
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_tuned_settings_are_applied(home: Path) -> None:
    server = EmbeddedServer(home)
    server.start()
    with psycopg.connect(libpq_url(server.url())) as conn:
        shared = conn.execute(
            "SELECT setting::bigint * 8192 FROM pg_settings WHERE name = 'shared_buffers'"
        ).fetchone()
        maint = conn.execute(
            "SELECT setting::bigint * 1024 FROM pg_settings WHERE name = 'maintenance_work_mem'"
        ).fetchone()
    assert shared is not None and shared[0] > 128 * 1024 * 1024
    assert maint is not None and maint[0] >= 64 * 1024 * 1024
    assert tuned_settings(8 * 1024**3)["shared_buffers"] == "2048MB"
    assert tuned_settings(1 * 1024**3)["shared_buffers"] == "256MB"


def test_stale_pid_file_after_a_crash_is_recovered(home: Path) -> None:
    server = EmbeddedServer(home)
    server.start()
    server.stop("immediate")
    # A crash leaves postmaster.pid behind, naming a pid that is now something else (this process).
    (server.pgdata / "postmaster.pid").write_text(
        f"{os.getpid()}\n{server.pgdata}\n0\n5432\n\n\n\nready\n"
    )
    assert server.pid() is None
    with Memory.open(home=home, embedder=HashEmbedder(384)) as mem:
        assert mem.datasets() == []
    assert EmbeddedServer(home).is_running()


def test_a_server_whose_installation_was_removed_is_restarted(home: Path) -> None:
    """A server started by another installation (a virtualenv since deleted) still answers but
    cannot load pgvector: opening the home restarts it with this installation's programs."""
    copy = Path(tempfile.mkdtemp(dir="/tmp", prefix="memflow-pg-"))
    try:
        install = copy_install(copy)  # the server's own user can reach it
        EmbeddedServer(home, install=install).start()
        old = EmbeddedServer(home).pid()
        assert old is not None
    finally:
        shutil.rmtree(copy)
    assert EmbeddedServer(home).program_gone()
    with Memory.open(home=home, embedder=HashEmbedder(384)) as mem:
        ds = mem.dataset("d")
        ds.add_episode({"name": "harbour crane", "summary": "the crane was inspected"})
        assert ds.search("crane inspection").results  # pgvector loads again
    assert EmbeddedServer(home).pid() not in (None, old)
    assert not EmbeddedServer(home).program_gone()
