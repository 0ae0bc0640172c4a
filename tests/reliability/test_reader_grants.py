"""A psql reader is bound by its grants (revision 0007), not by a setting it can change.

A login granted dataset A (``memflow db grant-reader``) tries every route to dataset B that
PostgreSQL offers it: the setting itself (SET, set_config, RESET), use_dataset, role games, the
views, the base tables, the functions, COPY, the planner's statistics and the dataset directory.
It sees 0 rows of B by each, and every write is refused, on A's rows too.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg import errors as pgerr

from memflow.cli.app import main
from memflow.config import libpq_url
from memflow.memory import Dataset, Memory

from ..support.roles import login_role
from ._support import TABLES, changed_tables, doc_drafts, fingerprint, procedure_drafts, record
from ._support import write_chunked_document as chunked

SCOPED = tuple(t for t in TABLES if t != "dataset")
# How PostgreSQL refuses a write: no privilege, or (a view) not a table to write.
REFUSED = (
    pgerr.InsufficientPrivilege,
    pgerr.WrongObjectType,
    pgerr.FeatureNotSupported,
    pgerr.ObjectNotInPrerequisiteState,
)
VIEWS = ("episodes", "facets", "facet_points", "entities", "episode_tree", "procedures")


@pytest.fixture
def two(mem: Memory) -> tuple[Dataset, Dataset]:
    """Datasets A and B, each with drafts, a chunked document and a procedure."""
    a, b = mem.dataset("reader-a"), mem.dataset("reader-b")
    for ds, first in ((a, 0), (b, 10)):
        ds.add_episodes(doc_drafts(first))
        chunked(ds, first + 2)
        ds.add_episodes(procedure_drafts(first))
    return a, b


@pytest.fixture
def reader(db_url: str, two: tuple[Dataset, Dataset]) -> Iterator[str]:
    """A login granted dataset A with `memflow db grant-reader`; yields its URL."""
    with login_role(db_url, "mf_reader") as (role, url):
        argv = ["db", "grant-reader", role, "--dataset", "reader-a", "--database-url", db_url]
        assert main(argv) == 0
        yield url


def _count(conn: psycopg.Connection[Any], sql: str, *params: object) -> int:
    row = conn.execute(sql, params or None).fetchone()
    assert row is not None
    return int(row[0])


def _b_rows(conn: psycopg.Connection[Any], b: Dataset) -> dict[str, int]:
    """B's rows this session sees, by table and view."""
    seen = {
        t: _count(conn, f"SELECT count(*) FROM memflow.{t} WHERE dataset_id = %s", b.id)
        for t in SCOPED
    }
    seen |= {
        f"view {v}": _count(conn, f"SELECT count(*) FROM memflow.{v} WHERE dataset_id = %s", b.id)
        for v in VIEWS
    }
    seen["directory"] = _count(conn, "SELECT count(*) FROM memflow.dataset WHERE id = %s", b.id)
    return seen


def _copied(conn: psycopg.Connection[Any], sql: str) -> int:
    """Lines COPY ... TO STDOUT returned."""
    with conn.cursor() as cur, cur.copy(sql) as copy:
        return sum(bytes(block).count(b"\n") for block in copy)


