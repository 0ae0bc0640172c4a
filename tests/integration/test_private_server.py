"""The embedded server is private to its owner (issue 25 item 2).

Another local account cannot connect (the socket directory is 0700, and every connection needs
the password kept 0600 in MEMFLOW_HOME); starting never changes the mode of a directory above
MEMFLOW_HOME; `memflow db url` / `db psql` still work for the owner; a home made by an older
memflow (trust authentication, socket 0777) is made private on its next start and keeps its data.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from memflow.config import libpq_url
from memflow.db import private
from memflow.db.embedded import SUPERUSER, EmbeddedServer
from tests.support.replication import free_port

OTHER = "nobody"


@pytest.fixture
def nest() -> Iterator[Path]:
    """A private (0700) directory holding the homes of a test, like /root holds ~/.local."""
    root = Path(tempfile.mkdtemp(prefix="memflow-private-"))
    yield root
    for pgpass in list(root.rglob("pgpass")):  # every home a server was started in
        EmbeddedServer(pgpass.parent).destroy()
    shutil.rmtree(root, ignore_errors=True)


def _modes(path: Path) -> dict[str, int]:
    return {str(p): stat.S_IMODE(p.stat().st_mode) for p in [path, *path.parents]}


def _as_other(*cmd: str) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` as another local account (root runs the tests here and in CI)."""
    return subprocess.run(
        ["su", OTHER, "-s", "/bin/sh", "-c", " ".join(f"'{c}'" for c in cmd)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "PGCONNECT_TIMEOUT": "5"},
    )


def _psql(server: EmbeddedServer) -> str:
    """A psql another account may run (the server's copy when the wheel's is out of reach)."""
    return str(private.server_bin(private.server_account()) / "psql")


def test_another_account_cannot_connect(nest: Path) -> None:
    home = nest / "home"
    server = EmbeddedServer(home, port=free_port(), listen="127.0.0.1")
    server.start()
    socket = server.socket_dir / f".s.PGSQL.{server.port}"
    for path in (server.socket_dir, server.server_dir, server.pgdata):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    assert stat.S_IMODE(socket.stat().st_mode) == 0o700
    assert stat.S_IMODE(server.password_file.stat().st_mode) == 0o600
    with psycopg.connect(libpq_url(server.url())) as conn:  # the owner, with the password file
        assert conn.execute("SELECT current_user").fetchone() == (SUPERUSER,)
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(
            f"host={server.socket_dir} port={server.port} user={SUPERUSER} dbname=memflow"
        )
    if not private.is_root():  # no other account to become: the modes above are what stop one
        return
    psql = _psql(server)
    # Over the socket: the directory is closed to it.
    by_socket = _as_other(psql, "-w", "-h", str(server.socket_dir), "-p", str(server.port),
                          "-U", SUPERUSER, "-d", "memflow", "-c", "SELECT 1")  # fmt: skip
    assert by_socket.returncode != 0 and "Permission denied" in by_socket.stderr, by_socket
    # Over TCP (a server that listens for a standby): the password stops it, and the owner's
    # password file is not readable to it.
    by_tcp = _as_other(psql, "-w", "-h", "127.0.0.1", "-p", str(server.port), "-U", SUPERUSER,
                       "-d", "memflow", "-c", "SELECT 1")  # fmt: skip
    assert by_tcp.returncode != 0 and "password" in by_tcp.stderr, by_tcp
    stolen = _as_other("cat", str(server.password_file))
    assert stolen.returncode != 0 and "Permission denied" in stolen.stderr
    url = (
        f"postgresql://{SUPERUSER}@127.0.0.1:{server.port}/memflow?passfile={server.password_file}"
    )
    assert _as_other(psql, "-w", url, "-c", "SELECT 1").returncode != 0


@pytest.mark.parametrize("open_home", [False, True], ids=["private-home", "open-home"])
def test_starting_changes_no_parent_directory(nest: Path, open_home: bool) -> None:
    """/root-like 0700 parent: the data goes where the server's user may reach it; a home whose
    parents are open already (a Docker volume) keeps its data. No mode above the home changes."""
    parent = nest / "private-parent"
    parent.mkdir(mode=0o700)
    home = parent / "memflow"
    if open_home:
        nest.chmod(0o755)
        parent.chmod(0o755)
        home.mkdir(mode=0o755)
    before = _modes(home.parent)
    server = EmbeddedServer(home)
    server.start()
    with psycopg.connect(libpq_url(server.url())) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    assert _modes(home.parent) == before
    assert stat.S_IMODE(home.stat().st_mode) == (0o755 if open_home else 0o700)
    if private.is_root():
        assert (server.server_dir == home) is open_home
        assert private.reachable(server.pgdata.parent, private.server_account())  # type: ignore[arg-type]


def test_db_url_and_db_psql_work_for_the_owner_without_showing_the_password(nest: Path) -> None:
    home = nest / "home"
    env = {**os.environ, "MEMFLOW_HOME": str(home)}
    url = subprocess.run(
        [sys.executable, "-m", "memflow.cli", "db", "url"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert url.returncode == 0, url.stderr
    secret = EmbeddedServer(home).password()
    assert secret not in url.stdout and "passfile=" in url.stdout
    psql = subprocess.run(
        [sys.executable, "-m", "memflow.cli", "db", "psql", "-tA", "-c", "SELECT current_user"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert psql.returncode == 0, psql.stderr
    assert psql.stdout.strip() == SUPERUSER


def _old_home(home: Path, *, running: bool) -> EmbeddedServer:
    """A home as memflow before issue 25 made it: initdb --auth=trust, socket directory and log
    readable by all, no password file; one table with a row in it."""
    server = EmbeddedServer(home)
    home.mkdir(mode=0o755)
    server.prepare_dirs()
    res = server._run("initdb", ["-D", str(server.pgdata), "--auth=trust", "-U", SUPERUSER,
                                 "--encoding=UTF8", "--locale=C.UTF-8"], timeout=120)  # fmt: skip
    assert res.returncode == 0, res.stderr
    server._pg_ctl_start()
    trust = f"host={server.socket_dir} port={server.port} user={SUPERUSER} dbname=postgres"
    with psycopg.connect(trust, autocommit=True) as conn:
        conn.execute("CREATE TABLE kept (note text)")
        conn.execute("INSERT INTO kept VALUES ('written before the upgrade')")
    server.socket_dir.chmod(0o755)
    server.log_file.chmod(0o644)
    if not running:
        assert server.stop()
    return server


@pytest.mark.parametrize("running", [True, False], ids=["still-running", "stopped"])
def test_a_home_of_an_older_memflow_is_made_private_and_keeps_its_data(
    nest: Path, running: bool
) -> None:
    nest.chmod(0o755)  # older versions opened the parents: the data sat in the home
    old = _old_home(nest / "home", running=running)
    assert not old.password_file.exists() and not private.is_private(old.pgdata)
    server = EmbeddedServer(old.home)
    server.start()
    assert private.is_private(server.pgdata)
    assert stat.S_IMODE(server.password_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(server.socket_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(server.log_file.stat().st_mode) == 0o600
    with psycopg.connect(libpq_url(server.url("postgres"))) as conn:
        assert conn.execute("SELECT note FROM kept").fetchall() == [("written before the upgrade",)]
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(
            f"host={server.socket_dir} port={server.port} user={SUPERUSER} dbname=postgres"
        )
    server.stop()
    server.start()  # and it starts again as a private server
    with psycopg.connect(libpq_url(server.url())) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
