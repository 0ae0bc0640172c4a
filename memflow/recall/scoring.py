"""Episode scoring: the cheapest evidence chain per Episode, plus corroboration.

All costs are raw cosine distances (after the bonuses), so a chain through a turn, a facet, an
entity or an edge text compete on the embedder's own scale:

    u(p)            = d(p) + rules(p)                                   (memflow.recall.unitrules)
    entity(en)      = d(en) + entity_cost + entity_generic_cost * (1 - specificity(en))
    FacetCost(f)    = min(d(f) + facet_cost, u(p) + point_cost, entity(en) + facet_cost) + t(f)
    Chain(e)        = min(d(e) + direct_cost, FacetCost(f), entity(en), d(edge text) + edge_cost)
    EpisodeScore(e) = Chain(e) + w2 * (u2(e) - u1(e)) + wf * d_window(e) + ws * d_summary(e)

over e's facets f, their points p and the entities en linked to e or its facets; ``t(f)`` is the
facet's title rule (``Evidence.facet_adjust``: its title names the query's aspect).
``specificity(en) = log((N + 1) / (deg + 1)) / log(N + 1)`` for an entity linked to ``deg`` of the
dataset's ``N`` episodes: a speaker or the team's own product, present everywhere, is weak evidence
for choosing between episodes. The corroboration terms are the gap between the episode's two best
points (one matching turn vs several), its best facet window (``Facet_anchor_text``) and its
summary; a missing one counts as the worst distance recalled in its collection (a bound: what was
not recalled is at least that far).

Why not the seed's min-max bundle formula: min-max gives every collection's best hit cost 0, so a
speaker entity that matches a name in the query ties with the turn that answers it, and the hop
costs then let the entity path win (docs/benchmarks/locomo.md). Ties are broken by content (score,
path kind, best raw distance, a hash of the episode's text), never by ids.
"""

from __future__ import annotations

import hashlib
import heapq
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from uuid import UUID

from memflow.recall.config import RecallConfig
from memflow.recall.present import Outdated
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
    Record,
    Subgraph,
)
from memflow.text.timeparse import TimeMatch

INF = math.inf
WINDOW_COLLECTION = "Facet_anchor_text"
SUMMARY_COLLECTION = "Episode_summary"
_EDGE_KINDS: dict[str, tuple[NodeKind | None, NodeKind]] = {
    "has_facet": ("Episode", "Facet"),
    "has_point": ("Facet", "FacetPoint"),
    "involves_entity": (None, "Entity"),
    "same_entity_as": ("Entity", "Entity"),
}


# The adjacency table an edge between two kinds of nodes fills (RelationshipIndex._add), by the
# kinds of its src and dst: 0 Episode-Facet, 1 Facet-FacetPoint, 2 Episode-Entity, 3 Facet-Entity,
# either way round (``True``: the edge's dst is the parent).
_ROUTES: dict[str | None, dict[str | None, tuple[int, bool]]] = {}
_NO_ROUTE: dict[str | None, tuple[int, bool]] = {}
for _table, (_parent, _child) in enumerate(
    (("Episode", "Facet"), ("Facet", "FacetPoint"), ("Episode", "Entity"), ("Facet", "Entity"))
):
    _ROUTES.setdefault(_parent, {})[_child] = (_table, False)
    _ROUTES.setdefault(_child, {})[_parent] = (_table, True)


def content_key(node: GraphNode | None) -> str:
    """A tie-breaker that depends only on what a node says (the same content in two datasets
    gets the same key), never on its id."""
    if node is None:
        return ""
    return _content_hash(
        node.kind,
        node.name,
        node.search_text or "",
        node.summary or "",
        node.anchor_text or "",
        node.time_start.isoformat() if node.time_start else "",
    )


@lru_cache(maxsize=16384)  # (a search keys ~500 nodes, mostly the ones the last searches did)
def _content_hash(*parts: str) -> str:
    return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=12).hexdigest()


