"""A dataset's graph cached in the process, so an unfiltered search projects and expands in
memory instead of in SQL (issue 28).

Every statement that writes a dataset's nodes, edges, documents, node sources or FacetPoint
embeddings gives it a new graph revision (revision 0009, in the writer's transaction; drawn from
one sequence, so never the same value twice, even for a dataset dropped and made again). A
search's recall statement returns the revision it read (and, when asked, every FacetPoint's
distance to the query): a :class:`CachedGraph` held at that revision answers ``project`` and
``expand_points`` of sql/recall.sql exactly as they would (the same rows, walked by the same
rules); any other revision loads the graph again (``graph_load``, one statement). Filtered
searches (document filters, scopes) keep the SQL: their rows depend on what they may see.

Each engine has its own :class:`GraphStore` (:func:`store_of`): connections of one engine run as
one role, so a role never reads a graph another role's connection loaded. Row-level security
shows a role a dataset whole or not at all, and the revision is read under it: a role that may
not read a dataset gets no revision, so no cache. Bounded: at most :data:`MAX_DATASETS`
datasets per engine, none with more than :data:`MAX_NODES` nodes (those keep the SQL).
"""

from __future__ import annotations

import threading
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Engine

from memflow.db.queries import q
from memflow.db.rows import column_index, columns
from memflow.recall.config import RecallConfig
from memflow.recall.scoring import content_key
from memflow.recall.sqlrecall import Clock, NodeTimes, node_clock
from memflow.recall.types import GraphEdge, GraphNode, Subgraph
from memflow.recall.visibility import Documents

# Memory, not quality: ~1 KB a node with its text and links, so a cached dataset holds at most
# ~20 MB (a LongMemEval-sized dataset has ~1,500 nodes); larger datasets keep the SQL path.
MAX_NODES = 20_000
MAX_DATASETS = 8  # per engine, least recently searched dropped first
_WALKED = ("has_point", "has_facet", "involves_entity")
_BASE = (
    "id", "kind", "name", "summary", "search_text", "anchor_text", "description", "facet_type",
    "created_at", "time_start", "time_end", "display_only",
)  # fmt: skip
_TIMES = ("valid_at", "recorded_at", "invalid_at", "superseded_by", "restates", "restated_by")


@dataclass(slots=True)
class _Node:
    base: tuple[Any, ...]  # GraphNode's fields up to display_only
    kind: str
    sources: str  # the JSON text `project` returns (cut to max_sources; '[]': no citations)
    speaker: str | None  # the stored first speaker
    cited: bool  # has citations (`project`'s provenance row exists)
    degree: int  # every edge into it
    times: Clock  # its sqlrecall._TIME_COLUMNS (made once: searches share it)
    documents: tuple[int, ...]  # the documents its cut sources cite (their ids' ints)
    key: str | None = None  # its content key (scoring.content_key), made when first asked
    # Its GraphNodes by (with sources, with speaker, degree) as one int, made once per cached
    # revision: searches share them (nothing changes a GraphNode: validity marks copies), and
    # with them their provenance, parsed once.
    made: dict[int, GraphNode] = field(default_factory=dict)

    def graph_node(self, sources: bool, speaker: bool, degree: int | None) -> GraphNode:
        key = (
            sources << 1 | speaker if degree is None else (degree + 1) << 2 | sources << 1 | speaker
        )
        node = self.made.get(key)
        if node is None:
            node = self.made[key] = GraphNode(
                *(
                    *self.base,
                    self.sources if sources else "[]",
                    self.speaker if speaker else None,
                    degree,
                )
            )
        return node


