"""The ``vector`` and ``lexical`` baseline modes: ranked units (turns, facet texts, chunks)
without the graph, each episode listed once at the rank of its best unit."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from memflow.db.steps import Body
from memflow.recall import sqlrecall, temporal
from memflow.recall.config import DisplayMode
from memflow.recall.options import HIGHLY_RELATED_BUDGET
from memflow.recall.plan import SearchPlan, ms, visible_body
from memflow.recall.render import pack_indexes
from memflow.recall.roles import RoleRule
from memflow.recall.types import (
    Citation,
    ContextUnit,
    PathStep,
    SearchResponse,
    SearchResult,
    citations,
)
from memflow.recall.unitrules import QueryRules
from memflow.recall.visibility import Visible
from memflow.text.tokens import TokenCounter, token_counter


def _unit_header(name: str | None, when: datetime | None) -> str:
    """A baseline unit's prefix: its episode's date (the turn text names its speaker)."""
    return f"[{when.strftime('%Y-%m-%d')}]" if when else ""


def _pack(
    units: Sequence[tuple[str, str]], budget: int, counter: TokenCounter, floor: int
) -> tuple[str, list[int]]:
    """Units (header, text) in rank order, packed into ``budget`` tokens by
    :func:`memflow.recall.render.pack_indexes` (every line pays its header); returns the context
    and the indexes of the packed units."""
    items = [(i, counter(text), counter(head)) for i, (head, text) in enumerate(units)]
    kept = pack_indexes(items, budget, shared_headers=False, floor=floor)
    lines = [f"{units[i][0]} {units[i][1]}" if units[i][0] else units[i][1] for i in kept]
    return "\n".join(lines), kept


def _context(
    units: Sequence[tuple[str, str]],
    results: Sequence[SearchResult],
    display: DisplayMode,
    budget: int | None,
    listed: list[int],
    counter: TokenCounter,
    floor: int,
) -> tuple[str, list[int]]:
    if display == "highly_related":
        return _pack(units, budget or HIGHLY_RELATED_BUDGET, counter, floor)
    return "\n".join(res.context for res in results), listed


@dataclass(frozen=True)
class BaselineUnit:
    """One ranked unit of a baseline mode (a turn, a facet text or a chunk)."""

    node_id: uuid.UUID | None
    node_kind: Literal["FacetPoint", "Facet", "chunk"]
    episode_id: uuid.UUID | None
    episode_name: str
    when: datetime | None
    text: str
    collection: str
    score: float  # smaller is better
    distance: float | None
    citations: list[Citation]
    speaker: str | None = None


def _vector_units(
    conn: Any,
    dataset_id: uuid.UUID,
    qvec: Any,
    k: int,
    include_facets: bool,
    visible: Visible | None,
    max_sources: int,
) -> list[BaselineUnit]:
    return [
        BaselineUnit(
            node_id=r.node_id,
            node_kind="FacetPoint" if r.collection == "FacetPoint_search_text" else "Facet",
            episode_id=r.episode_id,
            episode_name=r.episode_name or "",
            when=r.time_start,
            text=r.text,
            collection=r.collection,
            score=float(r.distance),
            distance=float(r.distance),
            citations=citations(r.sources or []),
            speaker=r.speaker,
        )
        for r in sqlrecall.vector_units(
            conn,
            dataset_id,
            qvec,
            k,
            max_sources=max_sources,
            include_facets=include_facets,
            visible=visible,
        )
    ]


def _lexical_units(
    conn: Any, dataset_id: uuid.UUID, query: str, k: int, visible: Visible | None
) -> list[BaselineUnit]:
    return [
        BaselineUnit(
            node_id=r.point_id,
            node_kind="chunk",
            episode_id=r.episode_id,
            episode_name=r.episode_name or "",
            when=r.time_start,
            text=r.text,
            collection="chunk_fts",
            score=1.0 - float(r.rank),  # a cost like the other modes' (rank is 0..1)
            distance=None,
            citations=[
                Citation(document_id=r.document_id, source=r.document_source, key=r.key, ts=r.ts)
            ],
        )
        for r in sqlrecall.lexical_units(conn, dataset_id, query, k, visible)
    ]


def _best_per_episode(units: Sequence[BaselineUnit], top_k: int) -> list[int]:
    """The indexes of the first (best) unit of each episode, in rank order, at most ``top_k``
    (units without an episode stay)."""
    seen: set[uuid.UUID] = set()
    out: list[int] = []
    for i, u in enumerate(units):
        if u.episode_id is None or u.episode_id not in seen:
            out.append(i)
            if u.episode_id is not None:
                seen.add(u.episode_id)
    return out[:top_k]


def baseline_units(dataset_id: uuid.UUID, plan: SearchPlan) -> Body[list[BaselineUnit]]:
    """The ``vector`` and ``lexical`` modes' transaction: ranked units."""
    cfg, mode, query = plan.cfg, plan.options.mode, plan.query
    k = _baseline_k(plan)
    visible = yield from visible_body(dataset_id, plan)
    t = time.perf_counter()
    yield lambda conn: sqlrecall.bind(conn, dataset_id, max(cfg.ef_search, k))
    units: list[BaselineUnit]
    if mode == "vector":
        units = yield lambda conn: _vector_units(
            conn, dataset_id, plan.qvec, k, cfg.vector_facets, visible, cfg.max_sources
        )
        if cfg.vector_unit_rules:  # the episodic mode's query-aware unit rules, for comparison
            rules = QueryRules.build(query, (u.speaker for u in units))
            role = RoleRule.build(query, (u.speaker for u in units))
            units.sort(
                key=lambda u: (
                    u.score
                    + rules.adjustment(u.text, u.speaker, cfg)
                    + role.adjustment(u.speaker, cfg)
                )
            )
    else:
        units = yield lambda conn: _lexical_units(conn, dataset_id, query, k, visible)
    opts = plan.options
    found, as_of, history, known_at = units, opts.as_of, opts.include_history, opts.known_at
    texts = yield lambda conn: temporal.unit_texts(
        conn, dataset_id, [(u.node_id, u.text) for u in found], as_of, history, known_at
    )
    units = [
        replace(u, text=text) for u, text in zip(found, texts, strict=True) if text is not None
    ]
    plan.timings["recall_sql"] = ms(t)
    return units


