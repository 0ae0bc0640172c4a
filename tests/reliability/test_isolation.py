"""Tenant isolation inside PostgreSQL: row-level security keyed on the transaction's dataset.

A raw SQL session running as the library's role and bound to dataset A must not see, change,
delete or create B's rows whatever SQL it sends; the library's own connections run as that role.
"""

from __future__ import annotations

import json
import unicodedata
import uuid
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg import errors as pgerr
from sqlalchemy import text

from memflow.config import libpq_url
from memflow.errors import InvalidInput
from memflow.memory import Dataset, Memory
from memflow.recall.config import SearchMode
from memflow.store.datasets import dataset_uuid

from ._support import (
    TABLES,
    changed_tables,
    doc_drafts,
    expected_stats,
    fingerprint,
    procedure_drafts,
    record,
    write_chunked_document,
)

SCOPED = tuple(t for t in TABLES if t != "dataset")
APP_ROLE = "memflow_app"


@pytest.fixture
def two(mem: Memory) -> tuple[Dataset, Dataset]:
    """Datasets A and B with the same entity names, each with drafts and a chunked document."""
    a, b = mem.dataset("tenant-a"), mem.dataset("tenant-b")
    for ds, first in ((a, 0), (b, 10)):
        ds.add_episodes(doc_drafts(first))
        ds.add_episodes(doc_drafts(first + 1))
        write_chunked_document(ds, first + 2)
        ds.add_episodes(procedure_drafts(first))
    return a, b


def _counts(url: str, dataset_id: uuid.UUID) -> dict[str, int]:
    """Rows per table of one dataset, counted as the superuser (RLS bypassed)."""
    out = {}
    with psycopg.connect(libpq_url(url)) as conn:
        for t in SCOPED:
            row = conn.execute(
                f"SELECT count(*) FROM memflow.{t} WHERE dataset_id = %s", (dataset_id,)
            ).fetchone()
            out[t] = int(row[0]) if row else -1
    return out


def _app_session(url: str, dataset_id: uuid.UUID | None) -> psycopg.Connection[Any]:
    conn = psycopg.connect(libpq_url(url), autocommit=True)
    conn.execute(f"SET ROLE {APP_ROLE}")
    if dataset_id is not None:
        conn.execute("SELECT set_config('memflow.dataset_id', %s, false)", (str(dataset_id),))
    return conn


def _writable_columns(conn: psycopg.Connection[Any], table: str) -> list[str]:
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = 'memflow' "
        "AND table_name = %s AND is_generated = 'NEVER' ORDER BY ordinal_position",
        (table,),
    ).fetchall()
    return [r[0] for r in rows]


def _one_row_json(url: str, table: str, dataset_id: uuid.UUID) -> str:
    with psycopg.connect(libpq_url(url)) as conn:
        row = conn.execute(
            f"SELECT row_to_json(t)::text FROM memflow.{table} t WHERE dataset_id = %s LIMIT 1",
            (dataset_id,),
        ).fetchone()
    assert row is not None, f"B has no {table} rows: the fixture must fill every table"
    return str(row[0])


