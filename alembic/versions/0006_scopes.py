"""Scopes and metadata: who a document belongs to (user, agent, session) and the caller's JSON
metadata, both on memflow.document; every node, edge and embedding row inherits them through its
provenance (node_source, edge_source), so search filters on them without copies to maintain.

Frozen once released: the literal DDL in 0006_scopes.sql (and its _down.sql).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_HERE = Path(__file__).parent


def upgrade() -> None:
    op.execute((_HERE / "0006_scopes.sql").read_text(encoding="utf-8"))


def downgrade() -> None:
    op.execute((_HERE / "0006_scopes_down.sql").read_text(encoding="utf-8"))
