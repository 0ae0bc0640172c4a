"""A primary and streaming standbys built from the embedded server's own binaries, on 127.0.0.1.

The primary is an :class:`~memflow.db.embedded.EmbeddedServer` that also listens on a TCP port;
each standby is a ``pg_basebackup -R`` of it (``standby.signal`` and ``primary_conninfo`` written
by pg_basebackup) started on a port of its own. Used by tests/integration/test_replicas.py and
benchmarks/replicas.py. Every wait polls with a deadline; nothing sleeps to synchronise.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import psycopg

from memflow.config import libpq_url
from memflow.db.embedded import SUPERUSER, EmbeddedServer

HOST = "127.0.0.1"
# Small servers: several run at once on a 2-core machine next to other test servers.
_SETTINGS = {"shared_buffers": "128MB", "max_wal_senders": "10", "hot_standby_feedback": "on"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``check`` (short pauses between polls) until it holds; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    pause = 0.005
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up after {timeout} s waiting for {what}")
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def sql(url: str, statement: str, *params: object) -> object:
    """One statement in autocommit as the superuser; the first column of its first row, if any."""
    with psycopg.connect(libpq_url(url), autocommit=True, connect_timeout=5) as conn:
        cur = conn.execute(statement, params or None)
        row = cur.fetchone() if cur.description else None
    return row[0] if row else None


class StreamingPair:
    """A primary under ``root`` plus standbys made with :meth:`add_standby`."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or Path(tempfile.mkdtemp(prefix="memflow-repl-"))
        self.primary = EmbeddedServer(
            self.root / "primary", port=free_port(), listen=HOST, options=dict(_SETTINGS)
        )
        self.standbys: list[EmbeddedServer] = []

    def start(self) -> StreamingPair:
        self.primary.start()
        return self

    @property
    def primary_url(self) -> str:
        return self.primary.tcp_url()

    def add_standby(self) -> EmbeddedServer:
        """A new standby streaming from the primary, started and accepting reads."""
        home = self.root / f"standby{len(self.standbys) + 1}"
        standby = EmbeddedServer(home, port=free_port(), listen=HOST, options=dict(_SETTINGS))
        home.mkdir(parents=True)
        # The copy has the primary's superuser and its password: the standby's owner keeps the
        # same password file. primary_conninfo (written by -R) carries the password itself, in
        # the standby's private data directory: its server user cannot read the owner's file.
        shutil.copy2(self.primary.password_file, standby.password_file)
        standby.prepare_dirs()  # the data directory, owned by the server's system user
        conninfo = (
            f"host={HOST} port={self.primary.port} user={SUPERUSER} "
            f"password={self.primary.password()}"
        )
        res = standby._run(
            "pg_basebackup",
            [*("-D", str(standby.pgdata), "-R", "-X", "stream", "-c", "fast"), "-d", conninfo],
            timeout=120,
        )
        if res.returncode != 0:
            raise RuntimeError(f"pg_basebackup failed: {res.stderr.strip()[-400:]}")
        standby.pgdata.chmod(0o700)  # what initdb leaves; the server refuses anything wider
        standby.start()
        self.standbys.append(standby)
        wait_until(lambda: self.streaming(standby), 30, "the standby to stream from the primary")
        return standby

    def streaming(self, standby: EmbeddedServer) -> bool:
        try:
            return bool(
                sql(standby.tcp_url(), "SELECT status = 'streaming' FROM pg_stat_wal_receiver")
            )
        except psycopg.Error:
            return False

    def wait_replayed(self, standby: EmbeddedServer, timeout: float = 30) -> None:
        """Until ``standby`` has replayed everything the primary has written so far."""
        target = sql(self.primary_url, "SELECT pg_current_wal_insert_lsn()")
        wait_until(
            lambda: bool(
                sql(standby.tcp_url(), "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", target)
            ),
            timeout,
            f"the standby to replay {target}",
        )

    def kill(self, server: EmbeddedServer) -> None:
        """SIGKILL the postmaster (a crash): its backends and WAL receiver exit with it."""
        pid = server.pid()
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
        wait_until(lambda: server.pid() is None, 30, "the killed server to be gone")

    def promote(self, standby: EmbeddedServer) -> None:
        res = standby._run("pg_ctl", ["-D", str(standby.pgdata), "-w", "-t", "60", "promote"])
        if res.returncode != 0:
            raise RuntimeError(f"pg_ctl promote failed: {res.stderr.strip()}")

    def destroy(self) -> None:
        for server in [*self.standbys, self.primary]:
            server.destroy()  # its data may live outside root (memflow/db/private.py)
        shutil.rmtree(self.root, ignore_errors=True)
