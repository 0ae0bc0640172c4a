"""The pure stages of episodic recall, separately callable so each can be timed.

The SQL layer only has to: run the recall SQL -> ``list[Hit]``; run the projection SQL with
``hit_ids_for_projection(...)`` -> ``Subgraph``; then call ``rank`` and ``render`` (or ``respond``,
which does both and records per-stage timings).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from itertools import islice
from operator import attrgetter
from typing import Any
from uuid import UUID

from memflow.recall.bonus import apply_bonuses, best_hits, edge_best_hits
from memflow.recall.config import RecallConfig
from memflow.recall.options import DEFAULTS, SearchOptions
from memflow.recall.preprocess import PreprocessedQuery
from memflow.recall.present import Outdated, outdated_points
from memflow.recall.render import render
from memflow.recall.roles import RoleRule
from memflow.recall.scoring import (
    Evidence,
    RelationshipIndex,
    most_time_bonus,
    score_bundles,
)
from memflow.recall.types import Bundle, ContextUnit, Hit, SearchResponse, Subgraph
from memflow.recall.unitrules import QueryRules, title_matches
from memflow.text.terms import content_terms
from memflow.text.timeparse import TimeMatch


@dataclass(frozen=True)
class ScoredHits:
    """Hits after the bonuses, with the per-node and per-edge-text minima and, per collection,
    each node's score and the worst score recalled."""

    hits: list[Hit]
    node_hits: dict[UUID, Hit]
    edge_hits: dict[str, Hit]
    by_collection: dict[str, dict[UUID, float]]
    worst: dict[str, float]
    _adjust: dict[tuple[object, ...], dict[UUID, float]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @property
    def best_by_id(self) -> dict[UUID, float]:
        return {node: h.score for node, h in self.node_hits.items()}

    @property
    def edge_hit_map(self) -> dict[str, float]:
        return {text: h.score for text, h in self.edge_hits.items()}

    def evidence(
        self,
        subgraph: Subgraph,
        query: str | None,
        config: RecallConfig,
        *,
        dated: bool = False,
        named: datetime | None = None,
    ) -> Evidence:
        """The scorer's view, with the unit rules of ``query`` applied to the subgraph's points
        (speakers from the parsed turns, :mod:`memflow.recall.unitrules`). Only recalled points
        get rules, so a subgraph that gained context-only points reuses the same adjustments;
        one that gained recalled points (the expansion fetches every point of the best
        episodes, recalled ones the projection had capped away among them) gets them too.
        A question about the present gets the statements that newer ones outdate
        (:mod:`memflow.recall.present`), unless it names a time (``dated``: "currently … in June
        2023" asks about then), except, asked in the present tense, of a statement said before
        that time ends (``named``: its end; "the plan for Q3" said in May or in August: a
        later one outdates it)."""
        points = [
            n for n in subgraph.nodes.values() if n.kind == "FacetPoint" and n.id in self.node_hits
        ]
        key = (query, config.speaker_penalty, config.term_overlap_bonus,
               config.term_overlap_cap, config.question_turn_penalty, config.role_penalty,
               frozenset(n.id for n in points))  # fmt: skip
        cached = self._adjust.get(key)
        adjust: dict[UUID, float] = {} if cached is None else cached
        if query and cached is None:
            rules = QueryRules.build(
                query, (n.speaker for n in points), (n.search_text or n.name for n in points)
            )
            role = RoleRule.build(query, (n.speaker for n in points))
            for n in points:
                a = rules.adjustment(n.search_text or n.name, n.speaker, config)
                a += role.adjustment(n.speaker, config)
                if a:
                    adjust[n.id] = a
        self._adjust[key] = adjust
        return Evidence(
            best=self.best_by_id,
            edges=self.edge_hit_map,
            by_collection=self.by_collection,
            worst=self.worst,
            unit_adjust=adjust,
            facet_adjust=facet_rules(query, subgraph, config),
            node_hits=self.node_hits,
            edge_hits=self.edge_hits,
            outdated=self.outdated(subgraph, query, config, adjust, dated=dated, named=named),
        )

    def outdated(
        self,
        subgraph: Subgraph,
        query: str | None,
        config: RecallConfig,
        adjust: Mapping[UUID, float],
        *,
        dated: bool = False,
        named: datetime | None = None,
    ) -> dict[UUID, Outdated]:
        """:meth:`evidence`'s ``outdated``, with the unit rules' ``adjust`` (none before the
        nodes' times are read: nothing to order them by)."""
        if not subgraph.times:
            return {}
        scores = {p: h.score + adjust.get(p, 0.0) for p, h in self.node_hits.items()}
        return outdated_points(query, subgraph, scores, config, dated=dated, named=named)


def facet_rules(query: str | None, subgraph: Subgraph, config: RecallConfig) -> dict[UUID, float]:
    """The facet title rule (:func:`memflow.recall.unitrules.title_matches`) for every facet of
    ``subgraph``: ``-facet_title_bonus`` when its title names an aspect of ``query``."""
    if not query or not config.facet_title_bonus:
        return {}
    terms = content_terms(query)
    return {
        n.id: -config.facet_title_bonus
        for n in subgraph.nodes.values()
        if n.kind == "Facet" and title_matches(terms, n.search_text or n.name)
    }


def score_hits(
    hits: Sequence[Hit], pq: PreprocessedQuery | None, config: RecallConfig
) -> ScoredHits:
    """Stage 3-4: scores from raw distances less the bonuses (when a query is given), minima.

    Scores are recomputed from the raw distances, so passing already scored hits is harmless."""
    scored = (
        apply_bonuses(hits, pq, config)
        if pq is not None
        else [h.rescored(h.distance) for h in hits]
    )
    # Per collection, each node's best score and the worst raw distance recalled (the bonuses
    # leave distances as they are), in one pass.
    by_collection: dict[str, dict[UUID, float]] = {}
    worst: dict[str, float] = {}
    for h in scored:
        collection, d = h.collection, h.distance
        if h.node_id is not None:
            col = by_collection.get(collection)
            if col is None:
                col = by_collection[collection] = {}
            col[h.node_id] = min(h.score, col.get(h.node_id, math.inf))
        worst[collection] = max(worst.get(collection, d), d)
    return ScoredHits(scored, best_hits(scored), edge_best_hits(scored), by_collection, worst)


def entity_seed_bound(scored: ScoredHits, config: RecallConfig, top_k: int) -> float:
    """An upper bound of the ``top_k``-th best EpisodeScore, known before the projection.

    A directly hit episode scores at most ``d(e) + direct_cost`` plus the most corroboration can
    add (the time bonus only lowers it). An entity chain costs at least ``d(en) + entity_cost``
    plus the least corroboration can add, less the time bonus: an entity hit above the bound
    cannot place an episode in the top ``top_k``, so the projection need not walk its (possibly
    thousands of) links. Infinite when fewer than ``top_k`` episodes were hit."""
    worst = scored.worst
    points = scored.by_collection.get("FacetPoint_search_text", {})
    spread = (worst.get("FacetPoint_search_text", 0.0) - min(points.values())) if points else 0.0
    # The unit rules can widen the gap between an episode's two best points beyond the spread.
    rules = (
        config.speaker_penalty
        + config.question_turn_penalty
        + config.term_overlap_bonus * config.term_overlap_cap
    )
    most = (
        config.second_point_weight * max(config.second_point_miss, spread + rules)
        + config.facet_support_weight * worst.get("Facet_anchor_text", config.missing_distance)
        + config.summary_support_weight * worst.get("Episode_summary", config.missing_distance)
    )
    direct = sorted(
        h.score + config.direct_cost + most
        for h in scored.node_hits.values()
        if h.collection == "Episode_summary"
    )
    return direct[top_k - 1] if len(direct) >= top_k else math.inf


def _least_support(scored: ScoredHits, config: RecallConfig) -> float:
    windows = scored.by_collection.get("Facet_anchor_text", {})
    summaries = scored.by_collection.get("Episode_summary", {})
    return config.facet_support_weight * min(windows.values(), default=0.0) + (
        config.summary_support_weight * min(summaries.values(), default=0.0)
    )


def hit_ids_for_projection(
    hits: Sequence[Hit] | ScoredHits,
    config: RecallConfig,
    pq: PreprocessedQuery | None = None,
    top_k: int | None = None,
) -> list[UUID]:
    """Hit node ids, best score first (ties: lower raw distance, then the hit's text), capped
    at ``max_relevant_ids``: the seeds of the graph projection. With ``top_k``, entity hits that
    cannot reach the top ``top_k`` (see :func:`entity_seed_bound`) are left out."""
    scored = hits if isinstance(hits, ScoredHits) else score_hits(hits, pq, config)
    node_hits = scored.node_hits
    bound = entity_seed_bound(scored, config, top_k) if top_k else math.inf
    # The most a time bonus can subtract: never assumed smaller than time_bonus_max (as before);
    # a query that names a day (or an unknown query) can get time_bonus_day on top.
    day = config.time_bonus_max + config.time_bonus_day
    bonus = (
        max(config.time_bonus_max, most_time_bonus(query_time(pq, config), config)) if pq else day
    )
    slack = config.entity_cost + _least_support(scored, config) - bonus
    ordered = sorted(
        (
            h
            for h in node_hits.values()
            if h.collection != "Entity_name" or h.score + slack <= bound
        ),
        key=_SEED_ORDER,
    )
    return [h.node_id for h in ordered[: config.max_relevant_ids] if h.node_id is not None]


_SEED_ORDER = attrgetter("score", "distance", "collection", "text")


def episode_hits(scored: ScoredHits) -> set[UUID]:
    """Hit nodes that are Episodes (the projection has nothing to walk above them)."""
    return {n for n, h in scored.node_hits.items() if h.collection == "Episode_summary"}


# A time a question names that is the present period ("this year", "today", "今年"): it asks
# about now, not about a date.
_THIS_PERIOD = re.compile(
    r"\b(?:this|the current) (?:year|month|week|quarter|sprint)\b|\btoday\b|\btonight\b|"
    r"今年|本年|本月|这个月|本周|这周|这个星期|今天|本季度|这个季度",
    re.IGNORECASE,
)


def dated(pq: PreprocessedQuery, config: RecallConfig) -> bool:
    """Whether the question names a time other than the present period: then that time
    decides, not which statement is newer (memflow.recall.present)."""
    qt = query_time(pq, config)
    return qt is not None and not _THIS_PERIOD.search(qt.text)


def asked(pq: PreprocessedQuery, config: RecallConfig) -> dict[str, Any]:
    """:meth:`ScoredHits.evidence`'s ``dated`` and ``named`` for ``pq``."""
    qt = query_time(pq, config)
    on = dated(pq, config)
    return {"dated": on, "named": qt.end if on and qt is not None else None}


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
    evidence: Evidence | None = None,
    trace: int | None = None,
    chains: dict[UUID, float] | None = None,
) -> list[Bundle]:
    """Stages 6-7 on already scored hits (``trace``: how many bundles get explain paths;
    ``chains``: see :func:`memflow.recall.scoring.score_bundles`)."""
    return score_bundles(
        index or RelationshipIndex.build(subgraph),
        evidence or scored.evidence(subgraph, pq.original, config, **asked(pq, config)),
        config,
        query_time(pq, config),
        top_k or DEFAULTS.top_k,
        trace,
        chains,
    )


