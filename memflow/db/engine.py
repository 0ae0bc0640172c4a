"""Connections: engine creation, server checks, dataset-scoped transactions, error wrapping."""

from __future__ import annotations

import json
import logging
import random
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
import sqlalchemy.exc as sa_exc
from psycopg.rows import dict_row
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url

from memflow import config as mfconfig
from memflow.db.queries import q, raw
from memflow.errors import (
    ConfigurationError,
    ConnectionFailed,
    DatabaseError,
    EmbeddingDimensionMismatch,
    ExtensionMissing,
    MemflowError,
    SchemaOutOfDate,
)

log = logging.getLogger(__name__)
T = TypeVar("T")
_RETRYABLE = {"40001", "40P01"}  # serialization_failure, deadlock_detected
MIN_PGVECTOR = (0, 8)


def sqlstate_of(exc: BaseException) -> str | None:
    """The SQLSTATE of a driver or SQLAlchemy error (None: not from the server)."""
    orig = getattr(exc, "orig", None)
    return getattr(orig, "sqlstate", None) or getattr(exc, "sqlstate", None)


def wrap_db_error(exc: BaseException) -> MemflowError:
    """Turn a driver/SQLAlchemy error into a memflow error (the caller raises it ``from exc``)."""
    if isinstance(exc, MemflowError):
        return exc
    state = sqlstate_of(exc)
    first = str(getattr(exc, "orig", exc) or exc).strip().splitlines()
    detail = first[0] if first else exc.__class__.__name__
    if state in _RETRYABLE:
        return DatabaseError(
            f"the transaction conflicted with concurrent writers [{state}]: {detail}; "
            "retry the call"
        )
    if state == "25006":
        return DatabaseError(
            f"this server only accepts reads (a standby, or a read-only transaction) [{state}]: "
            f"{detail}; write through the primary's URL (MEMFLOW_DATABASE_URL), and give standbys "
            "as read replicas (MEMFLOW_READ_REPLICA_URLS)"
        )
    if state == "57014" and "statement timeout" in detail:
        return DatabaseError(
            f"the statement was cancelled: it ran past its statement timeout [{state}]: "
            f"{detail}; nothing of it was written. Retry; for a very large document raise "
            "MEMFLOW_WRITE_TIMEOUT (seconds), for a search the server's --statement-timeout"
        )
    if state == "57014":
        return DatabaseError(f"the statement was cancelled [{state}]: {detail}; retry the call")
    if state == "42501" and "create extension" in detail:
        return DatabaseError(
            f"{detail}: a superuser must run `CREATE EXTENSION vector; CREATE EXTENSION pg_trgm;` "
            "in this database, then rerun `memflow db upgrade`"
        )
    if (
        isinstance(exc, sa_exc.OperationalError | sa_exc.InterfaceError)
        or (state or "").startswith("08")
        or (state in {"57P01", "57P02", "57P03"})
    ):
        return ConnectionFailed(_connection_advice(detail))
    return DatabaseError(f"database error{f' [{state}]' if state else ''}: {detail}")


def _connection_advice(detail: str) -> str:
    """What to check for each way opening a connection fails (matched in libpq's message); a
    retry is suggested only for a connection lost or dropped, where it can help."""
    low = detail.lower()
    if 'database "' in low and "does not exist" in low:
        advice = (
            "create that database (createdb NAME, or CREATE DATABASE) or fix its name in the URL"
        )
    elif any(k in low for k in ("password authentication", "no password supplied", 'role "')):
        advice = "check the user name and password in the URL"
    elif "pg_hba.conf" in low:
        advice = "the server refuses this user or host: check pg_hba.conf and the user in the URL"
    elif any(k in low for k in ("connection refused", "no such file", "translate host name")):
        advice = (
            "is the PostgreSQL server running, and are the host and port in the URL right? "
            "Start it (or fix the URL) and retry"
        )
    elif "timeout expired" in low:
        advice = "the server did not answer: check the host, port and firewall, then retry"
    else:
        return f"lost the database connection: {detail}; retry the call"
    return f"could not connect to PostgreSQL: {detail}; {advice}"


ACCEPTED_URLS = (
    "postgresql://user:password@host:port/dbname (also postgres:// and postgresql+psycopg://)"
)


