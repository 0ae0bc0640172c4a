"""Search orchestration: embed the query once, one bound transaction with the recall and
projection statements, then the pure stages (bonus, index, score, render), each timed."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import Engine

from memflow.context import StoreContext
from memflow.db.engine import transaction
from memflow.errors import InvalidInput
from memflow.recall import sqlrecall
from memflow.recall.config import (
    DISPLAY_MODES,
    SEARCH_MODES,
    DisplayMode,
    RecallConfig,
    SearchMode,
)
from memflow.recall.pipeline import (
    ScoredHits,
    episode_hits,
    hit_ids_for_projection,
    rank_scored,
    respond,
    score_hits,
)
from memflow.recall.preprocess import PreprocessedQuery, preprocess
from memflow.recall.render import pack_indexes
from memflow.recall.types import (
    Citation,
    ContextUnit,
    Hit,
    PathStep,
    SearchResponse,
    SearchResult,
    Subgraph,
    citations,
)
from memflow.recall.unitrules import QueryRules
from memflow.text.tokens import TokenCounter, token_counter


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def search(
    ctx: StoreContext,
    query: str,
    *,
    top_k: int | None = None,
    mode: SearchMode | None = None,
    display: DisplayMode | None = None,
    budget_tokens: int | None = None,
    now: datetime | None = None,
    config: RecallConfig | None = None,
) -> SearchResponse:
    """``top_k``, ``mode`` and ``display`` default to ``config``'s (``RecallConfig()``);
    ``budget_tokens`` to ``config.budget_tokens`` for ``highly_related``, else no budget."""
    engine, dataset_id = ctx.engine, ctx.dataset_id
    cfg = config or RecallConfig()
    top_k = cfg.top_k if top_k is None else top_k
    mode = cfg.mode if mode is None else mode
    if mode not in SEARCH_MODES:
        raise InvalidInput(f"unknown search mode {mode!r}: use one of {', '.join(SEARCH_MODES)}")
    shown = display or cfg.display
    if shown not in DISPLAY_MODES:
        raise InvalidInput(f"unknown display {shown!r}: use one of {', '.join(DISPLAY_MODES)}")
    if top_k < 1:
        raise InvalidInput(f"top_k must be at least 1, got {top_k}")
    if budget_tokens is not None and budget_tokens < 1:
        raise InvalidInput(f"budget_tokens must be at least 1, got {budget_tokens}")
    query = query.replace("\x00", "")
    timings: dict[str, float] = {}
    t = time.perf_counter()
    pq = preprocess(query, now, cfg.timezone, time_confidence_min=cfg.time_confidence_min)
    timings["preprocess"] = _ms(t)
    pre = pq.model_dump(mode="json")
    if mode == "lexical":
        return _baseline(
            engine, dataset_id, mode, query, None, top_k, shown, budget_tokens, cfg, timings, pre
        )
    t = time.perf_counter()
    qvec = ctx.embedder.embed_query(pq.vector_query)
    timings["embed"] = _ms(t)
    if mode == "vector":
        return _baseline(
            engine, dataset_id, mode, query, qvec, top_k, shown, budget_tokens, cfg, timings, pre
        )
    hits, graph, scored = retrieve(ctx, qvec, pq, cfg, top_k=top_k, display=shown, timings=timings)
    response = respond(
        hits,
        graph,
        pq,
        cfg,
        display=shown,
        top_k=top_k,
        budget_tokens=budget_tokens,
        timings_ms=timings,
        scored=scored,
    )
    response.timings_ms["total"] = round(
        sum(v for kk, v in response.timings_ms.items() if kk != "total"), 3
    )
    return response


def retrieve(
    ctx: StoreContext,
    qvec: Any,
    pq: PreprocessedQuery,
    cfg: RecallConfig,
    *,
    top_k: int,
    display: DisplayMode,
    timings: dict[str, float],
) -> tuple[list[Hit], Subgraph, ScoredHits]:
    """The SQL of an episodic search (one transaction): recall, bonuses, projection (and the
    detail expansion). Everything after it is pure (:func:`memflow.recall.pipeline.respond`),
    so recorded results can be re-ranked offline (benchmarks/locomo_replay.py)."""
    dataset_id = ctx.dataset_id
    k = cfg.recall_k(pq.time.confidence if pq.time else None)
    with transaction(ctx.engine) as conn:
        t = time.perf_counter()
        sqlrecall.bind(conn, dataset_id, max(cfg.ef_search, k))
        hits = sqlrecall.recall(conn, dataset_id, qvec, k)
        timings["recall_sql"] = _ms(t)
        t = time.perf_counter()
        scored = score_hits(hits, pq, cfg)
        timings["bonus"] = _ms(t)
        t = time.perf_counter()
        seeds = hit_ids_for_projection(scored, cfg, top_k=top_k)
        graph = sqlrecall.project(
            conn,
            dataset_id,
            seeds,
            cfg,
            leaves=episode_hits(scored),
            with_sources=display == "highly_related",
        )
        timings["projection_sql"] = _ms(t)
        # One more round trip for two displays, after scoring: detail shows the whole tree of
        # the chosen episodes; highly_related may use every point of the best episodes.
        expand = top_k if display == "detail" else cfg.expand_episodes
        if display != "summary" and expand:
            t = time.perf_counter()
            best = rank_scored(scored, graph, pq, cfg, expand, trace=0)
            chosen = [b.episode_id for b in best]
            if display == "detail":
                graph = sqlrecall.expand(conn, dataset_id, chosen, graph, cfg)
            else:
                graph = sqlrecall.expand_points(conn, dataset_id, qvec, chosen, graph)
            timings["expand_sql"] = _ms(t)
    return hits, graph, scored


def _unit_header(name: str | None, when: datetime | None) -> str:
    """A baseline unit's prefix: its episode's date (the turn text names its speaker)."""
    return f"[{when.strftime('%Y-%m-%d')}]" if when else ""


def _pack(
    units: Sequence[tuple[str, str]], budget: int, counter: TokenCounter
) -> tuple[str, list[int]]:
    """Units (header, text) in rank order, packed into ``budget`` tokens by
    :func:`memflow.recall.render.pack_indexes` (every line pays its header); returns the context
    and the indexes of the packed units."""
    items = [(i, counter(text), counter(head)) for i, (head, text) in enumerate(units)]
    kept = pack_indexes(items, budget, shared_headers=False)
    lines = [f"{units[i][0]} {units[i][1]}" if units[i][0] else units[i][1] for i in kept]
    return "\n".join(lines), kept


def _context(
    units: Sequence[tuple[str, str]],
    results: Sequence[SearchResult],
    display: DisplayMode,
    budget: int,
    listed: list[int],
    counter: TokenCounter,
) -> tuple[str, list[int]]:
    if display == "highly_related":
        return _pack(units, budget, counter)
    return "\n".join(res.context for res in results), listed


@dataclass(frozen=True)
class _Unit:
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
    conn: Any, dataset_id: uuid.UUID, qvec: Any, k: int, include_facets: bool
) -> list[_Unit]:
    return [
        _Unit(
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
        for r in sqlrecall.vector_units(conn, dataset_id, qvec, k, include_facets=include_facets)
    ]


def _lexical_units(conn: Any, dataset_id: uuid.UUID, query: str, k: int) -> list[_Unit]:
    return [
        _Unit(
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
        for r in sqlrecall.lexical_units(conn, dataset_id, query, k)
    ]


def _best_per_episode(units: Sequence[_Unit], top_k: int) -> list[int]:
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


def _baseline(
    engine: Engine,
    dataset_id: uuid.UUID,
    mode: SearchMode,
    query: str,
    qvec: Any,
    top_k: int,
    display: DisplayMode,
    budget: int | None,
    cfg: RecallConfig,
    timings: dict[str, float],
    pre: dict[str, Any],
) -> SearchResponse:
    """The ``vector`` and ``lexical`` modes: ranked units, no graph. Results are episodes, each
    at the rank of its best unit (an episode is listed once); a ``highly_related`` context packs
    the units themselves."""
    k = max(top_k, cfg.wide_search_top_k if display == "highly_related" else 3 * top_k)
    with transaction(engine) as conn:
        t = time.perf_counter()
        sqlrecall.bind(conn, dataset_id, max(cfg.ef_search, k))
        if mode == "vector":
            units = _vector_units(conn, dataset_id, qvec, k, cfg.vector_facets)
            if cfg.vector_unit_rules:  # the episodic mode's query-aware unit rules, for comparison
                rules = QueryRules.build(query, (u.speaker for u in units))
                units.sort(key=lambda u: u.score + rules.adjustment(u.text, u.speaker, cfg))
        else:
            units = _lexical_units(conn, dataset_id, query, k)
        timings["recall_sql"] = _ms(t)
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
    counter = token_counter(cfg.token_counter)
    context, kept = _context(lines, results, display, budget or cfg.budget_tokens, listed, counter)
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
    timings["render"] = _ms(t)
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
        token_counter=cfg.token_counter,
    )
