"""Facts that change: valid and record time on nodes and edges, supersession, document versions,
and the change_log audit table.

Frozen once released: the literal DDL in 0004_temporal.sql (and its _down.sql).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_HERE = Path(__file__).parent


def upgrade() -> None:
    op.execute((_HERE / "0004_temporal.sql").read_text(encoding="utf-8"))


def downgrade() -> None:
    op.execute((_HERE / "0004_temporal_down.sql").read_text(encoding="utf-8"))
