"""Running Alembic from memflow: locate the scripts, resolve the URL and the embedding dimension."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text

from memflow import config as mfconfig
from memflow.errors import ConfigurationError

DEFAULT_DIM = 384


def _package_root() -> Path:
    return Path(__file__).resolve().parent.parent


def alembic_dir() -> Path:
    """Inside an installed wheel the scripts ship as memflow/alembic; in a checkout they are ./alembic."""
    for candidate in (_package_root() / "alembic", _package_root().parent / "alembic"):
        if (candidate / "env.py").exists():
            return candidate
    raise ConfigurationError(
        "memflow's Alembic scripts are missing from the installation; reinstall memflow"
    )


def alembic_config(
    connection: Connection | None = None, *, embedding_dim: int | None = None
) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(alembic_dir()))
    if connection is not None:
        cfg.attributes["connection"] = connection
    if embedding_dim is not None:
        cfg.attributes["embedding_dim"] = embedding_dim
    return cfg


def resolve_url(explicit: str | None = None) -> str:
    """Explicit URL, else MEMFLOW_DATABASE_URL, else the (started) embedded server."""
    url = mfconfig.database_url(explicit)
    if url:
        return mfconfig.sqlalchemy_url(url)
    from memflow.db.embedded import EmbeddedServer

    server = EmbeddedServer(mfconfig.memflow_home())
    server.start()
    return server.url()


def stored_dim(connection: Connection) -> int | None:
    exists = connection.execute(text("SELECT to_regclass('memflow.store_meta')")).scalar()
    if exists is None:
        return None
    value = connection.execute(
        text("SELECT value FROM memflow.store_meta WHERE key = 'embedding_dim'")
    ).scalar()
    return int(value) if value is not None else None


def embedding_dim_for(connection: Any, cfg: Config, x_args: dict[str, str]) -> int:
    """The store's recorded dimension, else the one requested for a new store."""
    found = stored_dim(connection)
    if found is not None:
        return found
    raw = (
        cfg.attributes.get("embedding_dim")
        or x_args.get("embedding_dim")
        or os.environ.get("MEMFLOW_EMBED_DIM")
    )
    try:
        return int(raw) if raw else DEFAULT_DIM
    except ValueError as exc:
        raise ConfigurationError(f"embedding dimension must be an integer, got {raw!r}") from exc


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def current_revision(connection: Connection) -> str | None:
    exists = connection.execute(text("SELECT to_regclass('memflow.alembic_version')")).scalar()
    if exists is None:
        return None
    ctx = MigrationContext.configure(connection, opts={"version_table_schema": "memflow"})
    return ctx.get_current_revision()


def upgrade(
    connection: Connection, *, embedding_dim: int | None = None, revision: str = "head"
) -> None:
    from alembic import command

    command.upgrade(alembic_config(connection, embedding_dim=embedding_dim), revision)


def downgrade(connection: Connection, revision: str) -> None:
    from alembic import command

    command.downgrade(alembic_config(connection), revision)