def _attack_as_a(
    conn: psycopg.Connection[Any], url: str, a: Dataset, b: Dataset
) -> tuple[int, int]:
    """Every read/write on B's rows from a session bound to A; returns the statements tried and
    the rows of B they saw or touched."""
    tried = leaked = 0
    a_counts, b_counts = _counts(url, a.id), _counts(url, b.id)
    for t in SCOPED:
        assert b_counts[t] > 0 and a_counts[t] > 0, t
        reads = {
            f"SELECT count(*) FROM memflow.{t}": a_counts[t],
            f"SELECT count(*) FROM memflow.{t} WHERE dataset_id = %(b)s": 0,
            f"SELECT count(*) FROM memflow.{t} WHERE dataset_id <> %(a)s OR true AND dataset_id = %(b)s": 0,
            f"SELECT count(*) FROM (SELECT * FROM memflow.{t} UNION ALL SELECT * FROM ONLY memflow.{t}) u WHERE dataset_id = %(b)s": 0,
        }  # fmt: skip
        for sql, want in reads.items():
            row = conn.execute(sql, {"a": a.id, "b": b.id}).fetchone()
            assert row is not None
            leaked += int(row[0]) if want == 0 else 0
            assert row[0] == want, (sql, row)
            tried += 1
        for sql in (
            f"UPDATE memflow.{t} SET dataset_id = dataset_id WHERE dataset_id = %(b)s",
            f"UPDATE memflow.{t} SET dataset_id = %(a)s WHERE dataset_id = %(b)s",
            f"DELETE FROM memflow.{t} WHERE dataset_id = %(b)s",
            f"DELETE FROM memflow.{t} WHERE dataset_id <> %(a)s",
        ):
            cur = conn.execute(sql, {"a": a.id, "b": b.id})
            leaked += max(cur.rowcount, 0)
            assert cur.rowcount == 0, (sql, cur.rowcount)
            tried += 1
        # Moving A's own rows into B, or inserting a copy of B's row, violates the WITH CHECK.
        with (
            pytest.raises(pgerr.InsufficientPrivilege, match="row-level security"),
            conn.transaction(),
        ):
            conn.execute(f"UPDATE memflow.{t} SET dataset_id = %(b)s", {"b": b.id})
        cols = ", ".join(_writable_columns(conn, t))
        with pytest.raises(pgerr.InsufficientPrivilege, match="row-level security"):
            conn.execute(
                f"INSERT INTO memflow.{t} ({cols}) SELECT {cols} "
                f"FROM json_populate_record(NULL::memflow.{t}, %s::json)",
                (_one_row_json(url, t, b.id),),
            )
        for sql in (f"TRUNCATE memflow.{t}", f"ALTER TABLE memflow.{t} DISABLE ROW LEVEL SECURITY"):
            with pytest.raises(pgerr.InsufficientPrivilege):
                conn.execute(sql)
        tried += 4
    # The dataset directory: names are listable, but B's row cannot be renamed or deleted.
    assert (
        conn.execute("UPDATE memflow.dataset SET name = 'stolen' WHERE id = %s", (b.id,)).rowcount
        == 0
    )
    assert conn.execute("DELETE FROM memflow.dataset WHERE id = %s", (b.id,)).rowcount == 0
    # The psql views are security_invoker: they show A's rows only.
    for view in ("episodes", "facets", "facet_points", "entities", "episode_tree"):
        row = conn.execute(
            f"SELECT count(*) FROM memflow.{view} WHERE dataset_id = %s", (b.id,)
        ).fetchone()
        assert row == (0,), view
    # A graph walk from A's entities never crosses into B (keys carry dataset_id).
    row = conn.execute(
        """
        WITH RECURSIVE walk(id) AS (
          SELECT id FROM memflow.node WHERE kind = 'Entity'
          UNION
          SELECT CASE WHEN e.src = w.id THEN e.dst ELSE e.src END
          FROM memflow.edge e JOIN walk w ON w.id IN (e.src, e.dst))
        SELECT count(*) FROM walk w JOIN memflow.node n ON n.id = w.id WHERE n.dataset_id <> %s
        """,
        (a.id,),
    ).fetchone()
    assert row == (0,)
    return tried + 8, leaked


def test_library_connections_run_as_the_rls_role(mem: Memory, db_url: str) -> None:
    with mem.engine.connect() as conn:
        assert conn.execute(text("SELECT current_user")).scalar() == APP_ROLE
        flags = conn.execute(
            text("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user")
        ).one()
        assert tuple(flags) == (False, False)
    with psycopg.connect(libpq_url(db_url)) as conn:
        rows = conn.execute(
            "SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'memflow' AND c.relkind = 'r' "
            "AND c.relname NOT IN ('store_meta', 'alembic_version')"
        ).fetchall()
        # dataset_reader (revision 0003) holds psql read grants; tests/acceptance/test_readme.py;
        # change_log (revision 0004) is the audit of supersessions and corrections;
        # graph_revision (revision 0009) the dataset's graph revision the search cache checks
        assert {r[0] for r in rows} == {*TABLES, "dataset_reader", "change_log", "graph_revision"}
        # FORCE everywhere but on the grants, which the policy functions read as the owner
        # (revision 0007); memflow_app stays bound on them.
        assert all(r[1] and (r[2] or r[0] == "dataset_reader") for r in rows), rows
        # Every policy keys on the transaction's dataset (the directory's SELECT aside), through
        # the role's grants (revision 0007) on the tables that hold a dataset's rows.
        pols = conn.execute(
            "SELECT tablename, cmd, coalesce(qual, with_check) FROM pg_policies "
            "WHERE schemaname = 'memflow'"
        ).fetchall()
        version = conn.execute("SHOW server_version").fetchone()
        vector = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
    for table, cmd, expr in pols:
        if (table, cmd) in {("dataset", "SELECT"), ("dataset", "INSERT")}:
            continue
        assert (
            "readable_dataset(CURRENT_USER)"
            if table not in {"dataset", "dataset_reader"}
            else "current_dataset()"
        ) in (expr), (table, cmd, expr)
    record(
        "rls_tables",
        tables=len(rows),
        forced=sum(1 for r in rows if r[1] and r[2]),
        policies=len(pols),
        server_version=version[0] if version else None,
        pgvector=vector[0] if vector else None,
    )