class _Keys(dict[UUID, str]):
    """content_key by node id, made when a sort first reads it, read without a call per id
    once made; "" for an id the subgraph has no node of (an expansion's link to a facet it did
    not fetch). ``stored``: the keys of the nodes in ``kinds`` (the subgraph's at the build, by
    their ids' ints) where a cache keeps them (:meth:`memflow.recall.graphcache.CachedGraph.content_key`)."""

    __slots__ = ("kinds", "nodes", "stored")

    def __init__(
        self,
        nodes: Mapping[UUID, GraphNode],
        kinds: Mapping[int, str] | None = None,
        stored: Callable[[int], str | None] | None = None,
    ) -> None:
        super().__init__()
        self.nodes, self.kinds, self.stored = nodes, kinds or {}, stored

    def __missing__(self, node: UUID) -> str:
        i = node.int
        key = self.stored(i) if self.stored is not None and i in self.kinds else None
        if key is None:
            n = self.nodes.get(node)
            if n is None:
                return ""
            key = content_key(n)
        self[node] = key
        return key


@dataclass
class RelationshipIndex:
    """Adjacency of the projected subgraph, by node kind, and its edges."""

    nodes: Mapping[UUID, GraphNode]
    episodes: list[UUID] = field(default_factory=list)
    facets_by_episode: dict[UUID, list[UUID]] = field(default_factory=dict)
    episodes_by_facet: dict[UUID, list[UUID]] = field(default_factory=dict)
    points_by_facet: dict[UUID, list[UUID]] = field(default_factory=dict)
    entities_by_episode: dict[UUID, list[UUID]] = field(default_factory=dict)
    entities_by_facet: dict[UUID, list[UUID]] = field(default_factory=dict)
    # Every edge, in the order added. Looked up by their ends (:meth:`edges_between`: the
    # explain trace and the detail display) or by text (:meth:`edges_with_texts`: the edge
    # chains), both rarely: no list per node pair or per text is made for each edge.
    edge_list: list[GraphEdge] = field(default_factory=list)
    episode_count: int = 0
    # content_key of the nodes the tables' order needed (kept for :meth:`grow`)
    keys: dict[UUID, str] = field(default_factory=dict, repr=False, compare=False)
    # By their ends' ids xored (an int: hashed in C; either way round), the number of the first
    # edge in ``edge_list``, and of the others with the same key (filled from ``_paired`` on
    # when :meth:`edges_between` asks)
    _pairs: dict[int, int] = field(default_factory=dict, repr=False, compare=False)
    _more_pairs: dict[int, list[int]] = field(default_factory=dict, repr=False, compare=False)
    _paired: int = field(default=0, repr=False, compare=False)

    @classmethod
    def build(
        cls, subgraph: Subgraph, stored: Callable[[int], str | None] | None = None
    ) -> RelationshipIndex:
        """The index of ``subgraph``; ``stored``: the content keys of its nodes where a cache
        keeps them (by the id's int; None: made here)."""
        index = cls(nodes=subgraph.nodes, episode_count=subgraph.episode_count)
        kinds = {i.int: n.kind for i, n in subgraph.nodes.items()}
        key = index.keys = _Keys(subgraph.nodes, kinds, stored)
        index.episodes = sorted(
            (n.id for n in subgraph.nodes.values() if n.kind == "Episode"), key=key.__getitem__
        )
        index._add(subgraph.edges, kinds=kinds)
        for table in index._tables():
            for k, ids in table.items():
                if len(ids) > 1:  # (one id: already its own sorted set)
                    table[k] = sorted(set(ids), key=key.__getitem__)
        return index

    def grow(self, subgraph: Subgraph, known_edges: int) -> RelationshipIndex:
        """This index of ``subgraph`` as it was, with its first ``known_edges`` edges, made the
        index :meth:`build` makes of it now: the edges added since (after those, as expansions
        add them) and their new nodes, none an Episode (search: one build per search)."""
        if self.nodes is not subgraph.nodes or any(
            n.kind == "Episode" and n.id not in self.keys for n in subgraph.nodes.values()
        ):
            return RelationshipIndex.build(subgraph)
        key = self.keys
        if not isinstance(key, _Keys):
            key = self.keys = _Keys(self.nodes)
        grown: dict[tuple[int, UUID], None] = {}
        self._add(subgraph.edges[known_edges:], grown)
        tables = self._tables()
        for table, k in grown:  # (each list that grew, sorted once)
            ids = tables[table][k]
            if len(ids) > 1:
                tables[table][k] = sorted(set(ids), key=key.__getitem__)
        return self

    def _tables(self) -> tuple[dict[UUID, list[UUID]], ...]:
        return (
            self.facets_by_episode,
            self.episodes_by_facet,
            self.points_by_facet,
            self.entities_by_episode,
            self.entities_by_facet,
        )

    def kind(self, node: UUID, default: NodeKind | None = None) -> NodeKind | None:
        n = self.nodes.get(node)
        return n.kind if n is not None else default

    def _add(
        self,
        edges: Sequence[GraphEdge],
        grown: dict[tuple[int, UUID], None] | None = None,
        kinds: Mapping[int, str] | None = None,
    ) -> None:
        """Add ``edges`` to the tables (``grown`` receives each (number in :meth:`_tables`,
        key) whose list they add to; ``kinds``: every node's kind by its id's int, when made)."""
        # (the hot loop of a search's scoring: ~900 edges; kinds read without a call, by the
        # ids' ints (an int hashes in C, a UUID in Python), the tables bound to locals once)
        nodes = self.nodes
        if kinds is None:
            kinds = {i.int: n.kind for i, n in nodes.items()} if len(edges) > 64 else {}
        self.edge_list.extend(edges)
        tables = (
            (self.facets_by_episode, self.episodes_by_facet),
            (self.points_by_facet, None),
            (self.entities_by_episode, None),
            (self.entities_by_facet, None),
        )
        numbers = ((0, 1), (2, None), (3, None), (4, None))
        src_kind: str | None
        dst_kind: str | None
        for edge in edges:
            src_kind, dst_kind = _EDGE_KINDS[edge.relationship]
            if kinds:
                src_kind = kinds.get(edge.src.int, src_kind)
                dst_kind = kinds.get(edge.dst.int, dst_kind)
            else:
                src, dst = nodes.get(edge.src), nodes.get(edge.dst)
                src_kind = src_kind if src is None else src.kind
                dst_kind = dst_kind if dst is None else dst.kind
            route = _ROUTES.get(src_kind, _NO_ROUTE).get(dst_kind)
            if route is None:
                continue
            table, swap = route
            parent, child = (edge.dst, edge.src) if swap else (edge.src, edge.dst)
            down, up = tables[table]
            down.setdefault(parent, []).append(child)
            if up is not None:
                up.setdefault(child, []).append(parent)
            if grown is not None:
                below, above = numbers[table]
                grown[(below, parent)] = None
                if above is not None:
                    grown[(above, child)] = None

    def edges_between(self, a: UUID, b: UUID) -> list[GraphEdge]:
        """The edges between ``a`` and ``b`` (either way round), in the order they were added."""
        edges, pairs, more = self.edge_list, self._pairs, self._more_pairs
        for number in range(self._paired, len(edges)):
            edge = edges[number]
            pair = edge.src.int ^ edge.dst.int
            if pairs.setdefault(pair, number) != number:
                more.setdefault(pair, []).append(number)
        self._paired = len(edges)
        pair = a.int ^ b.int
        first = pairs.get(pair)
        if first is None:
            return []
        return [
            edge
            for edge in (edges[n] for n in (first, *more.get(pair, ())))
            if (edge.src == a and edge.dst == b) or (edge.src == b and edge.dst == a)
        ]

    def edges_with_texts(self, texts: Collection[str]) -> dict[str, list[GraphEdge]]:
        """The edges whose text is one of ``texts``, by text, in the order they were added."""
        out: dict[str, list[GraphEdge]] = {}
        for edge in self.edge_list:
            if edge.edge_text in texts:
                out.setdefault(edge.edge_text, []).append(edge)
        return out

    def episodes_of_edge(self, edge: GraphEdge) -> list[UUID]:
        """The episodes an edge is evidence for: its Episode end, or its facet's episodes."""
        src, dst = self.nodes.get(edge.src), self.nodes.get(edge.dst)
        src_kind = src.kind if src is not None else None
        dst_kind = dst.kind if dst is not None else None
        if src_kind == "Episode" or dst_kind == "Episode":
            return [edge.src if src_kind == "Episode" else edge.dst]
        if src_kind == "Facet" or dst_kind == "Facet":
            return self.episodes_by_facet.get(edge.src if src_kind == "Facet" else edge.dst, [])
        return []