def rank(
    hits: Sequence[Hit],
    subgraph: Subgraph,
    pq: PreprocessedQuery,
    config: RecallConfig,
    top_k: int | None = None,
) -> list[Bundle]:
    """bonuses -> minima -> unit rules -> RelationshipIndex -> bundles."""
    return rank_scored(score_hits(hits, pq, config), subgraph, pq, config, top_k)


@dataclass(frozen=True)
class FirstRanking:
    """The ranking a search made before its expansion (:func:`memflow.recall.search.retrieve_body`),
    kept for the final one: ``bundles`` are the ``top`` best, the first ``trace`` with their
    explain paths, ranked on ``index`` with ``evidence``. ``unchanged``: what the expansion
    added cannot change any episode's score (no recalled node or edge text among it, no new link
    to a node the ranking knew; :func:`expansion_unscored`)."""

    bundles: list[Bundle]
    evidence: Evidence
    index: RelationshipIndex
    top: int
    trace: int
    unchanged: bool

    def holds(self, index: RelationshipIndex, top: int, trace: int) -> bool:
        """Whether the final ranking (``top`` bundles, ``trace`` traced, on ``index``) sees
        what this one saw: the same index object (grown by what changed no score) and no more
        bundles. Its evidence is then this one's but for the outdated statements (the first
        ranking ran before the nodes' times, so with none); with none, the bundles too."""
        return self.unchanged and index is self.index and top <= self.top and trace == self.trace