def test_library_transactions_are_bound_and_scoped(
    mem: Memory, two: tuple[Dataset, Dataset]
) -> None:
    a, b = two
    # Even a statement that names no dataset sees only the bound one through the library engine.
    from memflow.db.engine import transaction

    with transaction(mem.engine, a.id) as conn:
        ids = {r[0] for r in conn.execute(text("SELECT DISTINCT dataset_id FROM memflow.node"))}
    assert ids == {a.id}
    with transaction(mem.engine) as conn:  # unbound: nothing at all
        assert conn.execute(text("SELECT count(*) FROM memflow.node")).scalar() == 0
    docs = [doc_drafts(0), doc_drafts(1), doc_drafts(2, episodes=1), procedure_drafts(0)]
    assert a.stats() == expected_stats(a.id, docs) | {"chunks": 2}
    assert {e["name"] for e in a.episodes()}.isdisjoint({e["name"] for e in b.episodes()})


def test_raw_session_bound_to_a_cannot_touch_b(two: tuple[Dataset, Dataset], db_url: str) -> None:
    a, b = two
    before = fingerprint(db_url)
    with _app_session(db_url, a.id) as conn:
        tried, leaked = _attack_as_a(conn, db_url, a, b)
    changed = changed_tables(before, fingerprint(db_url))
    assert changed == [] and leaked == 0
    record(
        "rls_raw_session", statements=tried, cross_dataset_rows=leaked, tables_changed=len(changed)
    )


def test_unbound_or_garbage_binding_sees_nothing(two: tuple[Dataset, Dataset], db_url: str) -> None:
    with _app_session(db_url, None) as conn:
        for t in SCOPED:
            assert conn.execute(f"SELECT count(*) FROM memflow.{t}").fetchone() == (0,), t
        conn.execute("SELECT set_config('memflow.dataset_id', '', false)")
        assert conn.execute("SELECT count(*) FROM memflow.node").fetchone() == (0,)
        conn.execute("SELECT set_config('memflow.dataset_id', %s, false)", (str(uuid.uuid4()),))
        assert conn.execute("SELECT count(*) FROM memflow.node").fetchone() == (0,)
        conn.execute("SELECT set_config('memflow.dataset_id', 'x'' OR true --', false)")
        with pytest.raises(pgerr.InvalidTextRepresentation):
            conn.execute("SELECT count(*) FROM memflow.node")


def test_login_role_cannot_escape_its_binding_by_role_games(
    two: tuple[Dataset, Dataset], db_url: str, tenant_login: str
) -> None:
    a, b = two
    before = fingerprint(db_url)
    with psycopg.connect(libpq_url(tenant_login), autocommit=True) as conn:
        conn.execute("SELECT set_config('memflow.dataset_id', %s, false)", (str(a.id),))
        for sql in ("SET ROLE postgres", "SET SESSION AUTHORIZATION postgres"):
            with pytest.raises(pgerr.InsufficientPrivilege):
                conn.execute(sql)
        conn.execute("RESET ROLE")
        tried, leaked = _attack_as_a(conn, db_url, a, b)
    changed = changed_tables(before, fingerprint(db_url))
    assert changed == [] and leaked == 0
    record(
        "rls_login_role",
        statements=tried + 2,
        cross_dataset_rows=leaked,
        tables_changed=len(changed),
    )


NASTY_NAMES = (
    "o'brien",
    "100%",
    "%",
    "_",
    "a -- b",
    "x'; DROP TABLE memflow.node; --",
    'say "hi"',
    "back\\slash",
    "数据集",
    "🚀 launch",
    "Ｆｕｌｌ－ｗｉｄｔｈ",
    "semi;colon?#frag",
    "n" * 200,
)  # names with control characters are refused since issue 25 (test_hostile_inputs.py)


