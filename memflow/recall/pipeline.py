"""The pure stages of episodic recall, separately callable so each can be timed.

The SQL layer only has to: run the recall SQL -> ``list[Hit]``; run the projection SQL with
``hit_ids_for_projection(...)`` -> ``Subgraph``; then call ``rank`` and ``render`` (or ``respond``,
which does both and records per-stage timings).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from uuid import UUID

from memflow.recall.bonus import apply_bonuses, best_hits, edge_best_hits, normalize_scores
from memflow.recall.config import DisplayMode, RecallConfig, SearchMode
from memflow.recall.preprocess import PreprocessedQuery
from memflow.recall.render import render
from memflow.recall.scoring import RelationshipIndex, score_bundles
from memflow.recall.types import Bundle, ContextUnit, Hit, SearchResponse, Subgraph
from memflow.text.timeparse import TimeMatch


@dataclass(frozen=True)
class ScoredHits:
    """Hits after normalisation and bonuses, with the per-node and per-edge-text minima."""

    hits: list[Hit]
    node_hits: dict[UUID, Hit]
    edge_hits: dict[str, Hit]

    @property
    def best_by_id(self) -> dict[UUID, float]:
        return {node: h.score for node, h in self.node_hits.items()}

    @property
    def edge_hit_map(self) -> dict[str, float]:
        return {text: h.score for text, h in self.edge_hits.items()}


def score_hits(
    hits: Sequence[Hit], pq: PreprocessedQuery | None, config: RecallConfig
) -> ScoredHits:
    """Stage 3-4: normalise per collection, apply bonuses (when a query is given), take minima.

    Scores are recomputed from the raw distances, so passing already scored hits is harmless."""
    scored = normalize_scores(hits, config.normalize)
    if pq is not None:
        scored = apply_bonuses(scored, pq, config)
    return ScoredHits(scored, best_hits(scored), edge_best_hits(scored))


def entity_seed_bound(scored: ScoredHits, config: RecallConfig, top_k: int) -> float:
    """An upper bound of the ``top_k``-th best EpisodeScore, known before the projection.

    A directly hit episode scores at most ``d(e) + direct_episode_penalty`` (the time bonus only
    lowers it). A path through an entity costs at least ``d(en) + hop_cost - time_bonus_max``, so an
    entity hit above the bound cannot place an episode in the top ``top_k``: the projection need not
    walk its (possibly thousands of) links. Infinite when fewer than ``top_k`` episodes were hit.
    """
    direct = sorted(
        h.score + config.direct_episode_penalty
        for h in scored.node_hits.values()
        if h.collection == "Episode_summary"
    )
    return direct[top_k - 1] if len(direct) >= top_k else math.inf


def hit_ids_for_projection(
    hits: Sequence[Hit] | ScoredHits,
    config: RecallConfig,
    pq: PreprocessedQuery | None = None,
    top_k: int | None = None,
) -> list[UUID]:
    """Hit node ids, best score first (ties: lower distance, lower id), capped at
    ``max_relevant_ids``: the seeds of the graph projection. With ``top_k``, entity hits that
    cannot reach the top ``top_k`` (see :func:`entity_seed_bound`) are left out."""
    scored = hits if isinstance(hits, ScoredHits) else score_hits(hits, pq, config)
    node_hits = scored.node_hits
    bound = entity_seed_bound(scored, config, top_k) if top_k else math.inf
    slack = config.hop_cost - config.time_bonus_max
    ordered = sorted(
        (
            kv
            for kv in node_hits.items()
            if kv[1].collection != "Entity_name" or kv[1].score + slack <= bound
        ),
        key=lambda kv: (kv[1].score, kv[1].distance, kv[0].int),
    )
    return [node for node, _ in ordered[: config.max_relevant_ids]]


def episode_hits(scored: ScoredHits) -> set[UUID]:
    """Hit nodes that are Episodes (the projection has nothing to walk above them)."""
    return {n for n, h in scored.node_hits.items() if h.collection == "Episode_summary"}


def query_time(pq: PreprocessedQuery, config: RecallConfig) -> TimeMatch | None:
    """The query's time span when it is confident enough to use."""
    if pq.time is not None and pq.time.confidence >= config.time_confidence_min:
        return pq.time
    return None


def rank_scored(
    scored: ScoredHits,
    subgraph: Subgraph,
    pq: PreprocessedQuery,
    config: RecallConfig,
    top_k: int | None = None,
    index: RelationshipIndex | None = None,
) -> list[Bundle]:
    """Stages 6-7 on already scored hits."""
    return score_bundles(
        index or RelationshipIndex.build(subgraph),
        scored.best_by_id,
        scored.edge_hit_map,
        config,
        query_time(pq, config),
        top_k or config.top_k,
        node_hits=scored.node_hits,
        edge_hits=scored.edge_hits,
    )


def rank(
    hits: Sequence[Hit],
    subgraph: Subgraph,
    pq: PreprocessedQuery,
    config: RecallConfig,
    top_k: int | None = None,
) -> list[Bundle]:
    """normalise -> bonuses -> best_by_id / edge_hit_map -> RelationshipIndex -> bundles."""
    return rank_scored(score_hits(hits, pq, config), subgraph, pq, config, top_k)


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def respond(
    hits: Sequence[Hit],
    subgraph: Subgraph,
    pq: PreprocessedQuery,
    config: RecallConfig,
    *,
    display: DisplayMode | None = None,
    top_k: int | None = None,
    budget_tokens: int | None = None,
    mode: SearchMode = "episodic",
    timings_ms: dict[str, float] | None = None,
    scored: ScoredHits | None = None,
) -> SearchResponse:
    """All pure stages after the SQL, timed: ``bonus``, ``index``, ``score``, ``render``.
    Timings the caller already measured (``recall_sql``, ``projection_sql`` …) are kept."""
    timings = dict(timings_ms or {})
    if scored is None:
        t = time.perf_counter()
        scored = score_hits(hits, pq, config)
        timings["bonus"] = _ms(t)
    t = time.perf_counter()
    index = RelationshipIndex.build(subgraph)
    timings["index"] = _ms(t)
    t = time.perf_counter()
    bundles = rank_scored(scored, subgraph, pq, config, top_k, index)
    shown = display or config.display
    unit_bundles = None
    if shown == "highly_related" and config.highly_related_episodes != len(bundles):
        wide = config.highly_related_episodes or max(1, len(index.episodes))
        unit_bundles = rank_scored(scored, subgraph, pq, config, wide, index)
    timings["score"] = _ms(t)
    t = time.perf_counter()
    units: list[ContextUnit] = []
    results, context = render(
        bundles,
        subgraph,
        shown,
        config,
        best_by_id=scored.best_by_id,
        edge_hit_map=scored.edge_hit_map,
        index=index,
        budget_tokens=budget_tokens,
        units_out=units,
        unit_bundles=unit_bundles,
        raw_distance={node: h.distance for node, h in scored.node_hits.items()},
        query=pq.original,
    )
    timings["render"] = _ms(t)
    return SearchResponse(
        query=pq.original,
        mode=mode,
        display=shown,
        results=results,
        timings_ms=timings,
        context=context,
        context_units=units,
        preprocessed=pq.model_dump(mode="json"),
        notes=list(subgraph.notes),
    )


__all__ = [
    "ScoredHits",
    "hit_ids_for_projection",
    "query_time",
    "rank",
    "rank_scored",
    "respond",
    "score_hits",
]
