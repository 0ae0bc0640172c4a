"""Search orchestration: :func:`search_op`, the one search both APIs and the doors run -- the
options resolved and the query embedded once (:func:`plan_search`), one bound read transaction
with the recall and projection statements (:func:`search_body`), then the pure stages (bonus,
index, score, render, budget), each timed (:func:`finish_search`)."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from typing import Any

from memflow.bounds import check_text
from memflow.context import StoreContext
from memflow.db.filters import search_filter
from memflow.db.steps import Body, Op, Tx
from memflow.embed.base import Embedder
from memflow.errors import InvalidInput
from memflow.recall import graphcache, procedural, sqlrecall, temporal
from memflow.recall.baseline import baseline_response, baseline_units
from memflow.recall.budget import honour_budget
from memflow.recall.config import RecallConfig
from memflow.recall.options import SearchOptions
from memflow.recall.pipeline import (
    FirstRanking,
    ScoredHits,
    asked,
    episode_hits,
    expansion_unscored,
    hit_ids_for_projection,
    rank_scored,
    respond,
    score_hits,
)
from memflow.recall.plan import SearchPlan, ms, visible_body
from memflow.recall.preprocess import preprocess
from memflow.recall.rows import (
    BaselineRows,
    EpisodicRows,
    Fetched,
    ProceduralRows,
    SearchRows,
    cited,
)
from memflow.recall.scoring import RelationshipIndex
from memflow.recall.tags import with_tags
from memflow.recall.types import Hit, SearchResponse, Subgraph
from memflow.recall.visibility import Documents, Visible, result_documents
from memflow.store.datasets import DatasetRef, check_same_embedder


def plan_search(embedder: Embedder, query: str, options: SearchOptions) -> SearchPlan:
    """Resolve the options, preprocess the query and embed it (CPU only, no database).
    ``scope`` and ``where``: memflow.db.filters (checked here, before any SQL)."""
    opts = options.resolved()
    stamps = (opts.as_of, opts.known_at)
    if opts.mode == "procedural" and (any(t is not None for t in stamps) or opts.include_history):
        raise InvalidInput(
            "procedures have no validity over time: drop as_of/known_at/include_history, or "
            "search mode='episodic' (or 'vector', 'lexical') for facts as they were"
        )
    flt = search_filter(opts.scope, opts.where)
    cfg = opts.config or RecallConfig()
    if options.budget_tokens is None and cfg.fill_budget:
        # Only a budget the caller gives is filled: the default one is a cap, and the context
        # keeps to the evidence within the relevance cut-off.
        cfg = cfg.model_copy(update={"fill_budget": False})
    query = check_text(query, "the query").replace("\x00", "")
    timings: dict[str, float] = {}
    t = time.perf_counter()
    pq = preprocess(
        query,
        opts.now,
        opts.timezone,
        time_confidence_min=cfg.time_confidence_min,
        short_query_chars=cfg.short_query_chars,
    )
    timings["preprocess"] = ms(t)
    as_of, known_at = (_aware(when) for when in stamps)
    opts = opts.model_copy(update={"as_of": as_of, "known_at": known_at})
    plan = SearchPlan(query, opts, cfg, pq, timings, filter=flt)
    if opts.mode != "lexical":
        t = time.perf_counter()
        plan.qvec = embedder.embed_query(pq.vector_query)
        timings["embed"] = ms(t)
    return plan


def _aware(when: datetime | None) -> datetime | None:
    return when.replace(tzinfo=UTC) if when is not None and when.tzinfo is None else when


def search_op(
    ctx: StoreContext, ref: DatasetRef, query: str, options: SearchOptions
) -> Op[SearchResponse]:
    """One search of the dataset ``ref``: plan it (the query embedded once), one read
    transaction, then the pure stages and the budget -- what ``Dataset.search`` returns.
    EmbedderMismatch when the dataset holds another embedder's vectors."""
    if ref.embedder is not None:
        check_same_embedder(ref.name, ref.embedder, ctx.embedder.name)
    if options.datasets is not None:
        raise InvalidInput(
            "a dataset's search covers that dataset: to search several, use "
            "Memory.search(query, datasets=[...])"
        )
    plan = plan_search(ctx.embedder, query, options)
    fetched = yield Tx(lambda: search_body(ctx.dataset_id, plan), read=True)
    return finish_search(plan, fetched)


def search_body(dataset_id: uuid.UUID, plan: SearchPlan) -> Body[Fetched]:
    """The transaction of a search: the rows :func:`finish_search` turns into the response, with
    the scope and metadata of the documents they cite."""
    visible = (
        (yield from visible_body(dataset_id, plan)) if plan.options.mode == "episodic" else None
    )
    found = Documents()  # an episodic search's, read with its graph
    rows = yield from _search_rows(dataset_id, plan, visible, found)
    # The documents of the rest (procedures, baseline units) in one statement more.
    docs = cited(rows) - found.tags.keys()
    if docs:
        tags = yield lambda conn: result_documents(conn, dataset_id, docs)
        found.tags.update(tags)
    return Fetched(rows, found.tags, found.by_episode())


