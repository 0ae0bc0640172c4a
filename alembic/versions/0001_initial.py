"""Initial schema: datasets, documents, chunks, graph, provenance, per-field embeddings, views.

Frozen: the literal DDL the first release created (0001_tables.sql, 0001_views.sql), with the
embedding dimension substituted. memflow/db/schema.py is only the target of autogenerate; a
change there needs a new revision, never an edit here.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import context, op

from memflow.db.migrate import embedding_dim_for

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_HERE = Path(__file__).parent


def _sql(name: str) -> str:
    return (_HERE / name).read_text(encoding="utf-8")


def upgrade() -> None:
    bind = op.get_bind()
    dim = embedding_dim_for(bind, context.config, context.get_x_argument(as_dictionary=True))
    op.execute(_sql("0001_tables.sql").replace("@EMBEDDING_DIM@", str(int(dim))))
    op.execute(_sql("0001_views.sql"))


def downgrade() -> None:
    # The extensions stay: they may predate memflow and other schemas may use them.
    op.execute(
        """
        DROP VIEW memflow.episode_tree, memflow.episodes, memflow.facets, memflow.facet_points,
          memflow.entities;
        DROP TABLE memflow.edge_text, memflow.entity_name, memflow.facetpoint_search_text,
          memflow.facet_anchor_text, memflow.facet_search_text, memflow.episode_summary,
          memflow.node_chunk, memflow.edge_source, memflow.node_source, memflow.edge,
          memflow.node, memflow.chunk, memflow.document, memflow.store_meta, memflow.dataset;
        COMMENT ON SCHEMA memflow IS NULL;
        """
    )
