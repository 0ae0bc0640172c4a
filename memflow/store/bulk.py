"""Deferred index and constraint maintenance for bulk imports (see ``sql/bulk.sql``).

Inside one transaction: lock every memflow table, drop the HNSW indexes and the foreign keys,
let the caller write, then re-add the constraints (each checked by one query) and rebuild the
indexes. The DDL needs the tables' owner: the session's login role must own the schema (true for
the embedded server and for whoever ran the migrations). Row-level security still applies to the
rows written, which run as the connection's normal role.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Connection, text

from memflow.db.queries import q
from memflow.errors import ConfigurationError, DatabaseError


@dataclass(frozen=True)
class Deferred:
    foreign_keys: list[tuple[str, str, str]]  # (table, name, definition)
    indexes: list[tuple[str, str]]  # (name, definition)


def _as_owner(conn: Connection, sql: str) -> None:
    try:
        conn.exec_driver_sql(sql)
    except Exception as exc:  # the caller's transaction rolls back either way
        orig = getattr(exc, "orig", None)
        if getattr(orig, "sqlstate", None) == "42501":
            raise ConfigurationError(
                "a bulk import rebuilds memflow's indexes and needs the login role that owns the "
                "memflow schema (the one that ran the migrations); write documents one by one "
                "instead, or connect as the owner"
            ) from exc
        raise


@contextmanager
def deferred_maintenance(conn: Connection) -> Iterator[Deferred]:
    """Drop HNSW indexes and foreign keys for the body of a ``with``; restore them after it."""
    role = str(conn.execute(text("SELECT current_user")).scalar_one())
    conn.exec_driver_sql("RESET ROLE")  # DDL as the session's login role (the owner)
    tables = [str(r.name) for r in conn.execute(q("bulk_tables"))]
    _as_owner(conn, f"LOCK TABLE {', '.join(tables)} IN ACCESS EXCLUSIVE MODE")
    deferred = Deferred(
        [(r.table_name, r.name, r.definition) for r in conn.execute(q("bulk_foreign_keys"))],
        [(r.name, r.definition) for r in conn.execute(q("bulk_vector_indexes"))],
    )
    for table, name, _ in deferred.foreign_keys:
        _as_owner(conn, f"ALTER TABLE {table} DROP CONSTRAINT {name}")
    for name, _ in deferred.indexes:
        _as_owner(conn, f"DROP INDEX {name}")
    conn.execute(text("SELECT set_config('role', :r, false)"), {"r": role})
    yield deferred
    conn.exec_driver_sql("RESET ROLE")
    for table, name, definition in deferred.foreign_keys:
        try:
            conn.exec_driver_sql(f"ALTER TABLE {table} ADD CONSTRAINT {name} {definition}")
        except Exception as exc:
            raise DatabaseError(
                f"the bulk import broke the constraint {name} on {table}: nothing was written"
            ) from exc
    for _, definition in deferred.indexes:
        conn.exec_driver_sql(definition)
    conn.execute(text("SELECT set_config('role', :r, false)"), {"r": role})