@dataclass
class CachedGraph:
    """One dataset's graph at ``revision``, as ``graph_load`` in sql/recall.sql read it. Nodes
    are keyed by their ids' ints (``UUID.int``): a UUID hashes in Python, an int in C, and a walk
    looks up ~20,000 keys; ``ids`` gives each its UUID back. ``project`` walks numbers instead:
    each id's place in the ids' order (``number``), so that a walk's rows are ints too."""

    revision: int
    max_sources: int
    episode_count: int = 0
    nodes: dict[int, _Node] = field(default_factory=dict)
    ids: dict[int, uuid.UUID] = field(default_factory=dict)
    # The walked links, each (src, relationship, dst, edge_text) once, made once per revision
    # and shared by searches; ``project`` walks their numbers.
    edges: list[GraphEdge] = field(default_factory=list)
    # Every id of a node or of an edge's end -> its number, in the ids' order (UUID order, as
    # their ints): ``project`` orders numbers as the SQL orders ids.
    number: dict[int, int] = field(default_factory=dict)
    numbered: list[_Node | None] = field(default_factory=list)  # number -> its node
    # By edge number: its ends' numbers, and whether it is a has_facet link (an Episode above)
    edge_src: list[int] = field(default_factory=list)
    edge_dst: list[int] = field(default_factory=list)
    edge_up: list[bool] = field(default_factory=list)
    # number -> the numbers of its walked parent edges, by text_hash then src: the order
    # `project` ranks them in (seed parents first, applied per search); and of its children
    parents: list[list[int]] = field(default_factory=list)
    children: list[list[int]] = field(default_factory=list)
    # number -> its children with parents from more than one node: the only ones a seed
    # among their parents can reorder (one parent node: seeds first is the order they have)
    shared: list[list[int]] = field(default_factory=list)
    tops: dict[int, list[list[int]]] = field(default_factory=dict)  # fanout -> :meth:`_tops`
    facets: dict[int, list[tuple[int, str]]] = field(default_factory=dict)  # has_facet
    points: dict[int, list[tuple[int, str]]] = field(default_factory=dict)  # has_point
    embedded: dict[int, int] = field(default_factory=dict)  # point -> its distance's index
    # by the id's int: (id, scope, metadata, created_at)
    documents: dict[int, tuple[uuid.UUID, Any, Any, Any]] = field(default_factory=dict)
    sources_of: dict[int, list[int]] = field(default_factory=dict)  # node_source, by number

    def project(
        self,
        ids: Sequence[uuid.UUID],
        config: RecallConfig,
        *,
        leaves: Collection[uuid.UUID] = (),
        with_sources: bool = True,
        times: NodeTimes | None = None,
        docs: Documents | None = None,
    ) -> Subgraph:
        """What sqlrecall.project returns for an unfiltered search (``project`` in
        sql/recall.sql, step by step)."""
        graph = Subgraph()
        if not ids:
            return graph
        fanout = config.hub_fanout
        number, size = self.number, len(self.numbered)
        # A seed the graph lacks gets a number past the graph's: it has no links, and its
        # (ord, depth 0) is its own, so where it sorts among equals never matters.
        order: list[int] = []
        for i in ids:
            known = number.get(i.int)
            order.append(size + len(order) if known is None else known)
        seeds = set(order)
        leaf = {number.get(i.int) for i in leaves}
        src_of, dst_of, up = self.edge_src, self.edge_dst, self.edge_up
        parents, shared = self.parents, self.shared
        # Each node's best ``fanout`` parents: the same for every search, but for the nodes a
        # seed is a parent of, whose parents are reordered (seeds first).
        top = self._tops(fanout)
        seeded = {dst for seed in order if seed < size for dst in shared[seed]}
        reordered: dict[int, list[int]] = {}

        def seeds_first(dst: int) -> list[int]:
            found = reordered.get(dst)
            if found is None:
                ranked = parents[dst]
                hit = [e for e in ranked if src_of[e] in seeds]
                ranked = hit + [e for e in ranked if src_of[e] not in seeds]
                found = reordered[dst] = ranked[:fanout]
            return found

        # Rows are ints: a level's row (node, ord, is_episode, dst, edge number) is its edge's
        # (src, has_facet, dst) and its ord, ``ord * width + edge``; a reached node's
        # [min ord, min depth] is ``ord << 2 | depth``. Each level is walked in ord order after
        # the one above it: a node's first row in a level has that level's least ord, and a
        # node reached before keeps its (smaller) depth.
        width = max(len(self.edges), 1)
        reached: dict[int, int] = {}
        lvl1: dict[int, None] = {}  # (DISTINCT)
        for ord_, seed in enumerate(order, 1):
            if seed not in reached:
                reached[seed] = ord_ << 2
            if seed in leaf or seed >= size:
                continue
            row = ord_ * width
            for edge in top[seed] if seed not in seeded else seeds_first(seed):
                lvl1[row + edge] = None
        lvl2: dict[int, None] = {}
        walked: list[int] = []  # the levels' edges, row by row (lvl1's, then lvl2's)
        for row in lvl1:
            ord_, edge = divmod(row, width)
            walked.append(edge)
            parent = src_of[edge]
            best = reached.get(parent)
            if best is None:
                reached[parent] = ord_ << 2 | 1
            elif ord_ < best >> 2:
                reached[parent] = ord_ << 2 | best & 3
            if up[edge]:
                continue
            above = ord_ * width
            walk = top[parent] if parent not in seeded else reordered.get(parent)
            for edge in walk if walk is not None else seeds_first(parent):
                lvl2[above + edge] = None
        for row in lvl2:
            ord_, edge = divmod(row, width)
            walked.append(edge)
            parent = src_of[edge]
            best = reached.get(parent)
            if best is None:
                reached[parent] = ord_ << 2 | 2
            elif ord_ < best >> 2:
                reached[parent] = ord_ << 2 | best & 3
        # by (ord, depth, id): the number in the low bits
        shift = (size + len(order)).bit_length()
        mask = (1 << shift) - 1
        ranked = sorted(at << shift | node for node, at in reached.items())
        kept_ids = [k & mask for k in ranked[: config.max_projection_nodes]]
        kept = set(kept_ids)
        cap = max(config.entity_degree_cap, fanout + 1)
        cited: list[int] = []  # the documents the kept nodes' sources cite, in their order
        sourced: list[tuple[int, uuid.UUID]] = []
        numbered, nodes = self.numbered, graph.nodes
        for key in kept_ids:
            n = numbered[key] if key < size else None
            if n is None:
                continue
            kind, node_id = n.kind, n.base[0]
            if kind == "Entity":
                degree = min(n.degree, cap)
                node = nodes[node_id] = n.graph_node(False, False, degree)
                graph.episode_count = self.episode_count
                if degree > fanout:
                    graph.notes.append(
                        f"hub guard: entity {node.name!r} has more than {fanout} links; "
                        f"only the {fanout} best were followed"
                    )
            elif n.cited and (
                kind in ("FacetPoint", "Episode") or (with_sources and kind == "Facet")
            ):
                nodes[node_id] = n.graph_node(True, kind == "FacetPoint", None)
                cited += n.documents
            else:
                nodes[node_id] = n.graph_node(False, False, None)
                if kind == "Episode":
                    sourced += [(d, node_id) for d in self.sources_of.get(key, ())]
            if times is not None:
                times[node_id] = n.times
        edges = self.edges
        graph.edges = [
            edges[edge]
            for edge in dict.fromkeys(walked)
            if src_of[edge] in kept and dst_of[edge] in kept
        ]
        if docs is not None:
            self._add_documents(docs, dict.fromkeys(cited), sourced)
        return graph

    def content_key(self, node: int) -> str | None:
        """scoring.content_key of the node with this id's int (None: no such node), made once
        per cached revision: it reads only what every GraphNode of the node shares."""
        n = self.nodes.get(node)
        if n is None:
            return None
        if n.key is None:
            n.key = content_key(GraphNode(*n.base))
        return n.key

    def _tops(self, fanout: int) -> list[list[int]]:
        """Each node's first ``fanout`` parent edges (made once per fanout: shared, only read)."""
        found = self.tops.get(fanout)
        if found is None:
            found = self.tops[fanout] = [p[:fanout] if len(p) > fanout else p for p in self.parents]
        return found

    def _add_documents(
        self,
        docs: Documents,
        cited: dict[int, None],
        sourced: list[tuple[int, uuid.UUID]],
    ) -> None:
        episodes: dict[int, list[uuid.UUID | None]] = {}
        for doc, episode in sourced:
            episodes.setdefault(doc, []).append(episode)
        for doc in {**cited, **dict.fromkeys(episodes)}:
            row = self.documents.get(doc)
            if row is None:
                continue
            doc_id, scope, metadata, created_at = row
            for source_of in episodes.get(doc, [None]):
                docs.add(doc_id, scope, metadata, created_at, source_of)

    def expand_points(
        self,
        distances: Sequence[float],
        episode_ids: Sequence[uuid.UUID],
        graph: Subgraph,
        times: NodeTimes | None = None,
        docs: Documents | None = None,
    ) -> Subgraph:
        """What sqlrecall.expand_points adds for an unfiltered search; ``distances``: the
        recall's point_distances, read at this revision."""
        known = {n.id.int for n in graph.nodes.values() if n.kind == "FacetPoint"}
        links = {(e.src.int, e.dst.int) for e in graph.edges if e.relationship == "has_facet"}
        uid = self.ids
        cited: dict[int, None] = {}
        for episode in dict.fromkeys(e.int for e in episode_ids):
            for facet, facet_text in self.facets.get(episode, ()):
                for point, point_text in self.points.get(facet, ()):
                    at = self.embedded.get(point)
                    n = self.nodes.get(point)
                    if point in known or at is None or n is None:
                        continue
                    point_id = n.base[0]
                    graph.nodes.setdefault(point_id, n.graph_node(True, True, None))
                    if times is not None:
                        times.setdefault(point_id, n.times)
                    graph.unit_distances[point_id] = float(distances[at])
                    if (episode, facet) not in links:
                        links.add((episode, facet))
                        graph.edges.append(
                            GraphEdge(uid[episode], "has_facet", uid[facet], facet_text)
                        )
                    if (facet, point) not in links:
                        links.add((facet, point))
                        graph.edges.append(GraphEdge(uid[facet], "has_point", point_id, point_text))
                    cited.update(dict.fromkeys(n.documents))
        if docs is not None:
            self._add_documents(docs, cited, [])
        return graph


