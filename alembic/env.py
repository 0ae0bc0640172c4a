"""Alembic environment for memflow. Accepts a connection passed in by memflow
(``config.attributes["connection"]``) or resolves the URL like memflow does."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool, text

from memflow.db.migrate import embedding_dim_for, lock_for_upgrade, resolve_url
from memflow.db.schema import SCHEMA, build_metadata

config = context.config
x_args = context.get_x_argument(as_dictionary=True)


def _target_metadata(connection: object) -> object:
    return build_metadata(embedding_dim_for(connection, config, x_args))


def _include_name(name: str | None, type_: str, parent_names: object) -> bool:
    return type_ != "schema" or name == SCHEMA


def _include_object(
    obj: object, name: str | None, type_: str, reflected: bool, compare_to: object
) -> bool:
    # Views and the alembic version table are managed outside the metadata.
    return not (type_ == "table" and name == "alembic_version")


def _run(connection: object) -> None:
    # Concurrent first uses of a fresh database queue here instead of creating the schema twice
    # (held until the migration transaction ends; memflow.db.migrate.upgrade took it already).
    lock_for_upgrade(connection)  # type: ignore[arg-type]
    connection.execute(text(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}"))  # type: ignore[attr-defined]
    context.configure(
        connection=connection,
        target_metadata=_target_metadata(connection),
        version_table_schema=SCHEMA,
        include_schemas=True,
        include_name=_include_name,
        include_object=_include_object,
        compare_type=True,
        compare_server_default=False,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = create_engine(resolve_url(x_args.get("url")), poolclass=pool.NullPool)
    with engine.begin() as conn:
        _run(conn)
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit(
        "memflow migrations run online only: give a database (-x url=... or MEMFLOW_DATABASE_URL)"
    )
run_migrations_online()