def check_url(url: str) -> None:
    """Refuse anything but a PostgreSQL URL, naming the forms memflow accepts."""
    try:
        parsed = make_url(url)
    except sa_exc.ArgumentError:
        raise ConfigurationError(f"{url!r} is not a database URL: give {ACCEPTED_URLS}") from None
    if parsed.drivername != "postgresql+psycopg":
        raise ConfigurationError(
            f"memflow stores its data in PostgreSQL, not {parsed.drivername}: give {ACCEPTED_URLS}"
        )


def _register_vector(dbapi_conn: Any, _record: object) -> None:
    """Teach a new connection pgvector's types. A database without the extension (before the
    first migration creates it) has none to register; any other failure is a DatabaseError."""
    from pgvector.psycopg import register_vector
    from psycopg.types import TypeInfo

    try:
        if TypeInfo.fetch(dbapi_conn, "vector") is None:
            log.debug("no vector type in this database yet: pgvector types not registered")
            return
        register_vector(dbapi_conn)
    except psycopg.Error as exc:
        raise wrap_db_error(exc) from exc


_JSON = json.JSONDecoder()


def json_loads(data: str | bytes) -> Any:
    """What psycopg's json.loads does with the server's UTF-8 bytes, without detecting their
    encoding first (a search reads ~600 jsonb values: provenance)."""
    return _JSON.decode(data if isinstance(data, str) else data.decode())


def _fast_json(dbapi_conn: Any, _record: object) -> None:
    from psycopg.types.json import set_json_loads

    set_json_loads(json_loads, dbapi_conn)


APP_ROLE = "memflow_app"  # named in sql/session.sql (app_role_available, set_app_role)


def session_settings() -> mfconfig.SessionSettings:
    """:func:`memflow.config.session_settings`, checked."""
    found = mfconfig.session_settings()
    if not found.write_timeout_s >= 0:  # also NaN
        raise ConfigurationError(
            "MEMFLOW_WRITE_TIMEOUT must be a number of seconds >= 0 (0: no limit), e.g. 300"
        )
    if found.client_check_ms < 0:
        raise ConfigurationError(
            "MEMFLOW_CLIENT_CHECK_MS must be a whole number of milliseconds >= 0, e.g. 2000"
        )
    return found


def _session_hook(dialect: Any, app_role: bool) -> Callable[[Any, object], None]:
    """What each new connection runs: the client check (sql/session.sql ``client_check``) and,
    with ``app_role``, the switch to the role row-level security applies to (superusers and
    owners would bypass it)."""
    check = str(q("client_check").compile(dialect=dialect))
    interval = str(session_settings().client_check_ms)

    def prepare(dbapi_conn: Any, _record: object) -> None:
        with dbapi_conn.cursor(row_factory=dict_row) as cur:
            cur.execute(check, {"interval_ms": interval})
            if app_role:
                cur.execute(raw("app_role_available"))
                row = cur.fetchone()
                if row and row["available"]:
                    cur.execute(raw("set_app_role"))
        dbapi_conn.commit()  # SET is transactional: keep it past the pool's reset-on-return

    return prepare


def limit_write_statements(conn: Connection) -> None:
    """Cap each remaining statement of this write transaction at ``MEMFLOW_WRITE_TIMEOUT``."""
    ms = round(session_settings().write_timeout_s * 1000)
    conn.execute(q("write_timeout"), {"ms": str(ms)})


def engine_options(
    pool_size: int = 5, *, connect_timeout: int = 10, application_name: str = "memflow"
) -> dict[str, Any]:
    """The pool and connection settings of every memflow engine (sync and async)."""
    return {
        "pool_size": pool_size,
        "max_overflow": 10,
        "pool_pre_ping": True,
        "pool_recycle": 1800,
        "connect_args": {"connect_timeout": connect_timeout, "application_name": application_name},
    }


def make_engine(
    url: str,
    *,
    pool_size: int = 5,
    app_role: bool = False,
    connect_timeout: int = 10,
    application_name: str = "memflow",
) -> Engine:
    """An engine; with ``app_role`` its connections run as ``memflow_app`` (subject to RLS)."""
    check_url(url)
    engine = create_engine(
        url,
        **engine_options(
            pool_size, connect_timeout=connect_timeout, application_name=application_name
        ),
    )
    event.listen(engine, "connect", _register_vector)
    event.listen(engine, "connect", _fast_json)
    event.listen(engine, "connect", _session_hook(engine.dialect, app_role))
    return engine