@dataclass(frozen=True)
class Evidence:
    """What the scorer reads of one search: the best score per node and per edge text, the
    scores per collection (for corroboration), each collection's worst recalled score, and the
    unit rules' adjustment per FacetPoint. ``node_hits`` / ``edge_hits`` only feed the trace."""

    best: Mapping[UUID, float]
    edges: Mapping[str, float] = field(default_factory=dict)
    by_collection: Mapping[str, Mapping[UUID, float]] = field(default_factory=dict)
    worst: Mapping[str, float] = field(default_factory=dict)
    unit_adjust: Mapping[UUID, float] = field(default_factory=dict)
    facet_adjust: Mapping[UUID, float] = field(default_factory=dict)  # facet title rules
    node_hits: Mapping[UUID, Hit] = field(default_factory=dict)
    edge_hits: Mapping[str, Hit] = field(default_factory=dict)
    # A question about the present: the points a newer point of the search outdates
    # (:func:`memflow.recall.present.outdated_points`). Empty otherwise.
    outdated: Mapping[UUID, Outdated] = field(default_factory=dict)

    def d(self, node: UUID) -> float:
        return self.best.get(node, INF)

    def unit(self, point: UUID) -> float:
        """u(p): the point's distance plus the query-aware unit rules."""
        return self.best.get(point, INF) + self.unit_adjust.get(point, 0.0)

    def support(self, collection: str, node: UUID, missing: float) -> float:
        """The node's distance in ``collection``; not recalled: the collection's worst recalled
        distance, or ``missing`` when the collection recalled nothing."""
        got = self.by_collection.get(collection, {}).get(node)
        return got if got is not None else self.worst.get(collection, missing)