def load(conn: Connection, dataset_id: uuid.UUID, max_sources: int) -> CachedGraph | None:
    """The dataset's graph (``graph_load``), None when it has no revision yet or is larger
    than :data:`MAX_NODES`."""
    result = conn.execute(
        q("graph_load"),
        {"dataset_id": dataset_id, "max_sources": max_sources, "budget": MAX_NODES},
    )
    keys = list(result.keys())
    kind_at = column_index(keys, "row_type")
    base, timed = columns(keys, *_BASE), columns(keys, *_TIMES)
    extra = columns(keys, "kind", "sources", "speaker", "cited", "degree", "documents")
    edge = columns(keys, "src", "relationship", "dst", "edge_text", "text_hash")
    size = columns(keys, "revision", "episode_count")
    doc = columns(keys, "id", "scope", "metadata", "created_at")
    graph: CachedGraph | None = None
    ranked: list[tuple[bytes, int, int, str, str, uuid.UUID, uuid.UUID]] = []
    embedded: list[int] = []
    sourced: dict[int, list[int]] = {}  # episode -> its source documents
    rows = result.all()
    for r in rows:
        if r[kind_at] == "size":
            revision, episodes = size(r)
            if revision is None or episodes is None:
                return None
            graph = CachedGraph(int(revision), max_sources, int(episodes))
    if graph is None:
        return None
    for r in rows:
        row_type = r[kind_at]
        if row_type == "node":
            kind, sources, speaker, cited, degree, documents = extra(r)
            b = base(r)
            graph.nodes[b[0].int] = _Node(
                b, kind, sources, speaker, bool(cited), int(degree), node_clock(timed(r)),
                tuple(d.int for d in documents),
            )  # fmt: skip
            graph.ids[b[0].int] = b[0]
        elif row_type == "edge":
            src, rel, dst, text, text_hash = edge(r)
            ranked.append((bytes(text_hash), src.int, dst.int, rel, text, src, dst))
        elif row_type == "point":
            embedded.append(r[column_index(keys, "id")].int)
        elif row_type == "document":
            d, scope, metadata, created_at = doc(r)
            graph.documents[d.int] = (d, scope, metadata, created_at)
        elif row_type == "source":
            d, episode = r[column_index(keys, "id")], r[column_index(keys, "src")]
            sourced.setdefault(episode.int, []).append(d.int)
    ranked.sort(key=lambda e: (e[0], e[1]))
    every = sorted({*graph.nodes, *(e[1] for e in ranked), *(e[2] for e in ranked)})
    number = graph.number = {i: n for n, i in enumerate(every)}
    graph.numbered = [graph.nodes.get(i) for i in every]
    graph.parents = [[] for _ in every]
    graph.children = [[] for _ in every]
    numbers: dict[tuple[int, str, int, str], int] = {}
    for _, src, dst, rel, text, src_id, dst_id in ranked:
        # (the nodes' own id objects: the scorer's lookups then compare by identity)
        src_id = graph.ids.setdefault(src, src_id)
        dst_id = graph.ids.setdefault(dst, dst_id)
        up = rel == "has_facet"
        at = numbers.setdefault((src, rel, dst, text), len(graph.edges))
        if at == len(graph.edges):
            graph.edges.append(GraphEdge(src_id, rel, dst_id, text))  # type: ignore[arg-type]
            graph.edge_src.append(number[src])
            graph.edge_dst.append(number[dst])
            graph.edge_up.append(up)
        graph.parents[number[dst]].append(at)
        graph.children[number[src]].append(number[dst])
        if up:
            graph.facets.setdefault(src, []).append((dst, text))
        elif rel == "has_point":
            graph.points.setdefault(src, []).append((dst, text))
    parents_of = [{graph.edge_src[e] for e in edges} for edges in graph.parents]
    graph.shared = [[c for c in below if len(parents_of[c]) > 1] for below in graph.children]
    for episode, documents in sourced.items():
        if episode in number:  # (only nodes are walked)
            graph.sources_of[number[episode]] = documents
    embedded.sort()  # the recall's point_distances: node id order
    graph.embedded = {p: i for i, p in enumerate(embedded)}
    return graph