def _search_rows(
    dataset_id: uuid.UUID, plan: SearchPlan, visible: Visible | None, docs: Documents
) -> Body[SearchRows]:
    if plan.options.mode == "episodic":
        hits, graph, scored, index, first = yield from retrieve_body(
            dataset_id, plan, visible, docs
        )
        how_to = None
        if plan.cfg.how_to_procedure_max_score > 0 and procedural.asks_how(plan.query):
            t = time.perf_counter()
            qvec, cfg = plan.qvec, plan.cfg
            how_to = yield lambda conn: procedural.how_to_procedures(
                conn, dataset_id, qvec, cfg, visible
            )
            plan.timings["procedures_sql"] = ms(t)
        return EpisodicRows(hits, graph, scored, how_to, index, first)
    if plan.options.mode == "procedural":
        qvec, cfg, k, flt = plan.qvec, plan.cfg, plan.options.top_k, plan.filter
        found = yield lambda conn: procedural.procedures_step(conn, dataset_id, qvec, cfg, k, flt)
        return ProceduralRows(found)
    return BaselineRows((yield from baseline_units(dataset_id, plan)))


def finish_search(plan: SearchPlan, fetched: Fetched) -> SearchResponse:
    """The pure stages after the SQL (scoring, rendering, the token budget), CPU only."""
    return honour_budget(finish_rows(plan, fetched), plan.options.budget_tokens)


def finish_rows(plan: SearchPlan, fetched: Fetched) -> SearchResponse:
    """:func:`finish_search` before the budget (several datasets' responses are merged first,
    :mod:`memflow.recall.multi`)."""
    return with_tags(_respond(plan, fetched.rows), fetched.tags, fetched.by_node)


def _respond(plan: SearchPlan, rows: SearchRows) -> SearchResponse:
    if isinstance(rows, ProceduralRows):
        pre = plan.pq.model_dump(mode="json")
        return procedural.procedural_response(
            plan.query, rows.procedures, plan.options, plan.timings, pre
        )
    if isinstance(rows, BaselineRows):
        return baseline_response(plan, rows.units)
    response = respond(
        rows.hits, rows.graph, plan.pq, plan.cfg, plan.options, timings_ms=plan.timings,
        scored=rows.scored, index=rows.index, first=rows.first,
    )  # fmt: skip
    response = temporal.decorate(response, rows.graph.times)
    if rows.how_to is not None:
        budgeted = plan.options.budget_tokens is not None  # (highly_related always has one)
        response = procedural.with_how_to_procedure(
            rows.how_to, response, plan.cfg, plan.options.top_k, budgeted=budgeted
        )
    response.timings_ms["total"] = round(
        sum(v for kk, v in response.timings_ms.items() if kk != "total"), 3
    )
    return response