def _baseline_k(plan: SearchPlan) -> int:
    cfg, top_k = plan.cfg, plan.options.top_k
    highly_related = plan.options.display == "highly_related"
    wide = cfg.wide_search_top_k if highly_related else cfg.baseline_wide_factor * top_k
    return max(top_k, wide)


def baseline_response(plan: SearchPlan, units: list[BaselineUnit]) -> SearchResponse:
    """The ``vector`` and ``lexical`` modes' response: ranked units, no graph. Results are
    episodes, each at the rank of its best unit (an episode is listed once); a
    ``highly_related`` context packs the units themselves."""
    opts, query, timings = plan.options, plan.query, plan.timings
    mode, top_k, display, budget = opts.mode, opts.top_k, opts.display, opts.budget_tokens
    pre = plan.pq.model_dump(mode="json")
    t = time.perf_counter()
    listed = _best_per_episode(units, top_k)
    results = [
        SearchResult(
            rank=i,
            episode_id=u.episode_id or u.node_id or uuid.UUID(int=0),
            name=u.episode_name,
            score=u.score,
            best_path="facet" if u.node_kind == "Facet" else "point",
            best_point_id=u.node_id if u.node_kind != "Facet" else None,
            best_facet_id=u.node_id if u.node_kind == "Facet" else None,
            path=[
                PathStep(
                    kind="node",
                    node_kind="Facet" if u.node_kind == "Facet" else "FacetPoint",
                    id=u.node_id,
                    text=u.text,
                    collection=u.collection,
                    distance=u.distance,
                    cost=u.score,
                )
            ],
            context=u.text,
            time=u.when.date().isoformat() if u.when else None,
            citations=u.citations,
        )
        for i, u in enumerate((units[j] for j in listed), start=1)
    ]
    lines = [(_unit_header(u.episode_name, u.when), u.text) for u in units]
    counter = token_counter(opts.token_counter)
    context, kept = _context(
        lines, results, display, budget, listed, counter, plan.cfg.pack_ladder_floor
    )
    context_units = [
        ContextUnit(
            node_id=units[i].node_id,
            episode_id=units[i].episode_id,
            kind=units[i].node_kind,
            sources=[c.key for c in units[i].citations],
            citations=units[i].citations,
            tokens=counter(units[i].text),
            header_tokens=counter(lines[i][0]),
        )
        for i in kept
    ]
    timings["render"] = ms(t)
    timings["total"] = round(sum(timings.values()), 3)
    return SearchResponse(
        query=query,
        mode=mode,
        context_units=context_units,
        display=display,
        results=results,
        timings_ms=timings,
        context=context,
        preprocessed=pre,
        token_counter=opts.token_counter,
    )
