"""Search orchestration: embed the query once, one bound transaction with the recall and
projection statements, then the pure stages (bonus, index, score, render), each timed."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from typing import Any

from memflow.bounds import check_text
from memflow.context import StoreContext
from memflow.db.filters import search_filter
from memflow.db.steps import Body, Tx, run_tx
from memflow.embed.base import Embedder
from memflow.errors import InvalidInput
from memflow.recall import procedural, sqlrecall, temporal
from memflow.recall.baseline import baseline_response, baseline_units
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
from memflow.recall.plan import SearchPlan, ms, visible_body
from memflow.recall.preprocess import PreprocessedQuery, preprocess
from memflow.recall.tags import bare_episodes, document_ids, with_tags
from memflow.recall.types import (
    Hit,
    SearchResponse,
    Subgraph,
)
from memflow.recall.visibility import Visible, result_documents


def plan_search(
    embedder: Embedder,
    query: str,
    *,
    top_k: int | None = None,
    mode: SearchMode | None = None,
    display: DisplayMode | None = None,
    budget_tokens: int | None = None,
    now: datetime | None = None,
    config: RecallConfig | None = None,
    as_of: datetime | None = None,
    include_history: bool = False,
    scope: dict[str, str] | None = None,
    where: dict[str, Any] | None = None,
    known_at: datetime | None = None,
) -> SearchPlan:
    """Check the arguments, preprocess the query and embed it (CPU only, no database).
    ``scope`` and ``where``: memflow.db.filters (checked here, before any SQL)."""
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
    if mode == "procedural" and (as_of is not None or known_at is not None or include_history):
        raise InvalidInput(
            "procedures have no validity over time: drop as_of/known_at/include_history, or "
            "search mode='episodic' (or 'vector', 'lexical') for facts as they were"
        )
    flt = search_filter(scope, where)
    query = check_text(query, "the query").replace("\x00", "")
    timings: dict[str, float] = {}
    t = time.perf_counter()
    pq = preprocess(
        query,
        now,
        cfg.timezone,
        time_confidence_min=cfg.time_confidence_min,
        short_query_chars=cfg.short_query_chars,
    )
    timings["preprocess"] = ms(t)
    as_of, known_at = _aware(as_of), _aware(known_at)
    plan = SearchPlan(query, mode, shown, top_k, budget_tokens, cfg, pq, timings)
    plan.as_of, plan.include_history, plan.filter = as_of, include_history, flt
    plan.known_at = known_at
    if mode != "lexical":
        t = time.perf_counter()
        plan.qvec = embedder.embed_query(pq.vector_query)
        timings["embed"] = ms(t)
    return plan


def _aware(when: datetime | None) -> datetime | None:
    return when.replace(tzinfo=UTC) if when is not None and when.tzinfo is None else when


def search_body(dataset_id: uuid.UUID, plan: SearchPlan) -> Body[Any]:
    """The transaction of a search: what :func:`finish_search` turns into the response (with
    the scope and metadata of the documents it cites)."""
    visible = (yield from visible_body(dataset_id, plan)) if plan.mode == "episodic" else None
    fetched = yield from _search_rows(dataset_id, plan, visible)
    # Episodes written from drafts have no chunks, so no citations: their source documents
    # (those the filter lets through) give their scope and metadata.
    cited, bare = document_ids(fetched), bare_episodes(fetched)
    allowed = None if visible is None else visible.documents
    tags, by_node = (
        (yield lambda conn: result_documents(conn, dataset_id, cited, bare, allowed))
        if cited or bare
        else ({}, {})
    )
    return fetched, (tags, by_node)


def _search_rows(dataset_id: uuid.UUID, plan: SearchPlan, visible: Visible | None) -> Body[Any]:
    if plan.mode == "episodic":
        hits, graph, scored = yield from retrieve_body(
            dataset_id,
            plan.qvec,
            plan.pq,
            plan.cfg,
            top_k=plan.top_k,
            display=plan.display,
            timings=plan.timings,
            as_of=plan.as_of,
            include_history=plan.include_history,
            visible=visible,
            known_at=plan.known_at,
        )
        how_to = None
        if plan.cfg.how_to_procedure_max_score > 0 and procedural.asks_how(plan.query):
            t = time.perf_counter()
            qvec, cfg = plan.qvec, plan.cfg
            how_to = yield lambda conn: procedural.how_to_procedures(
                conn, dataset_id, qvec, cfg, visible
            )
            plan.timings["procedures_sql"] = ms(t)
        return hits, graph, scored, how_to
    if plan.mode == "procedural":
        qvec, cfg, k, flt = plan.qvec, plan.cfg, plan.top_k, plan.filter
        return (yield lambda conn: procedural.procedures_step(conn, dataset_id, qvec, cfg, k, flt))
    return (yield from baseline_units(dataset_id, plan))


def finish_search(plan: SearchPlan, fetched: Any) -> SearchResponse:
    """The pure stages after the SQL (scoring, rendering), CPU only."""
    rows, (tags, by_node) = fetched
    return with_tags(_finish(plan, rows), tags, by_node)


def _finish(plan: SearchPlan, fetched: Any) -> SearchResponse:
    if plan.mode == "procedural":
        pre = plan.pq.model_dump(mode="json")
        return procedural.procedural_response(
            plan.query, fetched, plan.display, plan.cfg, plan.timings, pre
        )
    if plan.mode != "episodic":
        return baseline_response(plan, fetched)
    hits, graph, scored, how_to = fetched
    response = respond(
        hits,
        graph,
        plan.pq,
        plan.cfg,
        display=plan.display,
        top_k=plan.top_k,
        budget_tokens=plan.budget_tokens,
        timings_ms=plan.timings,
        scored=scored,
    )
    response = temporal.decorate(response, graph.times)
    if how_to is not None:
        budgeted = plan.display == "highly_related" or plan.budget_tokens is not None
        response = procedural.with_how_to_procedure(
            how_to, response, plan.cfg, plan.top_k, budgeted=budgeted
        )
    response.timings_ms["total"] = round(
        sum(v for kk, v in response.timings_ms.items() if kk != "total"), 3
    )
    return response


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
    as_of: datetime | None = None,
    include_history: bool = False,
    scope: dict[str, str] | None = None,
    where: dict[str, Any] | None = None,
    known_at: datetime | None = None,
) -> SearchResponse:
    """``top_k``, ``mode`` and ``display`` default to ``config``'s (``RecallConfig()``);
    ``budget_tokens`` to ``config.budget_tokens`` for ``highly_related``, else no budget.
    ``as_of`` (the sources' dates), ``known_at`` (the store's write clock) and
    ``include_history``: :mod:`memflow.recall.temporal` (episodic mode ranks by validity;
    ``vector`` and ``lexical`` leave out what came later and mark what was replaced, in their
    own order; ``procedural`` refuses them: InvalidInput).
    ``scope`` and ``where``: only what documents of that scope and metadata support."""
    plan = plan_search(
        ctx.embedder,
        query,
        top_k=top_k,
        mode=mode,
        display=display,
        budget_tokens=budget_tokens,
        now=now,
        config=config,
        as_of=as_of,
        include_history=include_history,
        scope=scope,
        where=where,
        known_at=known_at,
    )
    fetched = run_tx(ctx.engine, Tx(lambda: search_body(ctx.dataset_id, plan)))
    return finish_search(plan, fetched)


def retrieve(
    ctx: StoreContext,
    qvec: Any,
    pq: PreprocessedQuery,
    cfg: RecallConfig,
    *,
    top_k: int,
    display: DisplayMode,
    timings: dict[str, float],
    as_of: datetime | None = None,
    include_history: bool = False,
    known_at: datetime | None = None,
) -> tuple[list[Hit], Subgraph, ScoredHits]:
    """The SQL of an episodic search (one transaction): recall, bonuses, projection (and the
    detail expansion). Everything after it is pure (:func:`memflow.recall.pipeline.respond`),
    so recorded results can be re-ranked offline (benchmarks/locomo_replay.py)."""
    body = lambda: retrieve_body(  # noqa: E731
        ctx.dataset_id, qvec, pq, cfg, top_k=top_k, display=display, timings=timings,
        as_of=as_of, include_history=include_history, known_at=known_at,
    )  # fmt: skip
    return run_tx(ctx.engine, Tx(body))


def retrieve_body(
    dataset_id: uuid.UUID,
    qvec: Any,
    pq: PreprocessedQuery,
    cfg: RecallConfig,
    *,
    top_k: int,
    display: DisplayMode,
    timings: dict[str, float],
    as_of: datetime | None = None,
    include_history: bool = False,
    visible: Visible | None = None,
    known_at: datetime | None = None,
) -> Body[tuple[list[Hit], Subgraph, ScoredHits]]:
    """:func:`retrieve` as a transaction body: the SQL steps, and the scoring between them.
    Validity (:mod:`memflow.recall.temporal`) adjusts the hits and marks the graph."""
    k = cfg.recall_k(pq.time.confidence if pq.time else None)
    t = time.perf_counter()
    yield lambda conn: sqlrecall.bind(conn, dataset_id, max(cfg.ef_search, k))
    hits: list[Hit] = yield lambda conn: sqlrecall.recall(conn, dataset_id, qvec, k, visible)
    timings["recall_sql"] = ms(t)
    t = time.perf_counter()
    node_ids = [h.node_id for h in hits if h.node_id is not None]
    validity = yield lambda conn: temporal.load(conn, dataset_id, node_ids, as_of, known_at)
    if validity is not None:
        recalled = hits
        closed = yield lambda conn: temporal.closed_edge_hashes(
            conn, dataset_id, recalled, validity
        )
        hits = temporal.adjust_hits(hits, validity, pq.original, cfg, closed)
        timings["validity_sql"] = ms(t)
    t = time.perf_counter()
    scored = score_hits(hits, pq, cfg)
    timings["bonus"] = ms(t)
    t = time.perf_counter()
    seeds = hit_ids_for_projection(scored, cfg, pq, top_k=top_k)
    graph: Subgraph = yield lambda conn: sqlrecall.project(
        conn,
        dataset_id,
        seeds,
        cfg,
        leaves=episode_hits(scored),
        with_sources=display == "highly_related",
        visible=visible,
    )
    if validity is not None:
        projected = graph
        graph = yield lambda conn: temporal.mark_graph(
            conn, dataset_id, projected, validity, include_history=include_history
        )
    timings["projection_sql"] = ms(t)
    # One more round trip for two displays, after scoring: detail shows the whole tree of
    # the chosen episodes; highly_related may use every point of the best episodes.
    expand = top_k if display == "detail" else cfg.expand_episodes
    if display != "summary" and expand:
        t = time.perf_counter()
        best = rank_scored(scored, graph, pq, cfg, expand, trace=0)
        chosen = [b.episode_id for b in best]
        shown = graph
        if display == "detail":
            graph = yield lambda conn: sqlrecall.expand(
                conn, dataset_id, chosen, shown, cfg, visible
            )
        else:
            graph = yield lambda conn: sqlrecall.expand_points(
                conn, dataset_id, qvec, chosen, shown, cfg, visible
            )
        if validity is not None:
            expanded = graph
            graph = yield lambda conn: temporal.mark_graph(
                conn, dataset_id, expanded, validity, include_history=include_history
            )
        timings["expand_sql"] = ms(t)
    t = time.perf_counter()
    timed = graph
    graph = yield lambda conn: temporal.node_times(conn, dataset_id, timed)
    timings["validity_sql"] = timings.get("validity_sql", 0.0) + ms(t)
    return hits, graph, scored
