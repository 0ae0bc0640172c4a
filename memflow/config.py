"""Where settings come from: explicit arguments first, then MEMFLOW_* variables, then defaults.

Nothing is read at import time; call the functions when opening a store.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

import platformdirs


def memflow_home(home: str | os.PathLike[str] | None = None) -> Path:
    """The directory holding the embedded server's data (``MEMFLOW_HOME``, else the user data dir)."""
    if home is not None:
        return Path(home).expanduser().resolve()
    env = os.environ.get("MEMFLOW_HOME")
    if env:
        return Path(env).expanduser().resolve()
    return Path(platformdirs.user_data_dir("memflow", appauthor=False)).resolve()


def database_url(explicit: str | None = None) -> str | None:
    """The external database URL, or None for the embedded server."""
    return explicit or os.environ.get("MEMFLOW_DATABASE_URL") or None


def embedder_spec(explicit: str | None = None) -> str:
    return explicit or os.environ.get("MEMFLOW_EMBEDDER") or "local"


def sqlalchemy_url(url: str) -> str:
    """Accept libpq-style URLs and point SQLAlchemy at psycopg 3."""
    for prefix in ("postgresql+psycopg2://", "postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def libpq_url(url: str) -> str:
    """The same URL in the form psql understands."""
    if url.startswith("postgresql+psycopg://"):
        return "postgresql://" + url[len("postgresql+psycopg://") :]
    return url


# -- read replicas (memflow.db.replicas) ----------------------------------------------------------
ReadConsistency = Literal["read_your_writes", "eventual"]
READ_CONSISTENCIES: tuple[ReadConsistency, ...] = ("read_your_writes", "eventual")


@dataclass(frozen=True)
class ReplicaSettings:
    """How reads are spread over streaming replicas.

    ``max_wait_s``: how long a read waits for the chosen replica to replay this store's last
    write before it goes to the primary instead (read-your-writes); a replica that misses it is
    set aside like a failed one. ``retry_after_s``: how long a replica that failed, lagged past
    the bound or was promoted is left out before it is tried again. ``connect_timeout_s``: the
    connect timeout of replica connections (short: a dead replica must not stall a search).
    """

    urls: tuple[str, ...] = ()
    consistency: ReadConsistency = "read_your_writes"
    max_wait_s: float = 0.5
    retry_after_s: float = 5.0
    connect_timeout_s: int = 2


def replica_settings(
    read_replicas: Sequence[str] | None = None,
    consistency: str | None = None,
    *,
    max_wait_s: float | None = None,
    retry_after_s: float | None = None,
) -> ReplicaSettings:
    """Replica URLs from ``read_replicas``, else ``MEMFLOW_READ_REPLICA_URLS`` (comma-separated);
    the consistency from ``consistency``, else ``MEMFLOW_READ_CONSISTENCY``, else
    read-your-writes; seconds from the arguments, else ``MEMFLOW_REPLICA_MAX_WAIT`` /
    ``MEMFLOW_REPLICA_RETRY_AFTER``. Values are checked where they are used
    (:func:`memflow.db.replicas.check_settings`): an unreadable number reads as NaN."""
    if read_replicas is None:
        env = os.environ.get("MEMFLOW_READ_REPLICA_URLS", "")
        read_replicas = [u for u in (p.strip() for p in env.split(",")) if u]
    elif isinstance(read_replicas, str):
        read_replicas = [read_replicas]
    base = ReplicaSettings()
    return ReplicaSettings(
        urls=tuple(sqlalchemy_url(u) for u in read_replicas),
        consistency=cast(
            ReadConsistency,
            consistency or os.environ.get("MEMFLOW_READ_CONSISTENCY") or base.consistency,
        ),
        max_wait_s=_seconds(max_wait_s, "MEMFLOW_REPLICA_MAX_WAIT", base.max_wait_s),
        retry_after_s=_seconds(retry_after_s, "MEMFLOW_REPLICA_RETRY_AFTER", base.retry_after_s),
        connect_timeout_s=base.connect_timeout_s,
    )


def _seconds(explicit: float | None, var: str, default: float) -> float:
    if explicit is not None:
        return float(explicit)
    value = os.environ.get(var)
    if not value:
        return default
    try:
        return float(value)
    except ValueError:
        return math.nan


# -- memflow's own connections (memflow.db.engine, memflow.store.writer) --------------------------
@dataclass(frozen=True)
class SessionSettings:
    """What memflow sets on the connections and transactions it opens.

    ``write_timeout_s``: the statement timeout of a document's write transaction (memorize,
    add_episodes): a statement running longer is cancelled and the document rolled back, with an
    error naming this setting (0: no limit). ``client_check_ms``: while a statement runs, how
    often PostgreSQL checks that memflow is still connected, so the statement of a killed
    process stops (client_connection_check_interval, PostgreSQL 14+; 0: never).
    ``analyze_min_rows`` and ``analyze_share``: when the written dataset holds at least that many
    nodes, and that share, more than the planner believes it holds, a write refreshes the
    statistics (ANALYZE) inside its transaction before the statements that read what it wrote.
    """

    write_timeout_s: float = 300.0
    client_check_ms: int = 2000
    analyze_min_rows: int = 500
    analyze_share: float = 0.2


def session_settings() -> SessionSettings:
    """The defaults above, overridden by ``MEMFLOW_WRITE_TIMEOUT`` (seconds) and
    ``MEMFLOW_CLIENT_CHECK_MS``; an unreadable value reads as NaN (refused where it is used)."""
    base = SessionSettings()
    check = _seconds(None, "MEMFLOW_CLIENT_CHECK_MS", base.client_check_ms)
    return SessionSettings(
        write_timeout_s=_seconds(None, "MEMFLOW_WRITE_TIMEOUT", base.write_timeout_s),
        client_check_ms=int(check) if math.isfinite(check) else -1,
        analyze_min_rows=base.analyze_min_rows,
        analyze_share=base.analyze_share,
    )


def trace_exporters() -> list[str]:
    """Where memflow itself sends OpenTelemetry spans (docs/traces.md): the names in
    ``OTEL_TRACES_EXPORTER`` (``otlp``, ``console``; unset or ``none``: none), and ``jsonl:PATH``
    for ``MEMFLOW_TRACES_FILE``. Empty: memflow sets up no SDK (spans still go to a tracer provider
    the application set up itself)."""
    names = os.environ.get("OTEL_TRACES_EXPORTER", "").replace(" ", "").lower().split(",")
    out = [n for n in dict.fromkeys(names) if n and n != "none"]
    path = os.environ.get("MEMFLOW_TRACES_FILE")
    return [*out, f"jsonl:{path}"] if path else out
