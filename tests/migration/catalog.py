"""The pg_catalog facts of a memflow store that migrations must reproduce exactly.

``catalog(conn)`` reads them (columns, indexes, constraints, row-level security, views,
functions, comments, roles and grants, extensions, the store_meta rows) as plain JSON-able
lists; ``assert_same_catalog(expected, actual)`` compares two of them and names every
difference. The name of the role that ran the migrations is written as ``$owner`` so a snapshot
taken as one superuser compares with a store built by another; an ACL that was never set reads
as its default (``acldefault``), so "never granted" equals "granted, then revoked".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, text

Catalog = dict[str, list[list[Any]]]
SNAPSHOTS = Path(__file__).with_name("snapshots")

_IN_SCHEMA = "n.nspname = 'memflow'"
_GRANTEE = (
    "CASE WHEN a.grantee = 0 THEN 'PUBLIC' "
    "WHEN pg_get_userbyid(a.grantee) = current_user THEN '$owner' "
    "ELSE pg_get_userbyid(a.grantee) END"
)

QUERIES: dict[str, str] = {
    "relations": f"""
        SELECT c.relname, c.relkind, c.relrowsecurity, c.relforcerowsecurity,
               coalesce(c.reloptions, '{{}}')::text, pg_get_userbyid(c.relowner) = current_user
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE {_IN_SCHEMA} AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
        ORDER BY 1""",
    "columns": f"""
        SELECT c.relname,
               row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum) AS position,
               a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
               pg_get_expr(d.adbin, d.adrelid), a.attgenerated::text, a.attidentity::text
        FROM pg_attribute a
        JOIN pg_class c ON c.oid = a.attrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE {_IN_SCHEMA} AND c.relkind IN ('r', 'p', 'v', 'm') AND a.attnum > 0
          AND NOT a.attisdropped
        ORDER BY 1, 2""",
    "indexes": f"""
        SELECT pg_get_indexdef(i.indexrelid)
        FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE {_IN_SCHEMA}
        ORDER BY 1""",
    "constraints": f"""
        SELECT c.relname, con.conname, con.contype::text, pg_get_constraintdef(con.oid)
        FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE {_IN_SCHEMA} AND con.contype <> 'n'  -- NOT NULL: in "columns" (PostgreSQL 18 lists them here too)
        ORDER BY 1, 2""",
    "policies": """
        SELECT tablename, policyname, permissive, array_to_string(roles, ','), cmd, qual,
               with_check
        FROM pg_policies WHERE schemaname = 'memflow'
        ORDER BY 1, 2""",
    "views": f"""
        SELECT c.relname, pg_get_viewdef(c.oid, true)
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE {_IN_SCHEMA} AND c.relkind IN ('v', 'm')
        ORDER BY 1""",
    "functions": f"""
        SELECT p.proname, pg_get_function_identity_arguments(p.oid), pg_get_functiondef(p.oid)
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE {_IN_SCHEMA}
        ORDER BY 1, 2""",
    "triggers": f"""
        SELECT c.relname, t.tgname, pg_get_triggerdef(t.oid)
        FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE {_IN_SCHEMA} AND NOT t.tgisinternal
        ORDER BY 1, 2""",
    "comments": f"""
        SELECT 'schema', n.nspname, NULL::text, obj_description(n.oid, 'pg_namespace')
        FROM pg_namespace n WHERE {_IN_SCHEMA}
        UNION ALL
        SELECT 'relation', c.relname, NULL, obj_description(c.oid, 'pg_class')
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE {_IN_SCHEMA} AND obj_description(c.oid, 'pg_class') IS NOT NULL
        UNION ALL
        SELECT 'column', c.relname, a.attname, col_description(c.oid, a.attnum)
        FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE {_IN_SCHEMA} AND a.attnum > 0 AND col_description(c.oid, a.attnum) IS NOT NULL
        UNION ALL
        SELECT 'function', p.proname, pg_get_function_identity_arguments(p.oid),
               obj_description(p.oid, 'pg_proc')
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE {_IN_SCHEMA} AND obj_description(p.oid, 'pg_proc') IS NOT NULL
        ORDER BY 1, 2, 3""",
    "roles": """
        SELECT rolname, rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin,
               rolreplication, rolbypassrls
        FROM pg_roles r WHERE rolname = 'memflow_app'
          -- roles are cluster-wide: count it when this store grants it something
          AND EXISTS (SELECT 1 FROM pg_namespace n, aclexplode(n.nspacl) a
                      WHERE n.nspname = 'memflow' AND a.grantee = r.oid)""",
    "grants": f"""
        SELECT 'schema', n.nspname, {_GRANTEE}, a.privilege_type, a.is_grantable
        FROM pg_namespace n, aclexplode(coalesce(n.nspacl, acldefault('n', n.nspowner))) a
        WHERE {_IN_SCHEMA}
        UNION ALL
        SELECT 'relation', c.relname, {_GRANTEE}, a.privilege_type, a.is_grantable
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace,
             aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a
        WHERE {_IN_SCHEMA} AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
        UNION ALL
        SELECT 'function', p.proname, {_GRANTEE}, a.privilege_type, a.is_grantable
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace,
             aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
        WHERE {_IN_SCHEMA}
        ORDER BY 1, 2, 3, 4""",
    # Names only: the versions depend on the server, not on memflow.
    "extensions": "SELECT extname FROM pg_extension ORDER BY 1",
}
_STORE_META = "SELECT key, value FROM memflow.store_meta ORDER BY key"


def catalog(conn: Connection) -> Catalog:
    """The catalog facts of the ``memflow`` schema in the database of ``conn``."""
    out: Catalog = {
        name: [list(row) for row in conn.execute(text(sql))] for name, sql in QUERIES.items()
    }
    has_meta = conn.execute(text("SELECT to_regclass('memflow.store_meta')")).scalar()
    out["store_meta"] = (
        [list(row) for row in conn.execute(text(_STORE_META))] if has_meta is not None else []
    )
    return out


def differences(expected: Catalog, actual: Catalog) -> list[str]:
    """One line per fact present on one side only, by section."""
    lines: list[str] = []
    for section in sorted(set(expected) | set(actual)):
        want = [json.dumps(r, ensure_ascii=False) for r in expected.get(section, [])]
        got = [json.dumps(r, ensure_ascii=False) for r in actual.get(section, [])]
        found = [f"{section}: missing {r}" for r in want if r not in got]
        found += [f"{section}: unexpected {r}" for r in got if r not in want]
        if not found and want != got:
            found.append(f"{section}: same facts in another order or count")
        lines += found
    return lines


def assert_same_catalog(expected: Catalog, actual: Catalog, what: str) -> None:
    """Fail with every difference when the two catalogs differ (``what`` says which stores)."""
    diff = differences(expected, actual)
    assert not diff, f"{what}: {len(diff)} catalog difference(s):\n" + "\n".join(diff[:60])


def snapshot_path(revision: str) -> Path:
    return SNAPSHOTS / f"{revision}.json"


def load_snapshot(revision: str) -> Catalog:
    data = json.loads(snapshot_path(revision).read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if not k.startswith("_")}


def write_snapshot(revision: str, facts: Catalog, note: str) -> Path:
    path = snapshot_path(revision)
    path.parent.mkdir(parents=True, exist_ok=True)
    # One fact per line, so a reviewer reads the diff of a snapshot like a diff of DDL.
    parts = [f' "_note": {json.dumps(note, ensure_ascii=False)}']
    for section, rows in facts.items():
        body = ",\n".join(f"  {json.dumps(row, ensure_ascii=False)}" for row in rows)
        parts.append(f' "{section}": [\n{body}\n ]' if rows else f' "{section}": []')
    path.write_text("{\n" + ",\n".join(parts) + "\n}\n", encoding="utf-8")
    return path
