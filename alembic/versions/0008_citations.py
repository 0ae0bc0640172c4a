"""Stored citations: each Episode, Facet and FacetPoint carries its provenance as search reads it
(``citations``: [chunk key, document id, document source, chunk ts] per cited chunk, in chunk
order) and the speaker of its first chunk, written with its citations, so the projection of a
search reads two columns instead of joining and ordering node_chunk, chunk and document for every
query. Existing stores are backfilled in place.

Frozen once released: the literal DDL in 0008_citations.sql (and its _down.sql).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_HERE = Path(__file__).parent


def upgrade() -> None:
    op.execute((_HERE / "0008_citations.sql").read_text(encoding="utf-8"))


def downgrade() -> None:
    op.execute((_HERE / "0008_citations_down.sql").read_text(encoding="utf-8"))