@dataclass(slots=True, unsafe_hash=True)
class Choice(Record):  # (not frozen: memflow.recall.types.Record)
    """How a facet or an episode reached its cheapest chain."""

    cost: float
    kind: PathKind
    facet: UUID | None = None
    point: UUID | None = None
    entity: UUID | None = None
    edge: GraphEdge | None = None

    def key(self) -> tuple[float, int]:
        return (round(self.cost, 9), PATH_PREFERENCE[self.kind])


@dataclass(slots=True, unsafe_hash=True)
class Support(Record):  # (not frozen: memflow.recall.types.Record)
    """The corroboration of an episode: each term's cost and the node it came from."""

    second: float = 0.0
    second_point: UUID | None = None
    window: float = 0.0
    window_facet: UUID | None = None
    summary: float = 0.0

    @property
    def total(self) -> float:
        return self.second + self.window + self.summary


def specificity(degree: int | None, episodes: int) -> float:
    """1 for an entity linked to one episode of many, 0 for one linked to all of them."""
    if episodes <= 1:
        return 1.0
    deg = max(1, min(degree or 1, episodes))
    return max(0.0, min(1.0, math.log((episodes + 1) / (deg + 1)) / math.log(episodes + 1)))


_PREFER_FACET = PATH_PREFERENCE["facet"]
_PREFER_POINT = PATH_PREFERENCE["point"]
_PREFER_FACET_ENTITY = PATH_PREFERENCE["facet_entity"]
_PREFER_ENTITY = PATH_PREFERENCE["entity"]
_PREFER_DIRECT = PATH_PREFERENCE["direct_episode"]


