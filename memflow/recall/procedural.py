"""Procedural recall: "how do we do X" answered with procedures and their steps in order.

One statement (sql/procedures.sql ``procedure_recall``) finds the nearest procedure summaries,
steps and context points of current procedures; a procedure costs its cheapest hit, steps and
context points paying a little more than the summary (they are parts, the summary is the whole).
The episodic mode calls :func:`with_how_to_procedure` for queries that ask how something is done.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

from memflow.db.filters import SearchFilter
from memflow.db.queries import q
from memflow.recall import sqlrecall, visibility
from memflow.recall.config import DisplayMode, RecallConfig
from memflow.recall.types import PathStep, SearchResponse, SearchResult, citations
from memflow.recall.visibility import Visible


def hit_cost(collection: str, cfg: RecallConfig) -> float:
    """What a hit in ``collection`` adds to its distance (the summary is the procedure itself)."""
    if collection == "Procedure_step_text":
        return cfg.procedure_step_cost
    if collection == "Procedure_context_text":
        return cfg.procedure_context_cost
    return 0.0


_NODE_KIND = {
    "Procedure_summary": "Procedure",
    "Procedure_step_text": "ProcedureStepPoint",
    "Procedure_context_text": "ProcedureContextPoint",
}
# Queries that ask how something is done (the episodic mode then also looks for procedures).
HOW_TO = re.compile(
    r"\bhow\s+(?:do|should|can|could|would|to)\b|\bwhat\s+(?:are|were)\s+the\s+steps\b|"
    r"\b(?:steps|procedure|runbook|playbook|checklist|instructions)\s+(?:to|for)\b|"
    r"\bwalk\s+me\s+through\b|步骤|流程|怎么|如何|怎样|操作手册|手册",
    re.IGNORECASE,
)


def asks_how(query: str) -> bool:
    """Does the query ask how something is done?"""
    return bool(HOW_TO.search(query))


@dataclass(frozen=True)
class ProcedureHit:
    procedure_id: uuid.UUID
    score: float
    collection: str
    text: str
    distance: float


def rank(rows: Sequence[Any], cfg: RecallConfig) -> list[ProcedureHit]:
    """Each procedure's cheapest hit (distance plus its collection's cost), best first."""
    best: dict[uuid.UUID, ProcedureHit] = {}
    for r in rows:
        score = float(r.distance) + hit_cost(r.collection, cfg)
        cur = best.get(r.procedure_id)
        if cur is None or score < cur.score:
            best[r.procedure_id] = ProcedureHit(
                r.procedure_id, score, r.collection, r.text, float(r.distance)
            )
    return sorted(best.values(), key=lambda h: (h.score, str(h.procedure_id)))


def procedure_context(name: str, version: int, steps: Sequence[str]) -> str:
    head = f"Procedure: {name}" + (f" (version {version})" if version > 1 else "")
    return "\n".join([head, *(f"  {i}. {s}" for i, s in enumerate(steps, start=1))])


def recall_procedures(
    conn: Connection,
    dataset_id: uuid.UUID,
    qvec: Any,
    k: int,
    top_k: int,
    cfg: RecallConfig,
    *,
    start_rank: int = 1,
    visible: Visible | None = None,
) -> list[SearchResult]:
    """The ``top_k`` best current procedures for the query vector, as results (the connection
    is bound to the dataset)."""
    seen = visibility.params(visible)
    rows = conn.execute(
        q("procedure_recall"), {"dataset_id": dataset_id, "q": qvec, "k": k, **seen}
    ).all()
    hits = rank(rows, cfg)[:top_k]
    if not hits:
        return []
    details = {
        r.id: r
        for r in conn.execute(
            q("procedure_details"),
            {
                "dataset_id": dataset_id,
                "ids": [h.procedure_id for h in hits],
                "max_sources": cfg.max_sources,
                **seen,
            },
        )
    }
    out: list[SearchResult] = []
    for i, h in enumerate(hits, start=start_rank):
        d = details[h.procedure_id]
        steps = list(d.steps or [])
        out.append(
            SearchResult(
                rank=i,
                kind="procedure",
                episode_id=d.episode_id or d.id,
                procedure_id=d.id,
                name=d.name,
                score=h.score,
                best_path="procedure",
                path=[
                    PathStep(
                        kind="node",
                        node_kind=_NODE_KIND[h.collection],  # type: ignore[arg-type]
                        text=h.text,
                        collection=h.collection,
                        distance=h.distance,
                        cost=h.score,
                    )
                ],
                context=procedure_context(d.name, int(d.version), steps),
                steps=steps,
                citations=citations(
                    [tuple(s) for s in (d.sources or [])][: cfg.procedure_max_citations]
                ),
            )
        )
    return out


def how_to_procedures(
    conn: Connection,
    dataset_id: uuid.UUID,
    qvec: Any,
    cfg: RecallConfig,
    visible: Visible | None = None,
) -> list[SearchResult]:
    """The best current procedure for a how-to query (the extra SQL step of an episodic search
    that :func:`with_how_to_procedure` then weighs against the episodes)."""
    sqlrecall.bind(conn, dataset_id, max(cfg.ef_search, cfg.wide_search_top_k))
    return recall_procedures(conn, dataset_id, qvec, cfg.wide_search_top_k, 1, cfg, visible=visible)


def with_how_to_procedure(
    found: list[SearchResult],
    response: SearchResponse,
    cfg: RecallConfig,
    top_k: int,
    *,
    budgeted: bool,
) -> SearchResponse:
    """An episodic response to a how-to query with the best current procedure (``found``)
    ranked first, when it is close enough (``cfg.how_to_procedure_max_score``) and beats the
    best episode by ``cfg.how_to_procedure_margin``; else the response as it was. A
    ``budgeted`` context (packed into a token budget) is kept as it is: the procedure is then
    in the results only."""
    best_episode = response.results[0].score if response.results else math.inf
    if (
        not found
        or found[0].score > cfg.how_to_procedure_max_score
        or found[0].score > best_episode - cfg.how_to_procedure_margin
    ):
        return response
    proc = found[0]
    results = [proc] + [r.model_copy(update={"rank": r.rank + 1}) for r in response.results]
    context = response.context
    if not budgeted:
        context = f"{proc.context}\n{context}" if context else proc.context
    note = f"the query asks how to do something: procedure {proc.name!r} is ranked first"
    return response.model_copy(
        update={"results": results[:top_k], "context": context, "notes": [*response.notes, note]}
    )


def procedures_step(
    conn: Connection,
    dataset_id: uuid.UUID,
    qvec: Any,
    cfg: RecallConfig,
    top_k: int,
    flt: SearchFilter | None = None,
) -> list[SearchResult]:
    """The SQL of ``mode="procedural"``: current procedures, best first, steps in order (only
    those ``flt``'s scope and where may see)."""
    sqlrecall.bind(conn, dataset_id, max(cfg.ef_search, cfg.wide_search_top_k))
    visible = visibility.resolve(conn, dataset_id, flt)
    return recall_procedures(
        conn, dataset_id, qvec, cfg.wide_search_top_k, top_k, cfg, visible=visible
    )


def procedural_response(
    query: str,
    results: list[SearchResult],
    display: DisplayMode,
    cfg: RecallConfig,
    timings: dict[str, float],
    pre: dict[str, Any],
) -> SearchResponse:
    """``mode="procedural"``'s response from :func:`procedures_step`'s results."""
    timings["total"] = round(sum(timings.values()), 3)
    return SearchResponse(
        query=query,
        mode="procedural",
        display=display,
        results=results,
        timings_ms=timings,
        context="\n\n".join(r.context for r in results),
        preprocessed=pre,
        token_counter=cfg.token_counter,
    )


__all__ = [
    "HOW_TO",
    "ProcedureHit",
    "asks_how",
    "hit_cost",
    "how_to_procedures",
    "procedural_response",
    "procedures_step",
    "rank",
    "recall_procedures",
    "with_how_to_procedure",
]
