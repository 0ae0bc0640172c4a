"""Graph revision: every statement that writes a dataset's nodes, edges, documents or node
sources gives it a new revision (memflow.graph_revision, by statement triggers), in the writer's
transaction; search reads it with its recall and reuses the dataset's graph cached at that
revision (memflow.recall.graphcache).

Frozen once released: the literal DDL in 0009_graph_revision.sql (and its _down.sql).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-05
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_HERE = Path(__file__).parent


def upgrade() -> None:
    op.execute((_HERE / "0009_graph_revision.sql").read_text(encoding="utf-8"))


def downgrade() -> None:
    op.execute((_HERE / "0009_graph_revision_down.sql").read_text(encoding="utf-8"))
