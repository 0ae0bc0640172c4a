"""Login roles for tests that connect as someone other than the superuser."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from sqlalchemy.engine import make_url

from memflow.config import libpq_url


def login_url(db_url: str, role: str, secret: str) -> str:
    """``db_url`` (any form) as ``role`` with ``secret``, in libpq's form."""
    url = make_url(db_url).set(username=role, password=secret)
    return libpq_url(url.render_as_string(hide_password=False))


@contextmanager
def login_role(db_url: str, prefix: str, options: str = "") -> Iterator[tuple[str, str]]:
    """A new ``LOGIN PASSWORD`` role (``options`` appended, e.g. ``IN ROLE x``); yields its name
    and libpq URL; afterwards its sessions end and the role and what it owns are dropped."""
    role, secret = f"{prefix}_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    admin = libpq_url(db_url)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{secret}' {options}")
    try:
        yield role, login_url(db_url, role, secret)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,)
            )
            conn.execute(f"DROP OWNED BY {role}")
            conn.execute(f"DROP ROLE {role}")
