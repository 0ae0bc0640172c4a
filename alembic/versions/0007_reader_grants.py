"""Readers bound by their grants: row-level security admits a dataset to a role other than the
store's owner and memflow_app only when that role (or a role it belongs to) was granted it, so a
psql reader who sets ``memflow.dataset_id`` to another dataset sees nothing of it.

Frozen once released: the literal DDL in 0007_reader_grants.sql (and its _down.sql).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_HERE = Path(__file__).parent


def upgrade() -> None:
    op.execute((_HERE / "0007_reader_grants.sql").read_text(encoding="utf-8"))


def downgrade() -> None:
    op.execute((_HERE / "0007_reader_grants_down.sql").read_text(encoding="utf-8"))
