"""A search's plan (checked arguments, preprocessed query, query vector) and the filtered
visible-rows step every mode's transaction starts with; shared by :mod:`memflow.recall.search`
and the baseline modes (:mod:`memflow.recall.baseline`)."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memflow.db.filters import SearchFilter
from memflow.db.steps import Body
from memflow.recall import sqlrecall, visibility
from memflow.recall.config import DisplayMode, RecallConfig, SearchMode
from memflow.recall.preprocess import PreprocessedQuery
from memflow.recall.visibility import Visible


def ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


@dataclass
class SearchPlan:
    """A search's checked arguments, its preprocessed query and the query vector: everything
    the SQL needs, computed before the transaction (:func:`plan_search`)."""

    query: str
    mode: SearchMode
    display: DisplayMode
    top_k: int
    budget_tokens: int | None
    cfg: RecallConfig
    pq: PreprocessedQuery
    timings: dict[str, float]
    qvec: Any = None
    as_of: datetime | None = None
    include_history: bool = False
    known_at: datetime | None = None  # what the store knew then (memflow.recall.temporal.Clocks)
    filter: SearchFilter | None = None  # scope and where (memflow.db.filters); None: everything


def visible_body(dataset_id: uuid.UUID, plan: SearchPlan) -> Body[Visible | None]:
    """A filtered search's visible rows (memflow.recall.visibility); None without a filter."""
    if plan.filter is None:
        return None
    flt, ef = plan.filter, plan.cfg.ef_search
    t = time.perf_counter()
    yield lambda conn: sqlrecall.bind(conn, dataset_id, ef)
    visible: Visible = yield lambda conn: visibility.resolve(conn, dataset_id, flt)
    plan.timings["filter_sql"] = ms(t)
    return visible