def test_dataset_names_with_quotes_wildcards_and_unicode_stay_isolated(
    mem: Memory, db_url: str
) -> None:
    for i, name in enumerate(NASTY_NAMES):
        mem.dataset(name).add_episodes(doc_drafts(i, episodes=1))
    for i, name in enumerate(NASTY_NAMES):
        ds = mem.dataset(name, create=False)
        assert ds.id == dataset_uuid(name) and ds.name == name
        assert ds.stats() == expected_stats(ds.id, [doc_drafts(i, episodes=1)])
        assert [e["name"] for e in ds.episodes()] == [f"Meeting {i}.0"]
    assert {d.name for d in mem.datasets()} == set(NASTY_NAMES)
    assert all(d.episodes == 1 for d in mem.datasets())
    # Dropping the wildcard-looking ones removes exactly them.
    assert mem.drop_dataset("%") and mem.drop_dataset("_")
    left = {d.name: d.episodes for d in mem.datasets()}
    assert left == {n: 1 for n in NASTY_NAMES if n not in {"%", "_"}}
    with _app_session(db_url, dataset_uuid("o'brien")) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM memflow.episodes").fetchall()}
    assert names == {"Meeting 0.0"}
    record("dataset_names", names=len(NASTY_NAMES), dropped=2)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(name=st.text(min_size=1, max_size=30).filter(lambda s: s.strip() and "\x00" not in s))
def test_any_dataset_name_round_trips_and_stays_isolated(mem: Memory, name: str) -> None:
    """A name is refused (InvalidInput, nothing created) exactly when it holds a character a
    terminal or a URL path would misread; any other name round-trips and stays isolated."""
    control = mem.dataset("control-dataset")
    control.add_episode({"name": "control", "summary": "the control episode"})
    before = control.stats()
    record("hypothesis_example", property="any dataset name")
    if not _printable_path_segment(name):
        with pytest.raises(InvalidInput, match="dataset name"):
            mem.dataset(name)
        assert name not in {d.name for d in mem.datasets()}
        return
    ds = mem.dataset(name) if name != "control-dataset" else control
    summary = f"episode of {json.dumps(name, ensure_ascii=False)}"
    ds.add_episode({"name": "own", "summary": summary})
    assert mem.dataset(name, create=False).id == ds.id == dataset_uuid(name)
    if ds is not control:
        assert [e["name"] for e in ds.episodes()] == ["own"]
        assert control.stats() == before
        assert [e["name"] for e in control.episodes()] == ["control"]


def _printable_path_segment(name: str) -> bool:
    """The rule for new dataset names, written out independently of memflow.bounds."""
    bidi = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
    unsafe = any(unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") or c in bidi for c in name)
    return not unsafe and "/" not in name and name not in (".", "..") and len(name) <= 200


B_SECRET = "The harbour vault code for project Zebra is Zulu-7734, said Ingrid Halvorsen."


@pytest.mark.parametrize("mode", ["episodic", "vector", "lexical"])
def test_search_in_a_never_returns_b_even_for_bs_exact_sentence(
    mem: Memory, mode: SearchMode
) -> None:
    a, b = mem.dataset("search-a"), mem.dataset("search-b")
    a.memorize(
        "Ines Lopez moved ticket T-1 to Kubernetes. The harbour office opens at nine.",
        extractor="rules",
    )
    a.add_episodes(doc_drafts(0))
    b.memorize(B_SECRET, extractor="rules")
    b.add_episodes(doc_drafts(0))  # identical drafts in both datasets: same names, other ids
    a_ids = {e["id"] for e in a.episodes()}
    b_ids = {e["id"] for e in b.episodes()}
    assert a_ids and b_ids and a_ids.isdisjoint(b_ids)
    # The query finds B's episode in B (so the query is a fair probe) ...
    own = b.search(B_SECRET, top_k=5, mode=mode)
    assert own.results and {r.episode_id for r in own.results} <= b_ids
    assert "Zulu-7734" in own.context + " ".join(r.name + r.context for r in own.results)
    # ... and never anything of B in A, for the exact sentence and its fragments.
    leaked = 0
    for query in (B_SECRET, "Zulu-7734", "Ingrid Halvorsen", "project Zebra vault", "Meeting 0.0"):
        res = a.search(query, top_k=50, mode=mode)
        ids = {r.episode_id for r in res.results} | {
            u.episode_id for u in res.context_units if u.episode_id is not None
        }
        leaked += len(ids - a_ids)
        shown = res.context + " ".join(r.name + r.context for r in res.results)
        assert "Zulu" not in shown and "Ingrid" not in shown, query
    assert leaked == 0
    record("search_isolation", mode=mode, queries=5, cross_dataset_results=leaked)
