"""Bundle scoring (retrieval.md sections 6-7): the cheapest evidence chain per Episode.

    FacetCost(f)    = min(d(f), d(p) + edge(f-p) + H, d(en) + edge(f-en) + H)
    EpisodeScore(e) = min(d(e) + P, FacetCost(f) + step(e-f), d(en) + edge(e-en) + H)

with ``step(e-f) = edge(e-f) + H``, optionally lowered by m_flow's facet confidence discount.
Minimum, never average: one strong chain is enough.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from uuid import UUID

from memflow.recall.config import RecallConfig
from memflow.recall.types import (
    EDGE_COLLECTION,
    PATH_PREFERENCE,
    Bundle,
    GraphEdge,
    GraphNode,
    Hit,
    NodeKind,
    PathKind,
    PathStep,
    Relationship,
    Subgraph,
)
from memflow.text.timeparse import TimeMatch

INF = math.inf
_EDGE_KINDS: dict[str, tuple[NodeKind | None, NodeKind]] = {
    "has_facet": ("Episode", "Facet"),
    "has_point": ("Facet", "FacetPoint"),
    "involves_entity": (None, "Entity"),
    "same_entity_as": ("Entity", "Entity"),
}


def _pair(a: UUID, b: UUID) -> tuple[UUID, UUID]:
    return (a, b) if a.int <= b.int else (b, a)


@dataclass
class RelationshipIndex:
    """Adjacency of the projected subgraph, by node kind, with edge texts per node pair."""

    nodes: Mapping[UUID, GraphNode]
    episodes: list[UUID] = field(default_factory=list)
    facets_by_episode: dict[UUID, list[UUID]] = field(default_factory=dict)
    episodes_by_facet: dict[UUID, list[UUID]] = field(default_factory=dict)
    points_by_facet: dict[UUID, list[UUID]] = field(default_factory=dict)
    entities_by_episode: dict[UUID, list[UUID]] = field(default_factory=dict)
    entities_by_facet: dict[UUID, list[UUID]] = field(default_factory=dict)
    edges: dict[tuple[UUID, UUID], list[GraphEdge]] = field(default_factory=dict)

    @classmethod
    def build(cls, subgraph: Subgraph) -> RelationshipIndex:
        index = cls(nodes=subgraph.nodes)
        index.episodes = sorted(
            (n.id for n in subgraph.nodes.values() if n.kind == "Episode"), key=lambda u: u.int
        )
        for edge in subgraph.edges:
            index._add(edge)
        for table in (
            index.facets_by_episode,
            index.episodes_by_facet,
            index.points_by_facet,
            index.entities_by_episode,
            index.entities_by_facet,
        ):
            for key, ids in table.items():
                table[key] = sorted(set(ids), key=lambda u: u.int)
        return index

    def kind(self, node: UUID, default: NodeKind | None = None) -> NodeKind | None:
        n = self.nodes.get(node)
        return n.kind if n is not None else default

    def _add(self, edge: GraphEdge) -> None:
        src_default, dst_default = _EDGE_KINDS[edge.relationship]
        ends = {
            self.kind(edge.src, src_default): edge.src,
            self.kind(edge.dst, dst_default): edge.dst,
        }
        self.edges.setdefault(_pair(edge.src, edge.dst), []).append(edge)
        if "Episode" in ends and "Facet" in ends:
            self.facets_by_episode.setdefault(ends["Episode"], []).append(ends["Facet"])
            self.episodes_by_facet.setdefault(ends["Facet"], []).append(ends["Episode"])
        elif "Facet" in ends and "FacetPoint" in ends:
            self.points_by_facet.setdefault(ends["Facet"], []).append(ends["FacetPoint"])
        elif "Episode" in ends and "Entity" in ends:
            self.entities_by_episode.setdefault(ends["Episode"], []).append(ends["Entity"])
        elif "Facet" in ends and "Entity" in ends:
            self.entities_by_facet.setdefault(ends["Facet"], []).append(ends["Entity"])

    def edges_between(self, a: UUID, b: UUID) -> list[GraphEdge]:
        return self.edges.get(_pair(a, b), [])


@dataclass(frozen=True, slots=True)
class Choice:
    """How a facet or an episode reached its minimum cost."""

    cost: float
    kind: PathKind
    facet: UUID | None = None
    point: UUID | None = None
    entity: UUID | None = None

    def key(self, tie_id: UUID | None = None) -> tuple[float, int, int]:
        via = self.point or self.entity or self.facet or tie_id
        return (round(self.cost, 9), PATH_PREFERENCE[self.kind], via.int if via else -1)


class BundleScorer:
    """FacetCost / EpisodeScore over one RelationshipIndex, cached per node."""

    def __init__(
        self,
        index: RelationshipIndex,
        best_by_id: Mapping[UUID, float],
        edge_hit_map: Mapping[str, float],
        config: RecallConfig,
    ) -> None:
        self.index = index
        self.best = best_by_id
        self.edge_hits = edge_hit_map
        self.config = config
        self._facets: dict[UUID, Choice] = {}

    def d(self, node: UUID) -> float:
        return self.best.get(node, INF)

    def edge(self, a: UUID, b: UUID) -> tuple[float, GraphEdge | None]:
        """The cheapest edge between two nodes: its Edge_text score, or the miss cost."""
        best: tuple[float, GraphEdge | None] = (self.config.edge_miss_cost, None)
        for e in self.index.edges_between(a, b):
            cost = self.edge_hits.get(e.edge_text, self.config.edge_miss_cost)
            if best[1] is None or cost < best[0]:
                best = (cost, e)
        return best

    def hop(self, a: UUID, b: UUID) -> float:
        return self.edge(a, b)[0] + self.config.hop_cost

    def facet_cost(self, f: UUID) -> Choice:
        cached = self._facets.get(f)
        if cached is not None:
            return cached
        options = [Choice(self.d(f), "facet", facet=f)]
        for p in self.index.points_by_facet.get(f, []):
            if self.d(p) < INF:
                options.append(Choice(self.d(p) + self.hop(f, p), "point", facet=f, point=p))
        for en in self.index.entities_by_facet.get(f, []):
            if self.d(en) < INF:
                cost = self.d(en) + self.hop(f, en)
                options.append(Choice(cost, "facet_entity", facet=f, entity=en))
        best = min(options, key=lambda c: c.key())
        self._facets[f] = best
        return best

    def facet_step(self, f: UUID, e: UUID) -> float:
        """Cost of the facet -> episode step, with m_flow's facet confidence discount if on.

        The discount never raises the step: a strong facet pays min(normal, flat), a fair one
        the weak factor times the normal step."""
        step = self.hop(e, f)
        if not self.config.facet_discount:
            return step
        df = self.d(f)
        if df < self.config.facet_discount_strong_below:
            return min(step, self.config.facet_discount_strong_edge + self.config.hop_cost)
        if df < self.config.facet_discount_weak_below:
            return self.config.facet_discount_weak_factor * step
        return step

    def episode_choice(self, e: UUID) -> Choice:
        options = [Choice(self.d(e) + self.config.direct_episode_penalty, "direct_episode")]
        for f in self.index.facets_by_episode.get(e, []):
            fc = self.facet_cost(f)
            if fc.cost < INF:
                options.append(
                    Choice(fc.cost + self.facet_step(f, e), fc.kind, f, fc.point, fc.entity)
                )
        for en in self.index.entities_by_episode.get(e, []):
            if self.d(en) < INF:
                options.append(Choice(self.d(en) + self.hop(e, en), "entity", entity=en))
        return min(options, key=lambda c: c.key())


def _aware(dt: datetime) -> datetime:
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)


def time_overlap(node: GraphNode, query_time: TimeMatch) -> float:
    """Fraction (0..1) of the shorter of the two spans that the other covers; an instant
    (created_at, or a span without an end) counts 1 inside the query span, else 0."""
    qs, qe = _aware(query_time.start), _aware(query_time.end)
    start = node.time_start or node.created_at
    if start is None:
        return 0.0
    start = _aware(start)
    end = _aware(node.time_end) if node.time_start and node.time_end else None
    if end is None or end <= start:
        return 1.0 if qs <= start < qe else 0.0
    overlap = (min(end, qe) - max(start, qs)).total_seconds()
    shorter = min((end - start).total_seconds(), (qe - qs).total_seconds())
    return max(0.0, min(1.0, overlap / shorter)) if shorter > 0 else 0.0


def time_bonus(node: GraphNode | None, query_time: TimeMatch | None, config: RecallConfig) -> float:
    """How much the time bonus would subtract (before the floor), 0 when it does not apply."""
    if node is None or query_time is None or query_time.confidence < config.time_confidence_min:
        return 0.0
    return config.time_bonus_max * time_overlap(node, query_time)


def _with_time_bonus(score: float, bonus: float, floor: float) -> float:
    if bonus <= 0 or score <= floor:
        return score
    return max(floor, score - bonus)


def score_bundles(
    index: RelationshipIndex,
    best_by_id: Mapping[UUID, float],
    edge_hit_map: Mapping[str, float],
    config: RecallConfig,
    query_time: TimeMatch | None = None,
    top_k: int = 10,
    *,
    node_hits: Mapping[UUID, Hit] | None = None,
    edge_hits: Mapping[str, Hit] | None = None,
) -> list[Bundle]:
    """The ``top_k`` cheapest Episodes, each with its winning evidence chain.

    ``node_hits`` / ``edge_hits`` (best hit per node id / edge text) only feed the explain trace
    (collection and raw distance of each step)."""
    scorer = BundleScorer(index, best_by_id, edge_hit_map, config)
    ranked: list[tuple[tuple[float, int, int], UUID, Choice, float]] = []
    for e in index.episodes:
        choice = scorer.episode_choice(e)
        if choice.cost == INF:
            continue
        bonus = time_bonus(index.nodes.get(e), query_time, config)
        score = _with_time_bonus(choice.cost, bonus, config.time_bonus_floor)
        key = (round(score, 9), PATH_PREFERENCE[choice.kind], e.int)
        ranked.append((key, e, choice, score))
    top = heapq.nsmallest(top_k, ranked, key=lambda r: r[0])
    tracer = _Tracer(scorer, node_hits or {}, edge_hits or {})
    return [
        Bundle(
            episode_id=e,
            score=score,
            best_path=choice.kind,
            best_facet_id=choice.facet,
            best_point_id=choice.point,
            best_entity_id=choice.entity,
            path=tracer.path(e, choice, score),
        )
        for _, e, choice, score in top
    ]


class _Tracer:
    """Builds the explain trace: each node and edge of a winning chain with text and cost."""

    def __init__(
        self, scorer: BundleScorer, node_hits: Mapping[UUID, Hit], edge_hits: Mapping[str, Hit]
    ) -> None:
        self.scorer = scorer
        self.node_hits = node_hits
        self.edge_hits = edge_hits

    def node(self, node: UUID, kind: NodeKind, cost: float) -> PathStep:
        n = self.scorer.index.nodes.get(node)
        text = ""
        if n is not None:
            text = n.name if kind in ("Episode", "Entity") else (n.search_text or n.name)
        hit = self.node_hits.get(node)
        return PathStep(
            kind="node",
            node_kind=kind,
            id=node,
            text=text,
            collection=hit.collection if hit else None,
            distance=hit.distance if hit else None,
            cost=cost,
        )

    def edge(self, a: UUID, b: UUID, relationship: Relationship, cost: float) -> PathStep:
        _, edge = self.scorer.edge(a, b)
        text = edge.edge_text if edge else ""
        hit = self.edge_hits.get(text) if edge else None
        return PathStep(
            kind="edge",
            relationship=edge.relationship if edge else relationship,
            text=text,
            collection=EDGE_COLLECTION if hit else None,
            distance=hit.distance if hit else None,
            cost=cost,
        )

    def path(self, e: UUID, choice: Choice, score: float) -> list[PathStep]:
        s = self.scorer
        steps: list[PathStep] = []
        episode_cost = (
            s.d(e) + s.config.direct_episode_penalty if choice.kind == "direct_episode" else 0.0
        )
        if choice.kind == "entity" and choice.entity:
            steps.append(self.node(choice.entity, "Entity", s.d(choice.entity)))
            steps.append(self.edge(choice.entity, e, "involves_entity", s.hop(e, choice.entity)))
        elif choice.facet:
            f = choice.facet
            if choice.kind == "point" and choice.point:
                steps.append(self.node(choice.point, "FacetPoint", s.d(choice.point)))
                steps.append(self.edge(choice.point, f, "has_point", s.hop(f, choice.point)))
                steps.append(self.node(f, "Facet", 0.0))
            elif choice.kind == "facet_entity" and choice.entity:
                steps.append(self.node(choice.entity, "Entity", s.d(choice.entity)))
                steps.append(
                    self.edge(choice.entity, f, "involves_entity", s.hop(f, choice.entity))
                )
                steps.append(self.node(f, "Facet", 0.0))
            else:
                steps.append(self.node(f, "Facet", s.d(f)))
            steps.append(self.edge(f, e, "has_facet", s.facet_step(f, e)))
        # The time bonus shows as a negative cost on the episode, so the costs sum to the score.
        steps.append(self.node(e, "Episode", episode_cost + score - choice.cost))
        return steps


__all__ = [
    "BundleScorer",
    "Choice",
    "RelationshipIndex",
    "score_bundles",
    "time_bonus",
    "time_overlap",
]