def retrieve_body(
    dataset_id: uuid.UUID,
    plan: SearchPlan,
    visible: Visible | None = None,
    docs: Documents | None = None,
) -> Body[tuple[list[Hit], Subgraph, ScoredHits, RelationshipIndex | None, FirstRanking | None]]:
    """The SQL of an episodic search, as a transaction body: recall, bonuses, projection (and
    the detail expansion), with the scoring between them. Everything after it is pure
    (:func:`memflow.recall.pipeline.respond`), so recorded results can be re-ranked offline
    (benchmarks/locomo_replay.py). Validity (:mod:`memflow.recall.temporal`) adjusts the hits
    and marks the graph. ``docs`` collects the documents of the graph's nodes (their scope and
    metadata, and the source documents of episodes without citations)."""
    qvec, pq, cfg, timings = plan.qvec, plan.pq, plan.cfg, plan.timings
    opts = plan.options
    top_k, display, include_history = opts.top_k, opts.display, opts.include_history
    as_of, known_at = opts.as_of, opts.known_at
    k = cfg.recall_k(pq.time.confidence if pq.time else None)
    t = time.perf_counter()
    exact = yield lambda conn: sqlrecall.bind(
        conn, dataset_id, max(cfg.ef_search, k), cfg.exact_recall_nodes, cfg.exact_recall_share
    )
    # Unfiltered, the dataset's graph cached by this engine at the recall's revision answers the
    # projection and the expansion (memflow.recall.graphcache); filtered, the SQL does.
    store: graphcache.GraphStore | None = (
        None if visible is not None else (yield lambda conn: graphcache.store_of(conn.engine))
    )
    points = store is not None and display == "highly_related" and store.holds(dataset_id)
    ids = store.ids_of(dataset_id) if store is not None else None
    recalled = yield lambda conn: sqlrecall.recall(
        conn, dataset_id, qvec, k, visible, exact=exact, point_distances=points, ids=ids
    )
    hits = recalled.hits
    timings["recall_sql"] = ms(t)
    revision = recalled.revision
    t = time.perf_counter()
    validity: temporal.Validity | None = None
    if recalled.replaced or as_of is not None or known_at is not None:
        # temporal.load without its first statement: the recall answered it (replaced).
        v = validity = temporal.Validity(as_of, known_at)
        node_ids = [h.node_id for h in hits if h.node_id is not None]
        yield lambda conn: v.load(conn, dataset_id, node_ids)
        closed = yield lambda conn: temporal.closed_edge_hashes(conn, dataset_id, hits, v)
        hits = temporal.adjust_hits(hits, v, pq.original, cfg, closed)
        timings["validity_sql"] = ms(t)
    t = time.perf_counter()
    scored = score_hits(hits, pq, cfg)
    timings["bonus"] = ms(t)
    t = time.perf_counter()
    seeds = hit_ids_for_projection(scored, cfg, pq, top_k=top_k)
    times: sqlrecall.NodeTimes = {}  # every fetched node's times, read with it
    cached: graphcache.CachedGraph | None = None
    if store is not None and revision is not None:  # (a load counts as the projection's SQL)
        cached = store.at(dataset_id, revision, cfg.max_sources)
        if cached is None and not store.too_big(dataset_id, revision):
            found = store
            cached = yield lambda conn: found.load(conn, dataset_id, revision, cfg.max_sources)
    walk: dict[str, Any] = {
        "leaves": episode_hits(scored),
        "with_sources": display == "highly_related",
        "times": times,
        "docs": docs,
    }
    graph: Subgraph
    if cached is not None:
        graph = cached.project(seeds, cfg, **walk)
    else:
        graph = yield lambda conn: sqlrecall.project(
            conn, dataset_id, seeds, cfg, visible=visible, **walk
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
    index: RelationshipIndex | None = None
    first: FirstRanking | None = None
    if display != "summary" and expand:
        t = time.perf_counter()
        index = RelationshipIndex.build(graph, cached.content_key if cached else None)
        if display == "highly_related" and validity is None:
            # As many as the final ranking ranks (pipeline.respond), traced as it traces them:
            # when the expansion changes no score, that ranking is this one (validity marks a
            # new graph after the expansion: a new index, ranked again).
            evidence = scored.evidence(graph, pq.original, cfg, **asked(pq, cfg))
            wide = cfg.highly_related_episodes or max(top_k, len(index.episodes))
            top = max(expand, top_k, wide)
            chains: dict[uuid.UUID, float] = {}
            ranked = rank_scored(scored, graph, pq, cfg, top, index, evidence, top_k, chains)
            best = ranked[:expand]
        else:
            best = rank_scored(scored, graph, pq, cfg, expand, index, trace=0)
        chosen = [b.episode_id for b in best]
        timings["expand_rank"] = ms(t)  # the first ranking (pure), apart from the SQL
        t = time.perf_counter()
        shown, known_edges, known_nodes = graph, len(graph.edges), len(graph.nodes)
        if display == "detail":
            graph = yield lambda conn: sqlrecall.expand(
                conn, dataset_id, chosen, shown, cfg, visible, times
            )
        elif (
            cached is not None
            and cached.revision == revision
            and recalled.point_distances is not None
            and len(recalled.point_distances) == len(cached.embedded)
        ):  # (the distances were read at the cached revision, in the same order)
            graph = cached.expand_points(recalled.point_distances, chosen, shown, times, docs)
        else:
            graph = yield lambda conn: sqlrecall.expand_points(
                conn, dataset_id, qvec, chosen, shown, cfg, visible, times, docs
            )
        if validity is not None:
            expanded = graph
            graph = yield lambda conn: temporal.mark_graph(
                conn, dataset_id, expanded, validity, include_history=include_history
            )
        timings["expand_sql"] = ms(t)
        t = time.perf_counter()
        # The final ranking's index: the first one grown by the points the expansion added (the
        # detail display's expansion and validity make a new graph: a new index).
        index = index.grow(graph, known_edges) if display == "highly_related" else None
        if index is not None and validity is None:
            unchanged = expansion_unscored(
                scored, graph, index, known_nodes, known_edges, chains, cfg
            )
            first = FirstRanking(ranked, evidence, index, top, top_k, unchanged)
        timings["index_grow"] = ms(t)
    t = time.perf_counter()
    graph = sqlrecall.with_times(graph, times)
    timings["validity_sql"] = timings.get("validity_sql", 0.0) + ms(t)
    return hits, graph, scored, index, first