def test_a_granted_reader_sees_nothing_of_another_dataset_by_any_route(
    two: tuple[Dataset, Dataset], db_url: str, reader: str
) -> None:
    a, b = two
    with psycopg.connect(libpq_url(db_url)) as conn:  # the superuser: B is there to be seen
        assert all(
            _count(conn, f"SELECT count(*) FROM memflow.{t} WHERE dataset_id = %s", b.id) > 0
            for t in SCOPED
        )
    routes: dict[str, dict[str, int]] = {}
    with psycopg.connect(reader, autocommit=True) as conn:
        conn.execute("SELECT memflow.use_dataset('reader-a')")
        own = _count(conn, "SELECT count(*) FROM memflow.node")
        assert own > 0 and own == _count(
            conn, "SELECT count(*) FROM memflow.node WHERE dataset_id = %s", a.id
        )
        with pytest.raises(pgerr.InsufficientPrivilege, match="may not read dataset"):
            conn.execute("SELECT memflow.use_dataset('reader-b')")
        routes["use_dataset"] = _b_rows(conn, b)
        conn.execute(f"SET memflow.dataset_id = '{b.id}'")
        routes["SET"] = _b_rows(conn, b)
        conn.execute("SELECT set_config('memflow.dataset_id', %s, false)", (str(b.id),))
        routes["set_config"] = _b_rows(conn, b)
        with conn.transaction():
            conn.execute("SELECT set_config('memflow.dataset_id', %s, true)", (str(b.id),))
            routes["set_config local"] = _b_rows(conn, b)
        conn.execute("RESET memflow.dataset_id")
        routes["RESET"] = _b_rows(conn, b)
        conn.execute("RESET ALL")
        routes["RESET ALL"] = _b_rows(conn, b)
        conn.execute("SELECT set_config('memflow.dataset_id', %s, false)", (str(b.id),))
        for sql in (
            "SET ROLE memflow_app",
            "SET ROLE postgres",
            "SET SESSION AUTHORIZATION postgres",
        ):
            with pytest.raises(pgerr.InsufficientPrivilege):
                conn.execute(sql)
        conn.execute("RESET ROLE")
        routes["RESET ROLE"] = _b_rows(conn, b)
        # The functions it may run open nothing of B (use_dataset above; see also below).
        with pytest.raises(pgerr.InsufficientPrivilege):
            conn.execute("SELECT memflow.grant_reader('reader-b', current_user)")
        routes["functions"] = _b_rows(conn, b)
        # COPY applies row-level security like SELECT.
        copied = _copied(conn, "COPY memflow.node TO STDOUT") + _copied(
            conn, "COPY (SELECT * FROM memflow.chunk) TO STDOUT"
        )
        routes["COPY"] = {"rows": copied}
        # The planner's statistics of the tables (most common values, histograms) hold every
        # tenant's values: PostgreSQL hides them from a role row-level security applies to.
        with psycopg.connect(libpq_url(db_url), autocommit=True) as admin:
            admin.execute("ANALYZE memflow.node, memflow.chunk, memflow.dataset")
        routes["pg_stats"] = {
            "rows": _count(conn, "SELECT count(*) FROM pg_stats WHERE schemaname = 'memflow'")
            + _count(conn, "SELECT count(*) FROM pg_stats_ext WHERE schemaname = 'memflow'")
        }
        # The directory: its own dataset only, whatever the setting.
        names = [r[0] for r in conn.execute("SELECT name FROM memflow.dataset").fetchall()]
        routes["directory"] = {"other names": len(set(names) - {"reader-a"})}
    leaked = {route: sum(seen.values()) for route, seen in routes.items()}
    assert leaked == dict.fromkeys(routes, 0), routes
    record("reader_routes", routes=len(routes), cross_dataset_rows=sum(leaked.values()))


def test_the_policy_functions_tell_a_reader_nothing_new(
    two: tuple[Dataset, Dataset], db_url: str, reader: str
) -> None:
    """Bound to B, the reader's own answer is NULL; its grants are A; another role's grants are
    not its business (empty), and memflow_app's answer is only the setting it wrote itself."""
    a, b = two
    with psycopg.connect(reader, autocommit=True) as conn:
        conn.execute("SELECT set_config('memflow.dataset_id', %s, false)", (str(b.id),))
        assert conn.execute("SELECT memflow.readable_dataset(current_user)").fetchone() == (None,)
        assert conn.execute("SELECT memflow.granted_datasets(current_user)").fetchone() == ([a.id],)
        assert conn.execute("SELECT memflow.granted_datasets('memflow_app')").fetchone() == ([],)
        assert conn.execute("SELECT memflow.readable_dataset('memflow_app')").fetchone() == (b.id,)
        assert _b_rows(conn, b) == dict.fromkeys(_b_rows(conn, b), 0)


def test_a_reader_writes_nothing_not_even_its_own_dataset(
    two: tuple[Dataset, Dataset], db_url: str, reader: str
) -> None:
    a, _ = two
    before = fingerprint(db_url)
    refused = 0
    with psycopg.connect(reader, autocommit=True) as conn:
        conn.execute("SELECT memflow.use_dataset('reader-a')")
        relations = conn.execute(
            "SELECT c.relname, min(a.attname) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = 1 "
            "WHERE n.nspname = 'memflow' AND c.relkind IN ('r', 'v') GROUP BY 1 ORDER BY 1"
        ).fetchall()
        for rel, col in relations:
            for sql in (
                f"INSERT INTO memflow.{rel} DEFAULT VALUES",
                f"UPDATE memflow.{rel} SET {col} = {col}",
                f"DELETE FROM memflow.{rel}",
                f"TRUNCATE memflow.{rel}",
                f"COPY memflow.{rel} FROM STDIN",
            ):
                with pytest.raises(REFUSED):
                    conn.execute(sql)
                refused += 1
        # Not even a read of the grants, the settings or Alembic's table.
        for rel in ("dataset_reader", "store_meta", "alembic_version"):
            with pytest.raises(pgerr.InsufficientPrivilege):
                conn.execute(f"SELECT * FROM memflow.{rel}")
        with pytest.raises(pgerr.InsufficientPrivilege):
            conn.execute("CREATE TABLE memflow.mine (x int)")
        privileges = conn.execute(
            "SELECT DISTINCT privilege_type FROM information_schema.role_table_grants "
            "WHERE table_schema = 'memflow' AND grantee = current_user"
        ).fetchall()
    assert privileges == [("SELECT",)]
    assert changed_tables(before, fingerprint(db_url)) == []
    assert a.stats()["episodes"] > 0
    record("reader_writes", statements=refused, refused=refused)


