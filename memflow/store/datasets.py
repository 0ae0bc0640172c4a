"""Dataset rows read by name or listed with their counts, on whichever server the caller picked
(the primary, or a read replica: these only read)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, Row

from memflow.db import engine as dbe
from memflow.db.queries import q


@dataclass(frozen=True)
class DatasetInfo:
    id: uuid.UUID
    name: str
    created_at: datetime
    episodes: int
    documents: int
    embedder: str | None = None  # the embedder its vectors come from (None: nothing written)


def dataset_row(engine: Engine, name: str) -> Row[Any] | None:
    with dbe.transaction(engine) as conn:
        return conn.execute(q("dataset_get"), {"name": name}).first()


def dataset_infos(engine: Engine) -> list[DatasetInfo]:
    out = []
    with dbe.transaction(engine) as conn:
        for r in conn.execute(q("dataset_list")).all():
            # Row-level security: counts are visible only with the transaction bound to r.id.
            conn.execute(q("bind_dataset"), {"dataset_id": str(r.id)})
            c = conn.execute(q("dataset_counts"), {"dataset_id": r.id}).one()
            out.append(
                DatasetInfo(
                    r.id, r.name, r.created_at, int(c.episodes), int(c.documents), r.embedder
                )
            )
    return out
