"""Procedural memory and entity types: Procedure, its context and step points, EntityType.

Frozen once released: the literal DDL in 0005_procedures.sql (and its _down.sql), with the store's
embedding dimension substituted.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import context, op

from memflow.db.migrate import embedding_dim_for

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_HERE = Path(__file__).parent


def upgrade() -> None:
    bind = op.get_bind()
    dim = embedding_dim_for(bind, context.config, context.get_x_argument(as_dictionary=True))
    sql = (_HERE / "0005_procedures.sql").read_text(encoding="utf-8")
    op.execute(sql.replace("@EMBEDDING_DIM@", str(int(dim))))


def downgrade() -> None:
    op.execute((_HERE / "0005_procedures_down.sql").read_text(encoding="utf-8"))
