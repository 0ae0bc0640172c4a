"""Dataset readers: plain roles read one dataset in psql after SELECT memflow.use_dataset('NAME').

Frozen once released: the literal DDL in 0003_dataset_readers.sql (and its _down.sql).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_HERE = Path(__file__).parent


def upgrade() -> None:
    op.execute((_HERE / "0003_dataset_readers.sql").read_text(encoding="utf-8"))


def downgrade() -> None:
    op.execute((_HERE / "0003_dataset_readers_down.sql").read_text(encoding="utf-8"))