# A facet's cheapest chain: (its Choice.key, cost, kind, point, entity)
_FacetOption = tuple[tuple[float, int], float, PathKind, UUID | None, UUID | None]


class BundleScorer:
    """Chains, corroboration and EpisodeScore over one RelationshipIndex, cached per node.

    The cheapest option is the first one with the least :meth:`Choice.key` (as ``min`` picks
    it); options are compared by key and only the chosen one becomes a :class:`Choice`."""

    def __init__(self, index: RelationshipIndex, evidence: Evidence, config: RecallConfig) -> None:
        self.index = index
        self.ev = evidence
        self.config = config
        # (keyed by the ids' ints: the chains look up ~4,000 ids a search, and an int hashes in
        # C, a UUID in Python)
        self._facets: dict[int, _FacetOption] = {}
        self._entities: dict[int, float] = {}
        self._best = {node.int: d for node, d in evidence.best.items()}
        # u(p) of every recalled node (Evidence.unit: a node not recalled is INF whatever its
        # adjustment), one lookup per point
        adjust = {node.int: a for node, a in evidence.unit_adjust.items()}
        self._units = {p.int: d + adjust.get(p.int, 0.0) for p, d in evidence.best.items()}
        windows = evidence.by_collection.get(WINDOW_COLLECTION, {})
        self._windows = {f.int: d for f, d in windows.items()}
        self._facet_adjust = {f.int: a for f, a in evidence.facet_adjust.items()}

    def entity_cost(self, en: UUID) -> float:
        cached = self._entities.get(en.int)
        if cached is not None:
            return cached
        d = self._best.get(en.int, INF)
        if d == INF:
            cost = INF
        else:
            node = self.index.nodes.get(en)
            spec = specificity(node.degree if node else None, self.index.episode_count)
            cost = d + self.config.entity_cost + self.config.entity_generic_cost * (1.0 - spec)
        self._entities[en.int] = cost
        return cost

    def facet_cost(self, f: UUID) -> Choice:
        _, cost, kind, point, entity = self._facet(f)
        return Choice(cost, kind, facet=f, point=point, entity=entity)

    def _facet(self, f: UUID) -> _FacetOption:
        """FacetCost(f) as (its :meth:`Choice.key`, cost, kind, point, entity), made once per
        facet; a Choice is made only of the one an episode chooses (keys compared as their
        two numbers: no tuple per option)."""
        i = f.int
        cached = self._facets.get(i)
        if cached is not None:
            return cached
        cfg = self.config
        cost = self._best.get(i, INF) + cfg.facet_cost
        rounded, prefer = round(cost, 9), _PREFER_FACET
        kind: PathKind = "facet"
        point: UUID | None = None
        entity: UUID | None = None
        units, entities = self._units, self._entities
        for p in self.index.points_by_facet.get(f, ()):
            u = units.get(p.int, INF)
            if u < INF:
                c = u + cfg.point_cost
                r = round(c, 9)
                if r < rounded or (r == rounded and prefer > _PREFER_POINT):
                    rounded, prefer, cost = r, _PREFER_POINT, c
                    kind, point, entity = "point", p, None
        for en in self.index.entities_by_facet.get(f, ()):
            known = entities.get(en.int)
            c = self.entity_cost(en) if known is None else known
            if c < INF:
                c += cfg.facet_cost
                r = round(c, 9)
                if r < rounded or (r == rounded and prefer > _PREFER_FACET_ENTITY):
                    rounded, prefer, cost = r, _PREFER_FACET_ENTITY, c
                    kind, point, entity = "facet_entity", None, en
        adjust = self._facet_adjust.get(i, 0.0)
        if adjust:
            cost += adjust
        key = (round(cost, 9), PATH_PREFERENCE[kind])
        found = self._facets[i] = (key, cost, kind, point, entity)
        return found

    def episode_choice(self, e: UUID, edge_chains: Mapping[UUID, Choice]) -> Choice:
        cost = self._best.get(e.int, INF) + self.config.direct_cost
        key = (round(cost, 9), _PREFER_DIRECT)
        best: Choice | None = None  # None: the direct chain
        facet: tuple[UUID, _FacetOption] | None = None  # the best so far, when a facet's
        for f in self.index.facets_by_episode.get(e, ()):
            option = self._facet(f)
            if option[1] < INF and option[0] < key:
                key, facet = option[0], (f, option)
        entities = self._entities
        for en in self.index.entities_by_episode.get(e, ()):
            known = entities.get(en.int)
            c = self.entity_cost(en) if known is None else known
            if c < INF:
                k = (round(c, 9), _PREFER_ENTITY)
                if k < key:
                    key, best, facet = k, Choice(c, "entity", entity=en), None
        if facet is not None:
            f, (_, c, kind, point, entity) = facet
            best = Choice(c, kind, facet=f, point=point, entity=entity)
        chain = edge_chains.get(e)
        if chain is not None and chain.key() < key:
            best = chain
        return best if best is not None else Choice(cost, "direct_episode")

    def edge_chains(self) -> dict[UUID, Choice]:
        """The cheapest edge-text chain of each episode: an Edge_text hit is evidence for the
        episode its edge belongs to."""
        out: dict[UUID, Choice] = {}
        if not self.ev.edges:
            return out
        by_text = self.index.edges_with_texts(self.ev.edges)
        for text, score in self.ev.edges.items():
            cost = score + self.config.edge_cost
            for edge in by_text.get(text, ()):
                for e in self.index.episodes_of_edge(edge):
                    cur = out.get(e)
                    if cur is None or cost < cur.cost:
                        out[e] = Choice(cost, "edge", edge=edge)
        return out

    def support(self, e: UUID) -> Support:
        cfg = self.config
        # The two best units, the first of equals first (as a stable sort orders them).
        best = second = INF
        best_point: UUID | None = None
        second_point: UUID | None = None
        units = 0
        window, window_facet = INF, None
        unit_of, windows = self._units, self._windows
        points_by_facet = self.index.points_by_facet
        for f in self.index.facets_by_episode.get(e, ()):
            for p in points_by_facet.get(f, ()):
                u = unit_of.get(p.int, INF)
                if u < INF:
                    units += 1
                    if u < best:
                        second, second_point = best, best_point
                        best, best_point = u, p
                    elif u < second:
                        second, second_point = u, p
            w = windows.get(f.int)
            if w is not None and w < window:
                window, window_facet = w, f
        if window == INF:
            window = self.ev.worst.get(WINDOW_COLLECTION, cfg.missing_distance)
        gap = second - best if units > 1 else cfg.second_point_miss
        return Support(
            second=cfg.second_point_weight * gap,
            second_point=second_point if units > 1 else None,
            window=cfg.facet_support_weight * window,
            window_facet=window_facet,
            summary=cfg.summary_support_weight
            * self.ev.support(SUMMARY_COLLECTION, e, cfg.missing_distance),
        )


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
    """How much the time bonus would subtract (before the floor), 0 when it does not apply.
    A query that names one day ("on 14 March 2024", "2024年3月14日") adds ``time_bonus_day``:
    the date is then what the question is about, and that day's episodes should come first."""
    most = most_time_bonus(query_time, config)
    if node is None or query_time is None or most <= 0.0:
        return 0.0
    return most * time_overlap(node, query_time)


