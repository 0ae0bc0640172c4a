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
from typing import Any

from sqlalchemy import Connection

from memflow.db.queries import q
from memflow.errors import ConfigurationError, DatabaseError


@dataclass(frozen=True)
class Deferred:
    foreign_keys: list[Any]  # rows of bulk_foreign_keys: table_name, name, drop/add_statement
    indexes: list[Any]  # rows of bulk_vector_indexes: drop_statement, create_statement


def _as_owner(conn: Connection, statement: str) -> None:
    try:
        conn.exec_driver_sql(statement)
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
    """Drop HNSW indexes and foreign keys for the body of a ``with``; restore them after it.

    The DDL statements are generated from the catalog by the named statements of sql/bulk.sql."""
    role = str(conn.execute(q("bulk_login_role")).scalar_one())
    conn.execute(q("bulk_reset_role"))
    _as_owner(conn, str(conn.execute(q("bulk_lock_tables")).scalar_one()))
    deferred = Deferred(
        list(conn.execute(q("bulk_foreign_keys")).all()),
        list(conn.execute(q("bulk_vector_indexes")).all()),
    )
    for fk in deferred.foreign_keys:
        _as_owner(conn, fk.drop_statement)
    for index in deferred.indexes:
        _as_owner(conn, index.drop_statement)
    conn.execute(q("bulk_set_role"), {"role": role})
    yield deferred
    conn.execute(q("bulk_reset_role"))
    for fk in deferred.foreign_keys:
        try:
            conn.exec_driver_sql(fk.add_statement)
        except Exception as exc:
            raise DatabaseError(
                f"the bulk import broke the constraint {fk.name} on {fk.table_name}: nothing was "
                "written"
            ) from exc
    for index in deferred.indexes:
        conn.exec_driver_sql(index.create_statement)
    conn.execute(q("bulk_set_role"), {"role": role})
