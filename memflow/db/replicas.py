"""Reads spread over streaming replicas, writes on the primary, and read-your-writes between them.

A :class:`ReadRouter` holds the primary engine and one engine per replica. ``route(op)`` sends
each read transaction of an operation (:mod:`memflow.db.steps`, ``Tx.read``: it may run several
statements, but must not write) to a healthy replica chosen round-robin, else to the primary;
the sync API runs the routed operation on its engines, the async API on async engines of the
same servers (the router polls replicas through its own sync engines, in the thread the
operation's code runs in):

* read-your-writes (the default): after this store wrote (the routed operation then reads the
  primary's WAL position), a replica serves a read only once it has replayed that position --
  polled for up to ``max_wait_s``, then the read goes to the primary;
* a replica that refuses connections, breaks off a read, lags past the bound or was promoted
  (``pg_is_in_recovery()`` false) is set aside for ``retry_after_s`` and tried again afterwards;
  a read it broke off runs once more, on the primary. Writes always run on the primary.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Generator
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, TypeVar

import sqlalchemy.exc as sa_exc
from sqlalchemy import Engine

from memflow.config import READ_CONSISTENCIES, ReplicaSettings
from memflow.db.engine import sqlstate_of
from memflow.db.queries import q
from memflow.db.steps import Op, Tx, advance, sql_tx
from memflow.errors import ConfigurationError, ConnectionFailed, MemflowError

log = logging.getLogger(__name__)
T = TypeVar("T")

# A replica breaking off a read: connection lost or refused (ConnectionFailed), or a query
# cancelled by a conflict with WAL replay (40001; 57P04 when the database was dropped upstream).
_REPLICA_FAULTS = {"40001", "57P04"}
_POLL_FIRST_S, _POLL_MAX_S = 0.001, 0.02


def check_settings(settings: ReplicaSettings) -> ReplicaSettings:
    """Refuse settings a router cannot work with, saying which variable to fix."""
    if settings.consistency not in READ_CONSISTENCIES:
        raise ConfigurationError(
            f"unknown read consistency {settings.consistency!r} (consistency= or "
            f"MEMFLOW_READ_CONSISTENCY): use one of {', '.join(READ_CONSISTENCIES)}"
        )
    for value, var in (
        (settings.max_wait_s, "MEMFLOW_REPLICA_MAX_WAIT"),
        (settings.retry_after_s, "MEMFLOW_REPLICA_RETRY_AFTER"),
    ):
        if not value >= 0:  # also NaN: a value that was not a number
            raise ConfigurationError(
                f"{var} (or its ReplicaSettings field) is {value}: give 0 or more seconds, e.g. 0.5"
            )
    return settings


def parse_lsn(text: str | None) -> int:
    """``'16/B374D848'`` -> its byte position (0 for NULL)."""
    if not text:
        return 0
    hi, _, lo = text.partition("/")
    return (int(hi, 16) << 32) | int(lo, 16)


@dataclass
class Replica:
    url: str
    engine: Engine
    skip_until: float = 0.0  # time.monotonic() before which it is left out
    reason: str = ""  # why it was last set aside


class ReadRouter:
    """Chooses the server of each read; see the module docstring."""

    def __init__(
        self,
        primary: Engine,
        settings: ReplicaSettings,
        engines: Callable[[str], Engine] | None = None,
    ) -> None:
        self.primary = primary
        self.settings = check_settings(settings)
        self.replicas = [Replica(u, engines(u)) for u in settings.urls] if engines else []
        self._lock = threading.Lock()
        self._next = 0
        self._written = 0  # WAL position of this store's last committed write
        self.counts: Counter[str] = Counter()
        self.max_lag_bytes = 0  # the largest replay lag behind a write seen while choosing

    # -- operations -----------------------------------------------------------------------------
    def route(self, op: Op[T]) -> Op[T]:
        """``op`` (:mod:`memflow.db.steps`) with each read transaction (``Tx.read``) sent to a
        caught-up replica and run again on the primary if the replica breaks it off -- only that
        transaction: what the operation computed before it (a query's embedding) stands. After
        an operation that wrote (or failed part way through a write), the primary's WAL position
        is noted for read-your-writes. The sync and the async runner both run what it yields."""
        return self._routed(op)

    def _routed(self, op: Op[T]) -> Op[T]:
        value: Any = None
        error: BaseException | None = None
        wrote = False
        while True:
            try:
                done, tx = advance(op, value, error)
            except Exception:
                if wrote:  # a failure part way may have committed some transactions
                    with suppress(MemflowError):  # then the write's own error is the one raised
                        yield from self._note_write()
                raise
            if done:
                if wrote:
                    yield from self._note_write()
                return tx  # type: ignore[no-any-return]
            wrote = wrote or not tx.read
            try:
                value, error = yield from self._attempt(tx)
            except GeneratorExit:  # this routing closed (a cancelled task): close the operation
                op.close()
                raise

    def _attempt(self, tx: Tx[Any]) -> Generator[Tx[Any], Any, tuple[Any, BaseException | None]]:
        """(result, None) or (None, the error to throw into the operation)."""
        replica = self._choose() if tx.read and self.replicas else None
        if replica is not None:
            try:
                value = yield dataclasses.replace(tx, server=replica.url)
            except MemflowError as exc:
                if not _replica_fault(exc):
                    return None, exc
                self._set_aside(replica, "failed", str(exc))
                self._count("primary_after_failure")
            else:
                self._count("replica")
                return value, None
        try:
            value = yield tx
        except Exception as exc:
            return None, exc
        if tx.read:
            self._count("primary")
        return value, None

    def _note_write(self) -> Generator[Tx[Any], Any, None]:
        """Record where the primary's WAL ends (after a write committed or failed part way)."""
        if not self.replicas or self.settings.consistency == "eventual":
            return
        lsn = yield sql_tx(lambda conn: conn.execute(q("primary_write_lsn")).scalar())
        with self._lock:
            self._written = max(self._written, parse_lsn(lsn))

    def engines_by_url(self) -> dict[str, Engine]:
        """Each replica's engine by its URL (what a routed transaction's ``server`` names)."""
        return {r.url: r.engine for r in self.replicas}

    def stats(self) -> dict[str, int]:
        """How reads were served (replica, primary, primary_after_failure) and why replicas were
        set aside (set_aside_down, set_aside_lagging, set_aside_promoted, set_aside_failed)."""
        with self._lock:
            return {**self.counts, "max_lag_bytes": self.max_lag_bytes}

    def engines(self) -> list[Engine]:
        """The primary's engine, then each replica's."""
        return [self.primary, *(r.engine for r in self.replicas)]

    def close(self) -> None:
        for r in self.replicas:
            r.engine.dispose()

    def _count(self, key: str) -> None:
        with self._lock:
            self.counts[key] += 1

    def _rotation(self) -> list[Replica]:
        with self._lock:
            start = self._next
            self._next = (self._next + 1) % len(self.replicas)
        return self.replicas[start:] + self.replicas[:start]

    def _choose(self) -> Replica | None:
        now = time.monotonic()
        need = self._written if self.settings.consistency == "read_your_writes" else 0
        deadline = now + self.settings.max_wait_s
        for replica in self._rotation():
            if replica.skip_until > now:
                continue
            verdict = self._wait_for(replica, need, deadline)
            if verdict is None:
                return replica
            self._set_aside(replica, *verdict)
        return None

    def _wait_for(self, replica: Replica, need: int, deadline: float) -> tuple[str, str] | None:
        """None when ``replica`` is a standby that has replayed ``need``, else why not."""
        pause = _POLL_FIRST_S
        try:
            with replica.engine.connect() as conn:
                while True:
                    row = conn.execute(q("replica_state")).one()
                    if not row.standby:
                        return "promoted", "pg_is_in_recovery() is false"
                    lag = need - parse_lsn(row.replayed)
                    if lag <= 0:
                        return None
                    with self._lock:
                        self.max_lag_bytes = max(self.max_lag_bytes, lag)
                    if time.monotonic() + pause > deadline:
                        return "lagging", f"{lag} bytes behind after {self.settings.max_wait_s} s"
                    conn.rollback()  # no snapshot held while the replica replays
                    time.sleep(pause)
                    pause = min(pause * 2, _POLL_MAX_S)
        except (sa_exc.SQLAlchemyError, MemflowError) as exc:
            return "down", str(exc)

    def _set_aside(self, replica: Replica, kind: str, detail: str) -> None:
        log.warning(
            "read replica %s set aside for %.1f s (%s): %s",
            replica.engine.url.render_as_string(hide_password=True),
            self.settings.retry_after_s,
            kind,
            detail,
        )
        with self._lock:
            replica.skip_until = time.monotonic() + self.settings.retry_after_s
            replica.reason = f"{kind}: {detail}"
            self.counts[f"set_aside_{kind}"] += 1


def _replica_fault(exc: MemflowError) -> bool:
    if isinstance(exc, ConnectionFailed):
        return True
    cause = exc.__cause__
    return cause is not None and sqlstate_of(cause) in _REPLICA_FAULTS
