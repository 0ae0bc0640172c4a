"""Database work written once for the sync and the async API.

A *transaction body* is a generator: it yields SQL steps (functions of a ``Connection``), is sent
each step's result, computes between them and returns its result. An *operation* is a generator
that yields :class:`Tx` (a body, the dataset it is bound to, whether to retry it) and computes
between transactions; a transaction that fails is thrown into the operation at its ``yield``.

This module runs both on a sync ``Engine``: the body's steps in one ``transaction`` (the one
:func:`memflow.db.engine.transaction` opens, bound to ``dataset_id`` for row-level security).
:mod:`memflow.db.aio` runs the same generators on an ``AsyncEngine``: the steps through
``AsyncConnection.run_sync`` and everything between them (embedding, scoring) in worker threads.
So a step should do database work only, and CPU work belongs between steps.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy import Connection, Engine

from memflow.db.engine import run_with_retry, transaction

T = TypeVar("T")

Sql = Callable[[Connection], Any]  # one step: database work inside the current transaction
Body = Generator[Sql, Any, T]


@dataclass(frozen=True)
class Tx(Generic[T]):
    """One transaction: ``body()`` makes its generator (again, when ``retry`` reruns it after a
    serialization failure or deadlock); ``dataset_id`` is bound before the first step. A ``read``
    writes nothing, so it may run on a read replica: ``server`` names the one
    :meth:`memflow.db.replicas.ReadRouter.route` chose (None: the primary)."""

    body: Callable[[], Body[T]]
    dataset_id: uuid.UUID | None = None
    retry: bool = False
    read: bool = False
    server: str | None = None

    def op(self) -> Op[T]:
        """The operation of this one transaction."""
        result: T = yield self
        return result


Op = Generator[Tx[Any], Any, T]


def one_step(fn: Callable[[Connection], T]) -> Body[T]:
    """A body of a single step."""
    result: T = yield fn
    return result


def sql_tx(
    fn: Callable[[Connection], T],
    dataset_id: uuid.UUID | None = None,
    *,
    retry: bool = False,
    read: bool = False,
) -> Tx[T]:
    """A transaction of one step."""
    return Tx(lambda: one_step(fn), dataset_id, retry, read)


def advance(
    gen: Generator[Any, Any, Any], value: Any, error: BaseException | None
) -> tuple[bool, Any]:
    """Resume ``gen`` with ``value`` (or throw ``error`` into it): (True, its result) when it
    returned, else (False, what it yielded). StopIteration never leaves (futures refuse it)."""
    try:
        return False, gen.send(value) if error is None else gen.throw(error)
    except StopIteration as stop:
        return True, stop.value


def run_body(conn: Connection, body: Body[T]) -> T:
    """Run a transaction body on an open connection."""
    value: Any = None
    while True:
        done, out = advance(body, value, None)
        if done:
            return out  # type: ignore[no-any-return]
        value = out(conn)


def run_tx(engine: Engine, tx: Tx[T], replicas: Mapping[str, Engine] | None = None) -> T:
    """Run ``tx`` on ``engine``, or on the replica its ``server`` names."""
    on = engine if tx.server is None or replicas is None else replicas[tx.server]

    def attempt() -> T:
        with transaction(on, tx.dataset_id) as conn:
            return run_body(conn, tx.body())

    return run_with_retry(attempt) if tx.retry else attempt()


def run_op(engine: Engine, op: Op[T], replicas: Mapping[str, Engine] | None = None) -> T:
    """Run an operation, each of its transactions on ``engine`` (or the replica it names)."""
    value: Any = None
    error: BaseException | None = None
    while True:
        done, out = advance(op, value, error)
        if done:
            return out  # type: ignore[no-any-return]
        try:
            value, error = run_tx(engine, out, replicas), None
        except Exception as exc:  # thrown into the operation, which may handle it
            value, error = None, exc


__all__ = [
    "Body",
    "Op",
    "Sql",
    "Tx",
    "advance",
    "one_step",
    "run_body",
    "run_op",
    "run_tx",
    "sql_tx",
]
