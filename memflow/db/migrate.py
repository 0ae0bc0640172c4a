"""Running Alembic from memflow: locate the scripts, resolve the URL and the embedding dimension.

Alembic itself loads only to migrate: the schema check of every store opening (the current and
the head revision) reads the version table and the scripts' revision ids without it (~0.2 s of
CPU a command start saves).
"""

from __future__ import annotations

import ast
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, text

from memflow import config as mfconfig
from memflow.errors import ConfigurationError

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

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


def alembic_ini() -> Path:
    """The ``alembic.ini`` shipped next to the scripts, for ``alembic -c`` from any directory."""
    ini = alembic_dir().parent / "alembic.ini"
    if not ini.exists():
        raise ConfigurationError(
            "memflow's alembic.ini is missing from the installation; reinstall memflow"
        )
    return ini


def alembic_config(
    connection: Connection | None = None, *, embedding_dim: int | None = None
) -> Config:
    from alembic.config import Config

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


def _script() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config())


def _revision_ids(script: Path) -> tuple[str, str | None]:
    """A script's ``revision`` and ``down_revision``, read from its source."""
    values: dict[str, Any] = {}
    for node in ast.parse(script.read_text(encoding="utf-8")).body:
        target: ast.expr
        if isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        else:
            continue
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant):
            values[target.id] = value.value
    if not isinstance(values.get("revision"), str):
        raise ConfigurationError(f"{script} names no revision: reinstall memflow")
    return values["revision"], values.get("down_revision")


def head_revision() -> str:
    """The revision no other revision follows (memflow's history is linear)."""
    parents = dict(_revision_ids(path) for path in (alembic_dir() / "versions").glob("*.py"))
    heads = sorted(set(parents) - set(parents.values()))
    if len(heads) != 1:
        raise ConfigurationError(f"memflow's Alembic scripts have heads {heads}: reinstall memflow")
    return heads[0]


def revision_chain() -> list[str]:
    """The revision ids from the first to the head (memflow's history is linear)."""
    return [rev.revision for rev in reversed(list(_script().walk_revisions()))]


def resolve_revision(name: str) -> str:
    """A revision id for ``name`` ("head" or an id)."""
    return head_revision() if name == "head" else name


@dataclass(frozen=True)
class Step:
    """One revision an upgrade applies."""

    frm: str | None
    to: str
    title: str

    def describe(self) -> str:
        return f"{self.frm or 'none'} -> {self.to} ({self.title.lower()})"


def _title(doc: str) -> str:
    """A revision's short name: its message up to the first colon ("Row-level security: ...")."""
    return doc.strip().splitlines()[0].split(":")[0].rstrip(".")


def pending(current: str | None, target: str = "head") -> list[Step]:
    """The revisions an upgrade from ``current`` to ``target`` applies, in order."""
    chain = revision_chain()
    start = 0 if current is None else chain.index(current) + 1
    end = chain.index(resolve_revision(target)) + 1
    script = _script()
    steps = []
    for i in range(start, end):
        rev = script.get_revision(chain[i])
        doc = rev.doc if rev is not None else chain[i]
        steps.append(Step(chain[i - 1] if i else None, chain[i], _title(doc or chain[i])))
    return steps


def current_revision(connection: Connection) -> str | None:
    exists = connection.execute(text("SELECT to_regclass('memflow.alembic_version')")).scalar()
    if exists is None:
        return None
    rows = connection.execute(text("SELECT version_num FROM memflow.alembic_version")).all()
    if len(rows) > 1:
        raise ConfigurationError(
            f"memflow.alembic_version holds {len(rows)} revisions, memflow's history has one line: "
            "this schema was migrated by other scripts than memflow's"
        )
    return str(rows[0][0]) if rows else None


# Held (transaction-scoped) while a store is created or upgraded: concurrent first uses of a
# fresh database wait for the first one instead of creating the schema twice.
UPGRADE_LOCK_KEY = 0x6D656D666C6F77  # "memflow"


def lock_for_upgrade(connection: Connection) -> None:
    """Take the upgrade lock until the end of ``connection``'s transaction."""
    connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": UPGRADE_LOCK_KEY})


def upgrade(
    connection: Connection,
    *,
    embedding_dim: int | None = None,
    revision: str = "head",
    announce: bool = False,
) -> list[Step]:
    """Apply the revisions up to ``revision`` under the upgrade lock; returns what was applied.

    With ``announce`` each revision is named on stderr before it runs. The caller commits.
    """
    from alembic import command

    lock_for_upgrade(connection)
    steps = pending(current_revision(connection), revision)
    for step in steps if announce else ():
        print(f"memflow: upgrading schema {step.describe()}", file=sys.stderr)
    if steps:
        command.upgrade(alembic_config(connection, embedding_dim=embedding_dim), revision)
    return steps


def downgrade(connection: Connection, revision: str) -> None:
    from alembic import command

    command.downgrade(alembic_config(connection), revision)
