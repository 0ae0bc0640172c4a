"""Row-level security: every table is readable and writable only for the dataset bound to the
transaction (``SET LOCAL memflow.dataset_id``), for the ``memflow_app`` role memflow uses.

Frozen: the literal DDL of the release (0002_row_level_security.sql, and its _down.sql).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_HERE = Path(__file__).parent


def upgrade() -> None:
    op.execute((_HERE / "0002_row_level_security.sql").read_text(encoding="utf-8"))


def downgrade() -> None:
    op.execute((_HERE / "0002_row_level_security_down.sql").read_text(encoding="utf-8"))
