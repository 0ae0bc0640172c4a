"""The four Alembic checks: single head, base -> head, autogenerate is empty, down/up keeps data."""

from __future__ import annotations

import subprocess
import sys

import psycopg
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from memflow.config import libpq_url
from memflow.db import engine as dbe
from memflow.db import migrate
from memflow.db.schema import build_metadata
from memflow.embed.hash import HashEmbedder
from memflow.memory import Memory

from ..conftest import REPO


def test_single_head() -> None:
    heads = ScriptDirectory.from_config(migrate.alembic_config()).get_heads()
    assert len(heads) == 1


def test_upgrade_base_to_head_and_current(fresh_db: str) -> None:
    eng = dbe.make_engine(fresh_db)
    with eng.begin() as conn:
        assert migrate.current_revision(conn) is None
        migrate.upgrade(conn, embedding_dim=384)
        assert migrate.current_revision(conn) == migrate.head_revision()
    eng.dispose()


def test_autogenerate_against_models_is_empty(db_url: str) -> None:
    eng = dbe.make_engine(db_url)
    with eng.connect() as conn:
        ctx = MigrationContext.configure(
            conn,
            opts={
                "compare_type": True,
                "version_table_schema": "memflow",
                "include_schemas": True,
                "include_name": lambda name, type_, parent: type_ != "schema" or name == "memflow",
                "include_object": lambda obj, name, type_, reflected, compare_to: (
                    name != "alembic_version"
                ),
            },
        )
        diff = compare_metadata(ctx, build_metadata(384))
    eng.dispose()
    assert diff == []


def test_downgrade_upgrade_round_trip_keeps_data(db_url: str) -> None:
    with Memory.open(db_url, embedder=HashEmbedder(384)) as m:
        m.dataset("keep").add_episode({"name": "Kept", "summary": "this survives migrations"})
    script = ScriptDirectory.from_config(migrate.alembic_config())
    head = script.get_revision(migrate.head_revision())
    assert head is not None and head.down_revision is not None, "need a revision to step back over"
    eng = dbe.make_engine(db_url)
    with eng.begin() as conn:
        migrate.downgrade(conn, str(head.down_revision))
        assert migrate.current_revision(conn) == head.down_revision
    with eng.begin() as conn:
        migrate.upgrade(conn)
        assert migrate.current_revision(conn) == migrate.head_revision()
    eng.dispose()
    with Memory.open(db_url, embedder=HashEmbedder(384)) as m:
        assert [e["name"] for e in m.dataset("keep").episodes()] == ["Kept"]
        assert m.dataset("keep").stats()["embeddings"] == 1


def test_alembic_command_line_equals_memflow_db_upgrade(fresh_db: str) -> None:
    """`alembic upgrade head` from the repository root migrates like `memflow db upgrade`."""
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "alembic",
            "-x",
            f"url={fresh_db}",
            "-x",
            "embedding_dim=384",
            "upgrade",
            "head",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    with psycopg.connect(libpq_url(fresh_db)) as conn:
        rev = conn.execute("SELECT version_num FROM memflow.alembic_version").fetchone()
    assert rev == (migrate.head_revision(),)


def test_every_column_psql_users_read_has_a_comment(db_url: str) -> None:
    """Revision 0003: \\d+ on any memflow table or view explains every column."""
    with psycopg.connect(libpq_url(db_url)) as conn:
        bare = conn.execute(
            "SELECT c.relname || '.' || a.attname FROM pg_attribute a "
            "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'memflow' AND c.relkind IN ('r', 'v') AND a.attnum > 0 "
            "AND NOT a.attisdropped AND c.relname <> 'alembic_version' "
            "AND col_description(c.oid, a.attnum) IS NULL ORDER BY 1"
        ).fetchall()
        views = conn.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'memflow' AND c.relkind = 'v'"
        ).fetchone()
    assert bare == []
    assert views == (6,)
