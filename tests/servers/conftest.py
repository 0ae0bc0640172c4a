"""Fixtures for the front-door tests: one scratch database and one server process per module."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

from memflow.config import libpq_url

from ..conftest import TEMPLATE, _scratch_database

# A note of my own (English and Chinese), with facts a search must find.
NOTE = """# Release planning

Mira moved the mobile release to June 14 because the payment SDK update needs another review.
The release checklist lives in the ops wiki; Dario owns the rollback plan.

## 发布计划

李雷负责把支付回调迁移到新网关，截止日期是六月十日。
"""


@pytest.fixture(scope="module")
def module_db(pg_admin_url: str, template_db: str) -> Iterator[str]:
    """A migrated database shared by the tests of one module (its server starts once)."""
    with _scratch_database(pg_admin_url, TEMPLATE) as url:
        yield url


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def memflow_cmd(db_url: str, *args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "memflow.cli",
        *args,
        "--database-url",
        db_url,
        "--embedder",
        "hash",
    ]


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@contextmanager
def server_process(cmd: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[Path]:
    """Run ``cmd`` until it listens on ``port``; yields the path of its stderr log."""
    log = Path(tempfile.mkstemp(prefix="memflow-door-", suffix=".log")[1])
    with log.open("wb") as err:
        proc = subprocess.Popen(
            cmd, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=err
        )
    try:
        deadline = time.monotonic() + 60
        while not _answers(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"server did not start: {log.read_text()}")
            time.sleep(0.1)
        yield log
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.unlink(missing_ok=True)


def row_counts(db_url: str) -> dict[str, int]:
    """Rows in every table that memorize or forget touches (as the owner: no RLS)."""
    tables = ("dataset", "document", "chunk", "node", "edge", "node_source")
    with psycopg.connect(libpq_url(db_url)) as conn:
        return {
            t: int(conn.execute(f"SELECT count(*) FROM memflow.{t}").fetchone()[0])  # type: ignore[index]
            for t in tables
        }