def most_time_bonus(query_time: TimeMatch | None, config: RecallConfig) -> float:
    """The most the time bonus can subtract for this query (0 without a confident time)."""
    if query_time is None or query_time.confidence < config.time_confidence_min:
        return 0.0
    span = _aware(query_time.end) - _aware(query_time.start)
    day = span <= timedelta(hours=config.day_span_hours)
    return config.time_bonus_max + (config.time_bonus_day if day else 0.0)


def _with_time_bonus(score: float, bonus: float, floor: float) -> float:
    if bonus <= 0 or score <= floor:
        return score
    return max(floor, score - bonus)


def _best_distance(scorer: BundleScorer, choice: Choice, e: UUID) -> float:
    """The raw distance of the node that decided the chain (a content-based tie-breaker)."""
    node = choice.point or choice.entity or choice.facet or e
    hit = scorer.ev.node_hits.get(node)
    return hit.distance if hit is not None else INF


def _present_bonus(
    index: RelationshipIndex,
    evidence: Evidence,
    chosen: Mapping[UUID, Choice],
    scores: Mapping[UUID, float],
    ahead: float,
) -> dict[UUID, float]:
    """A question about the present: an episode whose statement outdates the statement another
    episode was chosen by (its deciding point) takes that episode's place, just ahead of it
    (what it takes off its score); no other episode moves."""
    if not evidence.outdated:
        return {}
    episode_of: dict[UUID, UUID] = {}
    for f, points in index.points_by_facet.items():
        for e in index.episodes_by_facet.get(f, []):
            for p in points:
                episode_of.setdefault(p, e)
    out: dict[UUID, float] = {}
    for e, choice in chosen.items():
        later = evidence.outdated.get(choice.point) if choice.point is not None else None
        # Results move on what the write path decided (a closure, a link), not on wording.
        strong = later is not None and later.near and later.how in ("closed", "link")
        newer = episode_of.get(later.newer) if later is not None and strong else None
        if newer is None or newer == e or newer not in scores:
            continue
        gap = scores[newer] - scores[e] + ahead
        if gap > out.get(newer, 0.0):
            out[newer] = gap
    return out


