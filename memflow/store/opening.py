"""Opening a store: where it is (a URL, else the embedded server in the memflow home), which
embedder, the schema checked or upgraded, and the read replicas; shared by
:class:`memflow.Memory` and :class:`memflow.AsyncMemory`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine

from memflow import config as mfconfig
from memflow.config import ReadConsistency, ReplicaSettings
from memflow.db import engine as dbe
from memflow.db.queries import q
from memflow.embed.base import Embedder
from memflow.errors import DatabaseError

if TYPE_CHECKING:
    from memflow.db.embedded import EmbeddedServer


def locate(url: str | None, home: str | Path | None) -> tuple[str, EmbeddedServer | None]:
    """The SQLAlchemy URL of the store (``url``, else ``MEMFLOW_DATABASE_URL``), and the embedded
    server (started) when it is the store."""
    url = mfconfig.database_url(url)
    if url is not None:
        return mfconfig.sqlalchemy_url(url), None
    from memflow.db.embedded import EmbeddedServer

    server = EmbeddedServer(mfconfig.memflow_home(home))
    server.start()
    return server.url(), server


def open_store(
    url: str | None,
    home: str | Path | None,
    embedder: Embedder | str | None,
    auto_upgrade: bool | None,
) -> tuple[str, Embedder, EmbeddedServer | None]:
    """What :meth:`Memory.open` does before it makes its engine: the URL (the embedded server
    started when it is the store), the embedder, the server and the schema checked (upgraded)."""
    from memflow.embed.factory import make_embedder

    emb = make_embedder(embedder)
    url, server = locate(url, home)
    upgrade = bool(auto_upgrade) if auto_upgrade is not None or server is None else True
    admin = dbe.make_engine(url, pool_size=1)
    try:
        with dbe.transaction(admin) as conn:
            dbe.check_server(conn)
            dbe.check_schema(conn, auto_upgrade=upgrade, embedding_dim=emb.dim)
    finally:
        admin.dispose()
    return url, emb, server


def replica_settings(
    read_replicas: Sequence[str] | ReplicaSettings | None, consistency: ReadConsistency | None
) -> ReplicaSettings:
    """The read replicas of ``open(read_replicas=, consistency=)``, their URLs checked."""
    if isinstance(read_replicas, ReplicaSettings):
        settings = read_replicas
    else:
        settings = mfconfig.replica_settings(read_replicas, consistency)
    for replica in settings.urls:
        dbe.check_url(replica)
    return settings


def replica_engine(settings: ReplicaSettings) -> Callable[[str], Engine]:
    """How the read router connects to a replica (a short connect timeout: a replica that does
    not answer is set aside, the read goes to the primary)."""
    return lambda url: dbe.make_engine(
        url,
        app_role=True,
        connect_timeout=settings.connect_timeout_s,
        application_name="memflow-replica",
    )


def recorded_embedder(url: str | None, dataset: str, home: str | Path | None) -> str | None:
    """The embedder spec dataset ``dataset`` was written with (None: no such dataset, or a name
    that does not say how to rebuild it)."""
    from memflow.embed.factory import spec_for_name

    where, _ = locate(url, home)
    engine = dbe.make_engine(where, pool_size=1)
    try:
        with dbe.transaction(engine) as conn:
            dbe.check_schema_current(conn)
            row = conn.execute(q("dataset_get"), {"name": dataset}).first()
    except DatabaseError:
        return None  # no store yet, or behind: opening it says what to do
    finally:
        engine.dispose()
    return spec_for_name(row.embedder) if row is not None else None
