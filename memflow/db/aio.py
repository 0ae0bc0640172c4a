"""The async twin of :mod:`memflow.db.engine` and :mod:`memflow.db.steps`.

SQL runs on SQLAlchemy's ``AsyncEngine`` over psycopg's async driver: each step of a transaction
body through ``AsyncConnection.run_sync`` (the sync-style code runs in a greenlet on the event
loop, awaiting the driver). The body between its steps, and an operation between its
transactions, run in a :class:`CpuPool` thread, so embedding and scoring never block the loop and
at most ``workers`` of them run at once.

Cancelling a task inside a transaction rolls the transaction back (or drops its connection):
nothing of it is committed.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, suppress
from typing import Any, ParamSpec, TypeVar

import psycopg
import sqlalchemy.exc as sa_exc
from psycopg.rows import dict_row
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from memflow.db.engine import (
    RETRY_ATTEMPTS,
    check_url,
    engine_options,
    json_loads,
    retry_delay,
    session_settings,
    wrap_db_error,
)
from memflow.db.queries import q, raw
from memflow.db.steps import Body, Op, Tx, advance
from memflow.errors import MemflowError

T = TypeVar("T")
P = ParamSpec("P")


class CpuPool:
    """Worker threads for CPU work (embedding, scoring): at most ``workers`` at once."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers or min(4, os.cpu_count() or 1)
        self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="memflow-cpu")

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``fn`` in a worker, with the caller's context variables (as ``asyncio.to_thread``:
        the span current where an operation was awaited is its parent, memflow.trace)."""
        loop = asyncio.get_running_loop()
        call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
        return await loop.run_in_executor(self._pool, call)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


async def _prepare_connection(
    conn: psycopg.AsyncConnection[Any], app_role: bool, check: str
) -> None:
    """What :func:`memflow.db.engine._register_vector` and ``_session_hook`` do, async."""
    from pgvector.psycopg import register_vector_async
    from psycopg.types import TypeInfo
    from psycopg.types.json import set_json_loads

    if await TypeInfo.fetch(conn, "vector") is not None:
        await register_vector_async(conn)
    set_json_loads(json_loads, conn)
    async with conn.cursor() as cur:
        await cur.execute(check, {"interval_ms": str(session_settings().client_check_ms)})
    if app_role:
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(raw("app_role_available"))
            row = await cur.fetchone()
            if row and row["available"]:
                await cur.execute(raw("set_app_role"))
        await conn.commit()  # SET is transactional: keep it past the pool's reset-on-return


def make_async_engine(url: str, *, app_role: bool = False, **options: Any) -> AsyncEngine:
    """An async engine on psycopg's async driver; with ``app_role`` its connections run as
    ``memflow_app`` (subject to row-level security), as :func:`memflow.db.engine.make_engine`
    (``options``: the pool size and connection settings of :func:`engine_options`)."""
    check_url(url)
    engine = create_async_engine(url, **engine_options(**options))
    check = str(q("client_check").compile(dialect=engine.dialect))

    def on_connect(dbapi_conn: Any, _record: object) -> None:
        try:
            dbapi_conn.run_async(lambda conn: _prepare_connection(conn, app_role, check))
        except psycopg.Error as exc:
            raise wrap_db_error(exc) from exc

    event.listen(engine.sync_engine, "connect", on_connect)
    return engine


@asynccontextmanager
async def transaction(
    engine: AsyncEngine, dataset_id: uuid.UUID | None = None
) -> AsyncIterator[AsyncConnection]:
    """One transaction, bound to ``dataset_id`` (what row-level security keys on)."""
    try:
        async with engine.begin() as conn:
            if dataset_id is not None:
                await conn.execute(q("bind_dataset"), {"dataset_id": str(dataset_id)})
            yield conn
    except MemflowError:
        raise
    except sa_exc.SQLAlchemyError as exc:
        raise wrap_db_error(exc) from exc


async def run_body(conn: AsyncConnection, body: Body[T], cpu: CpuPool) -> T:
    value: Any = None
    while True:
        done, out = await cpu.run(advance, body, value, None)
        if done:
            return out  # type: ignore[no-any-return]
        value = await conn.run_sync(out)


async def run_tx(
    engine: AsyncEngine,
    tx: Tx[T],
    cpu: CpuPool,
    replicas: Mapping[str, AsyncEngine] | None = None,
) -> T:
    """Run ``tx`` on ``engine``, or on the replica its ``server`` names."""
    on = engine if tx.server is None or replicas is None else replicas[tx.server]
    attempts = RETRY_ATTEMPTS if tx.retry else 1
    for attempt in range(attempts):
        try:
            async with transaction(on, tx.dataset_id) as conn:
                return await run_body(conn, tx.body(), cpu)
        except (MemflowError, sa_exc.SQLAlchemyError) as exc:
            if not tx.retry:
                raise
            await asyncio.sleep(retry_delay(exc, attempt, attempts))
    raise AssertionError("unreachable")


async def run_op(
    engine: AsyncEngine,
    op: Op[T],
    cpu: CpuPool,
    replicas: Mapping[str, AsyncEngine] | None = None,
) -> T:
    """Run an operation: its transactions on ``engine`` (or the replica a transaction names),
    the code between them on ``cpu``. Cancelled, the operation is closed (its ``finally``
    blocks run) unless its code is running in a worker thread right then."""
    value: Any = None
    error: BaseException | None = None
    try:
        while True:
            done, out = await cpu.run(advance, op, value, error)
            if done:
                return out  # type: ignore[no-any-return]
            try:
                value, error = await run_tx(engine, out, cpu, replicas), None
            except Exception as exc:  # thrown into the operation, which may handle it
                value, error = None, exc
    except BaseException:
        with suppress(ValueError):  # "generator already executing": it ends in that thread
            op.close()
        raise


__all__ = ["CpuPool", "make_async_engine", "run_body", "run_op", "run_tx", "transaction"]