def score_bundles(
    index: RelationshipIndex,
    evidence: Evidence,
    config: RecallConfig,
    query_time: TimeMatch | None = None,
    top_k: int = 10,
    trace: int | None = None,
    chains: dict[UUID, float] | None = None,
) -> list[Bundle]:
    """The ``top_k`` best Episodes, each with its deciding chain and corroboration; only the
    first ``trace`` (default: all) carry the explain path (the rest only rank units).
    ``chains``, when given, receives the cost of every ranked episode's deciding chain."""
    scorer = BundleScorer(index, evidence, config)
    edge_chains = scorer.edge_chains()
    scored = []
    for e in index.episodes:
        choice = scorer.episode_choice(e, edge_chains)
        if choice.cost == INF:
            continue
        support = scorer.support(e)
        bonus = time_bonus(index.nodes.get(e), query_time, config)
        score = _with_time_bonus(choice.cost + support.total, bonus, config.time_bonus_floor)
        scored.append((e, choice, support, score))
        if chains is not None:
            chains[e] = choice.cost
    newer = _present_bonus(
        index,
        evidence,
        {e: c for e, c, _, _ in scored},
        {e: score for e, _, _, score in scored},
        config.present_ahead,
    )
    ranked = []
    for e, choice, support, score in scored:
        score -= newer.get(e, 0.0)
        key = (
            round(score, 9),
            PATH_PREFERENCE[choice.kind],
            round(_best_distance(scorer, choice, e), 9),
            index.keys.get(e) or content_key(index.nodes.get(e)),
        )
        ranked.append((key, e, choice, support, score))
    top = heapq.nsmallest(top_k, ranked, key=lambda r: r[0])
    tracer = _Tracer(scorer)
    return [
        Bundle(
            episode_id=e,
            score=score,
            best_path=choice.kind,
            best_facet_id=choice.facet,
            best_point_id=choice.point,
            best_entity_id=choice.entity,
            path=tracer.path(e, choice, support, score) if trace is None or i < trace else [],
            recency=newer.get(e, 0.0),
        )
        for i, (_, e, choice, support, score) in enumerate(top)
    ]