class GraphStore:
    """The graphs one engine's searches cached, by dataset (bounded, thread-safe)."""

    def __init__(self) -> None:
        self._graphs: OrderedDict[uuid.UUID, CachedGraph | int] = OrderedDict()
        self._lock = threading.Lock()

    def holds(self, dataset_id: uuid.UUID) -> bool:
        """Whether a graph of the dataset is cached (at any revision)."""
        return isinstance(self._graphs.get(dataset_id), CachedGraph)

    def ids_of(self, dataset_id: uuid.UUID) -> dict[int, uuid.UUID] | None:
        """The node ids of the dataset's cached graph (at any revision), by their ints: a
        search's hits take these objects, so that its lookups into the graph find their keys
        by identity (a UUID compares equal in Python)."""
        found = self._graphs.get(dataset_id)
        return found.ids if isinstance(found, CachedGraph) else None

    def at(
        self, dataset_id: uuid.UUID, revision: int | None, max_sources: int
    ) -> CachedGraph | None:
        """The dataset's graph at ``revision``, if cached."""
        with self._lock:
            found = self._graphs.get(dataset_id)
            if (
                revision is None
                or not isinstance(found, CachedGraph)
                or found.revision != revision
                or found.max_sources != max_sources
            ):
                return None
            self._graphs.move_to_end(dataset_id)
            return found

    def too_big(self, dataset_id: uuid.UUID, revision: int | None) -> bool:
        """Whether the dataset was larger than :data:`MAX_NODES` at ``revision``."""
        return revision is not None and self._graphs.get(dataset_id) == revision

    def load(
        self, conn: Connection, dataset_id: uuid.UUID, revision: int, max_sources: int
    ) -> CachedGraph | None:
        """Load and keep the dataset's graph (``revision``: the recall's, remembered when the
        dataset is too large to cache)."""
        graph = load(conn, dataset_id, max_sources)
        with self._lock:
            self._graphs[dataset_id] = graph if graph is not None else revision
            self._graphs.move_to_end(dataset_id)
            while len(self._graphs) > MAX_DATASETS:
                self._graphs.popitem(last=False)
        return graph


_STORES: weakref.WeakKeyDictionary[Engine, GraphStore] = weakref.WeakKeyDictionary()
_STORES_LOCK = threading.Lock()


def store_of(engine: Engine) -> GraphStore:
    """The engine's graph store (made on first use, dropped with the engine)."""
    with _STORES_LOCK:
        store = _STORES.get(engine)
        if store is None:
            store = _STORES[engine] = GraphStore()
        return store


__all__ = ["MAX_DATASETS", "MAX_NODES", "CachedGraph", "GraphStore", "load", "store_of"]