def pgvector_version(conn: Connection) -> tuple[int, ...] | None:
    row = conn.execute(q("pgvector_version")).scalar()
    if row is None:
        return None
    return tuple(int(p) for p in str(row).split(".") if p.isdigit())


def check_server(conn: Connection) -> None:
    version = pgvector_version(conn)
    if version is None or version[:2] < MIN_PGVECTOR:
        found = ".".join(map(str, version)) if version else "not installed"
        raise ExtensionMissing(
            f"this PostgreSQL server has pgvector {found}; memflow needs pgvector >= 0.8. Install it "
            "(the pgvector/pgvector Docker image, or the postgresql-<version>-pgvector package) "
            "and run `CREATE EXTENSION vector`"
        )


def check_schema_current(conn: Connection) -> None:
    """Refuse a store whose schema is not at this memflow's head revision."""
    from memflow.db import migrate

    current = migrate.current_revision(conn)
    head = migrate.head_revision()
    if current != head:
        raise SchemaOutOfDate(
            f"the memflow schema is at revision {current or 'none'}, this memflow needs {head}: "
            "run `memflow db upgrade` (or `alembic upgrade head`) against this database"
        )


def check_schema(conn: Connection, *, auto_upgrade: bool, embedding_dim: int) -> None:
    """Bring an embedded store up to date, or refuse an external one that is behind."""
    from memflow.db import migrate

    if not auto_upgrade:
        check_schema_current(conn)
    elif migrate.current_revision(conn) != migrate.head_revision():
        migrate.upgrade(conn, embedding_dim=embedding_dim, announce=True)
    stored = migrate.stored_dim(conn)
    if stored is not None and stored != embedding_dim:
        raise EmbeddingDimensionMismatch(
            f"the store holds {stored}-dim embeddings but the configured embedder produces "
            f"{embedding_dim}-dim vectors: open it with a {stored}-dim embedder, or use another database"
        )


@contextmanager
def transaction(engine: Engine, dataset_id: uuid.UUID | None = None) -> Iterator[Connection]:
    """One transaction, bound to ``dataset_id`` (the setting row-level security keys on)."""
    try:
        with engine.begin() as conn:
            if dataset_id is not None:
                conn.execute(q("bind_dataset"), {"dataset_id": str(dataset_id)})
            yield conn
    except MemflowError:
        raise
    except sa_exc.SQLAlchemyError as exc:
        interrupt = _interrupt_behind(exc)
        if interrupt is not None:  # Ctrl-C mid-statement, then the rollback failed: stop
            raise interrupt from None
        raise wrap_db_error(exc) from exc


def _interrupt_behind(exc: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt an error was raised while handling, if any."""
    seen: BaseException | None = exc.__context__
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return seen
        seen = seen.__context__
    return None


def retry_delay(exc: Exception, attempt: int, attempts: int, base_delay: float = 0.05) -> float:
    """How long to wait before running a failed transaction again (attempt ``attempt`` of
    ``attempts``); raises the error to give up with when it is not a serialization failure or
    deadlock, or the attempts are used up."""
    cause = exc.__cause__ if isinstance(exc, MemflowError) else exc
    state = sqlstate_of(cause) if cause is not None else None
    if state not in _RETRYABLE or attempt == attempts - 1:
        if isinstance(exc, MemflowError) and state not in _RETRYABLE:
            raise exc
        raise wrap_db_error(cause or exc) from (cause or exc)
    delay: float = base_delay * (2**attempt) * (0.5 + random.random())
    log.info("retrying a transaction after SQLSTATE %s in %.3f s", state, delay)
    return delay


RETRY_ATTEMPTS = 6


def run_with_retry(
    fn: Callable[[], T], *, attempts: int = RETRY_ATTEMPTS, base_delay: float = 0.05
) -> T:
    """Run ``fn`` (one whole transaction) again on serialization failures and deadlocks."""
    for attempt in range(attempts):
        try:
            return fn()
        except (MemflowError, sa_exc.SQLAlchemyError) as exc:
            time.sleep(retry_delay(exc, attempt, attempts, base_delay))
    raise AssertionError("unreachable")