class _Tracer:
    """The explain trace: the deciding chain node by node, then the corroboration terms."""

    def __init__(self, scorer: BundleScorer) -> None:
        self.s = scorer

    def node(self, node: UUID, kind: NodeKind, cost: float) -> PathStep:
        n = self.s.index.nodes.get(node)
        text = ""
        if n is not None:
            text = n.name if kind in ("Episode", "Entity") else (n.search_text or n.name)
        hit = self.s.ev.node_hits.get(node)
        return PathStep(
            kind="node",
            node_kind=kind,
            id=node,
            text=text,
            collection=hit.collection if hit else None,
            distance=hit.distance if hit else None,
            cost=cost,
        )

    def edge(self, a: UUID, b: UUID, cost: float, edge: GraphEdge | None = None) -> PathStep:
        edges = [edge] if edge else self.s.index.edges_between(a, b)
        e = edges[0] if edges else None
        hit = self.s.ev.edge_hits.get(e.edge_text) if e else None
        return PathStep(
            kind="edge",
            relationship=e.relationship if e else None,
            text=e.edge_text if e else "",
            collection=EDGE_COLLECTION if hit else None,
            distance=hit.distance if hit else None,
            cost=cost,
        )

    def _support(self, kind: NodeKind, node: UUID | None, label: str, cost: float) -> PathStep:
        hit = self.s.ev.node_hits.get(node) if node else None
        n = self.s.index.nodes.get(node) if node else None
        text = (n.search_text or n.name) if n is not None else ""
        return PathStep(
            kind="support",
            node_kind=kind,
            id=node,
            text=f"{label}: {text}" if text else label,
            collection=hit.collection if hit else None,
            distance=hit.distance if hit else None,
            cost=cost,
        )

    def path(self, e: UUID, choice: Choice, support: Support, score: float) -> list[PathStep]:
        s, cfg = self.s, self.s.config
        steps: list[PathStep] = []
        if choice.kind == "entity" and choice.entity:
            steps.append(self.node(choice.entity, "Entity", s.entity_cost(choice.entity)))
            steps.append(self.edge(choice.entity, e, 0.0))
        elif choice.kind == "edge" and choice.edge:
            hit = s.ev.edge_hits.get(choice.edge.edge_text)
            steps.append(
                PathStep(
                    kind="edge",
                    relationship=choice.edge.relationship,
                    text=choice.edge.edge_text,
                    collection=EDGE_COLLECTION,
                    distance=hit.distance if hit else None,
                    cost=choice.cost,
                )
            )
        elif choice.facet:
            f = choice.facet
            if choice.kind == "point" and choice.point:
                steps.append(self.node(choice.point, "FacetPoint", s.ev.unit(choice.point)))
                steps.append(self.edge(choice.point, f, cfg.point_cost))
                steps.append(self.node(f, "Facet", 0.0))
            elif choice.kind == "facet_entity" and choice.entity:
                steps.append(self.node(choice.entity, "Entity", s.entity_cost(choice.entity)))
                steps.append(self.edge(choice.entity, f, cfg.facet_cost))
                steps.append(self.node(f, "Facet", 0.0))
            else:
                steps.append(self.node(f, "Facet", choice.cost))
            steps.append(self.edge(f, e, 0.0))
        steps.append(
            self._support("FacetPoint", support.second_point, "second point", support.second)
        )
        steps.append(self._support("Facet", support.window_facet, "best window", support.window))
        steps.append(self._support("Episode", e, "summary", support.summary))
        # The direct chain's cost, the time bonus and the recency bonus (negative) show on the
        # episode node (Bundle.recency says how much of it is recency).
        own = choice.cost if choice.kind == "direct_episode" else 0.0
        steps.append(self.node(e, "Episode", own + score - choice.cost - support.total))
        return steps


__all__ = [
    "BundleScorer",
    "Choice",
    "Evidence",
    "RelationshipIndex",
    "Support",
    "content_key",
    "most_time_bonus",
    "score_bundles",
    "specificity",
    "time_bonus",
    "time_overlap",
]