def expansion_unscored(
    scored: ScoredHits,
    subgraph: Subgraph,
    index: RelationshipIndex,
    known_nodes: int,
    known_edges: int,
    chains: Mapping[UUID, float],
    config: RecallConfig,
) -> bool:
    """Whether what an expansion added to ``subgraph`` (nodes after its first ``known_nodes``,
    edges after its first ``known_edges``: an expansion only adds; ``index``: its index,
    grown) leaves every EpisodeScore as the ranking that filled ``chains`` (each episode's
    deciding chain cost) found it: the new nodes are points, none recalled (the unit and facet
    rules stay as they were); each new edge reaches a new node (a point or facet that ranking
    never saw) through a facet that was either known or not recalled; a new edge whose text was
    recalled costs more than the chain of every episode it is evidence for."""
    hits, texts, nodes = scored.node_hits, scored.edge_hits, subgraph.nodes
    added = {n.id: n for n in islice(nodes.values(), known_nodes, None)}
    if any(n.kind != "FacetPoint" or i in hits for i, n in added.items()):
        return False

    def before(node: UUID) -> bool:
        return node in nodes and node not in added

    for edge in subgraph.edges[known_edges:]:
        if edge.relationship == "has_point":
            if before(edge.dst) or (not before(edge.src) and edge.src in hits):
                return False
        elif edge.relationship == "has_facet":
            if before(edge.dst) or edge.dst in hits:
                return False
        else:
            return False
        hit = texts.get(edge.edge_text)
        if hit is not None:
            cost = hit.score + config.edge_cost
            for e in index.episodes_of_edge(edge):
                chain = chains.get(e)
                if chain is None or not (cost > chain and round(cost, 9) > round(chain, 9)):
                    return False
    return True


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def respond(
    hits: Sequence[Hit],
    subgraph: Subgraph,
    pq: PreprocessedQuery,
    config: RecallConfig,
    options: SearchOptions = DEFAULTS,
    *,
    timings_ms: dict[str, float] | None = None,
    scored: ScoredHits | None = None,
    index: RelationshipIndex | None = None,
    first: FirstRanking | None = None,
) -> SearchResponse:
    """All pure stages after the SQL, timed: ``bonus``, ``index``, ``score``, ``render``, as
    ``options`` ask (display, top_k, budget, token counter). Timings the caller already measured
    (``recall_sql``, ``projection_sql`` …) are kept. ``first``: the search's ranking before its
    expansion, the final one when what the expansion added changed no score
    (:meth:`FirstRanking.holds`)."""
    opts = options.resolved()
    timings = dict(timings_ms or {})
    if scored is None:
        t = time.perf_counter()
        scored = score_hits(hits, pq, config)
        timings["bonus"] = _ms(t)
    if index is None:  # (given: the search's transaction built it, timed there)
        t = time.perf_counter()
        index = RelationshipIndex.build(subgraph)
        timings["index"] = _ms(t)
    t = time.perf_counter()
    shown, k = opts.display, opts.top_k
    wide = k
    if shown == "highly_related":
        wide = config.highly_related_episodes or max(k, len(index.episodes))
    ranked: list[Bundle] | None = None
    if first is not None and first.holds(index, max(k, wide), k):
        prior = first.evidence
        outdated = scored.outdated(
            subgraph, pq.original, config, prior.unit_adjust, **asked(pq, config)
        )
        if outdated or prior.outdated:
            evidence = replace(prior, outdated=outdated)
        else:
            evidence, ranked = prior, first.bundles[: max(k, wide)]
    else:
        evidence = scored.evidence(subgraph, pq.original, config, **asked(pq, config))
    if ranked is None:
        ranked = rank_scored(scored, subgraph, pq, config, max(k, wide), index, evidence, trace=k)
    bundles = ranked[:k]
    timings["score"] = _ms(t)
    t = time.perf_counter()
    units: list[ContextUnit] = []
    results, context = render(
        bundles,
        subgraph,
        shown,
        config,
        evidence=evidence,
        index=index,
        budget_tokens=opts.budget_tokens,
        token_counter=opts.token_counter,
        units_out=units,
        unit_bundles=ranked[:wide] if shown == "highly_related" else None,
    )
    timings["render"] = _ms(t)
    return SearchResponse(
        query=pq.original,
        mode="episodic",
        display=shown,
        results=results,
        timings_ms=timings,
        context=context,
        context_units=units,
        preprocessed=pq.model_dump(mode="json"),
        notes=list(subgraph.notes),
        token_counter=opts.token_counter,
    )


__all__ = [
    "FirstRanking",
    "ScoredHits",
    "expansion_unscored",
    "hit_ids_for_projection",
    "query_time",
    "rank",
    "rank_scored",
    "respond",
    "score_hits",
]