def test_a_grant_to_a_group_role_admits_its_members_only(
    two: tuple[Dataset, Dataset], db_url: str
) -> None:
    a, b = two
    admin = libpq_url(db_url)
    with psycopg.connect(admin, autocommit=True) as conn:
        group = f"mf_grp_{uuid.uuid4().hex[:6]}"
        conn.execute(f"CREATE ROLE {group} NOLOGIN")
        conn.execute("SELECT memflow.grant_reader('reader-b', %s)", (group,))
    try:
        with (
            login_role(db_url, "mf_member", f"IN ROLE {group}") as (_, member),
            psycopg.connect(member, autocommit=True) as conn,
        ):
            conn.execute("SELECT memflow.use_dataset('reader-b')")
            assert _count(conn, "SELECT count(*) FROM memflow.node") == _count(
                conn, "SELECT count(*) FROM memflow.node WHERE dataset_id = %s", b.id
            )
            assert _count(conn, "SELECT count(*) FROM memflow.node") > 0
            conn.execute("SELECT set_config('memflow.dataset_id', %s, false)", (str(a.id),))
            assert _count(conn, "SELECT count(*) FROM memflow.node") == 0
        # SELECT on every table without a grant in memflow.dataset_reader reads nothing.
        with login_role(db_url, "mf_outsider") as (outsider, url):
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f"GRANT USAGE ON SCHEMA memflow TO {outsider}")
                conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA memflow TO {outsider}")
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("SELECT set_config('memflow.dataset_id', %s, false)", (str(b.id),))
                assert _count(conn, "SELECT count(*) FROM memflow.node") == 0
                assert _count(conn, "SELECT count(*) FROM memflow.dataset") == 0
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP OWNED BY {group}")
            conn.execute(f"DROP ROLE {group}")


def test_every_view_runs_with_the_invokers_rights(db_url: str) -> None:
    with psycopg.connect(libpq_url(db_url)) as conn:
        rows = conn.execute(
            "SELECT c.relname, coalesce(c.reloptions, '{}') FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'memflow' AND c.relkind IN ('v', 'm') ORDER BY 1"
        ).fetchall()
    assert sorted(r[0] for r in rows) == sorted(VIEWS)
    assert all("security_invoker=true" in r[1] for r in rows), rows


def test_every_security_definer_function_is_known(db_url: str) -> None:
    """A SECURITY DEFINER function runs as the owner, past row-level security: each one is
    either closed to PUBLIC or returns nothing of a dataset (checked above as a reader)."""
    with psycopg.connect(libpq_url(db_url)) as conn:
        rows = conn.execute(
            "SELECT p.proname, has_function_privilege('public', p.oid, 'EXECUTE'), "
            "coalesce(array_to_string(p.proconfig, ','), '') "
            "FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE n.nspname = 'memflow' AND p.prosecdef ORDER BY 1"
        ).fetchall()
    assert [(r[0], r[1]) for r in rows] == [
        ("grant_reader", False),
        ("granted_datasets", True),
        ("readable_dataset", True),
        ("use_dataset", True),
    ]
    assert all(r[2].startswith("search_path=pg_catalog") for r in rows), rows


def test_library_roles_read_the_dataset_they_bind_as_before(
    two: tuple[Dataset, Dataset], db_url: str, tenant_login: str
) -> None:
    """memflow_app's members (the application) keep the setting's binding: bound to B, B."""
    _, b = two
    with psycopg.connect(libpq_url(tenant_login), autocommit=True) as conn:
        conn.execute("SELECT set_config('memflow.dataset_id', %s, false)", (str(b.id),))
        assert _count(conn, "SELECT count(*) FROM memflow.node") == _count(
            conn, "SELECT count(*) FROM memflow.node WHERE dataset_id = %s", b.id
        )
        assert _count(conn, "SELECT count(*) FROM memflow.node") > 0
        assert _count(conn, "SELECT count(*) FROM memflow.dataset") == 2
