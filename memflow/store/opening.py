"""Opening a store: where it is (a URL, else the embedded server in the memflow home), which
embedder, and the schema checked or upgraded; shared by :class:`memflow.Memory` and
:class:`memflow.AsyncMemory`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memflow import config as mfconfig
from memflow.db import engine as dbe
from memflow.embed.base import Embedder

if TYPE_CHECKING:
    from memflow.db.embedded import EmbeddedServer


def locate(database_url: str | None, home: str | Path | None) -> tuple[str, EmbeddedServer | None]:
    """The SQLAlchemy URL of the store, and the embedded server (started) when it is the store."""
    url = mfconfig.database_url(database_url)
    if url is not None:
        return mfconfig.sqlalchemy_url(url), None
    from memflow.db.embedded import EmbeddedServer

    server = EmbeddedServer(mfconfig.memflow_home(home))
    server.start()
    return server.url(), server


def open_store(
    database_url: str | None,
    home: str | Path | None,
    embedder: Embedder | str | None,
    auto_upgrade: bool | None,
) -> tuple[str, Embedder, EmbeddedServer | None]:
    """What :meth:`Memory.open` does before it makes its engine: the URL (the embedded server
    started when it is the store), the embedder, the server and the schema checked (upgraded)."""
    from memflow.embed.factory import make_embedder

    emb = make_embedder(embedder)
    url, server = locate(database_url, home)
    upgrade = bool(auto_upgrade) if auto_upgrade is not None or server is None else True
    admin = dbe.make_engine(url, pool_size=1)
    try:
        with dbe.transaction(admin) as conn:
            dbe.check_server(conn)
            dbe.check_schema(conn, auto_upgrade=upgrade, embedding_dim=emb.dim)
    finally:
        admin.dispose()
    return url, emb, server
