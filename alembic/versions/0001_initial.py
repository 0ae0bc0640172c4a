"""Initial schema: datasets, documents, chunks, graph, provenance, per-field embeddings, views.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from alembic import context, op

from memflow.db.migrate import embedding_dim_for
from memflow.db.schema import build_metadata

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_VIEWS = Path(__file__).with_name("0001_views.sql")


def upgrade() -> None:
    bind = op.get_bind()
    for ext in ("vector", "pg_trgm"):
        op.execute(f"CREATE EXTENSION IF NOT EXISTS {ext}")
    dim = embedding_dim_for(bind, context.config, context.get_x_argument(as_dictionary=True))
    # The baseline is the metadata of memflow/db/schema.py; a schema change needs a new revision,
    # and tests/migration checks that autogenerate against schema.py finds nothing to do.
    build_metadata(dim).create_all(bind)
    op.execute(
        sa.text(
            "INSERT INTO memflow.store_meta (key, value) VALUES ('embedding_dim', :dim)"
        ).bindparams(dim=str(dim))
    )
    op.execute(_VIEWS.read_text(encoding="utf-8"))


def downgrade() -> None:
    op.execute(
        "DROP VIEW IF EXISTS memflow.episode_tree, memflow.episodes, memflow.facets, "
        "memflow.facet_points, memflow.entities CASCADE"
    )
    bind = op.get_bind()
    build_metadata(384).drop_all(bind)
