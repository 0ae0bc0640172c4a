"""The database half of search: bind, wide vector recall, graph projection, baselines.

Each function runs one named statement from ``sql/recall.sql`` on a connection whose transaction
was bound by :func:`bind`.
"""

from __future__ import annotations

import re
import struct
import uuid
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any

from sqlalchemy import Connection

from memflow.db.queries import q
from memflow.db.rows import column_index, columns
from memflow.embed.base import Vector
from memflow.recall.config import RecallConfig
from memflow.recall.temporal import linked_ids
from memflow.recall.types import GraphEdge, GraphNode, Hit, Subgraph
from memflow.recall.visibility import Documents, Visible, params

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*", re.UNICODE)
_STOP = frozenset(
    (
        "a an the and or but of to in on at for from by with about as is are was were be "
        "been being do does did done have has had what which who whom whose when where "
        "why how that this these those it its i you he she we they me him her us them my "
        "your his our their not no yes can could would should will shall may might must "
    ).split()
)


def bind(
    conn: Connection,
    dataset_id: uuid.UUID,
    ef_search: int,
    exact_nodes: int = 0,
    exact_share: float = 0.0,
) -> bool:
    """Bind the search transaction to ``dataset_id``. True when :func:`recall` should sort the
    dataset exactly: it holds at most ``exact_nodes`` nodes and at most ``exact_share`` of the
    store's (``bind_search``)."""
    row = conn.execute(
        q("bind_search"),
        {
            "dataset_id": str(dataset_id),
            "ef_search": str(ef_search),
            "exact_nodes": exact_nodes,
            "exact_share": exact_share,
        },
    ).one()
    return bool(row.exact)


@dataclass(frozen=True)
class Recalled:
    """The wide recall's hits, and whether the dataset holds any replaced node (``replaced``:
    False lets a search without clocks skip validity, :mod:`memflow.recall.temporal`); the
    dataset's graph revision (None: none yet) and, when asked, every FacetPoint's distance to
    the query in node id order (:mod:`memflow.recall.graphcache`)."""

    hits: list[Hit]
    replaced: bool
    revision: int | None = None
    point_distances: list[float] | None = None


def recall(
    conn: Connection,
    dataset_id: uuid.UUID,
    qvec: Vector,
    k: int,
    visible: Visible | None = None,
    *,
    exact: bool = False,
    point_distances: bool = False,
    ids: Mapping[int, uuid.UUID] | None = None,
) -> Recalled:
    """The wide recall; ``exact`` (from :func:`bind`) sorts every branch instead of an HNSW scan.
    ``ids``: id objects by their ints for the hits' node ids to take (a cached graph's)."""
    result = conn.execute(
        q("recall"),
        {
            "dataset_id": dataset_id,
            "q": qvec,
            "k": k,
            "exact": exact,
            "point_distances": point_distances,
            **params(visible),
        },
    )
    keys = list(result.keys())
    hit = columns(keys, "collection", "node_id", "text_hash", "text", "distance")
    dataset = columns(keys, "any_superseded", "revision", "point_distances")
    hits: list[Hit] = []
    replaced, revision, distances = False, None, None
    for row in result.all():
        collection, node_id, text_hash, text, distance = hit(row)
        if collection is None:  # the last row: the dataset's columns
            replaced, revision, distances = dataset(row)
            continue
        if ids is not None and node_id is not None:
            node_id = ids.get(node_id.int, node_id)
        d = float(distance)
        # (positional: ~500 a search; Hit(collection, text, distance, node_id, score, hash))
        hits.append(
            Hit(
                collection, text, d, node_id, d, bytes(text_hash) if text_hash is not None else None
            )
        )
    # (float8send's bytes: big-endian doubles)
    points = (
        None if distances is None else list(struct.unpack(f">{len(distances) // 8}d", distances))
    )
    return Recalled(hits, bool(replaced), revision, points)


def project(
    conn: Connection,
    dataset_id: uuid.UUID,
    ids: list[uuid.UUID],
    config: RecallConfig,
    *,
    leaves: Collection[uuid.UUID] = (),
    with_sources: bool = True,
    visible: Visible | None = None,
    times: NodeTimes | None = None,
    docs: Documents | None = None,
) -> Subgraph:
    """The subgraph above the hit ``ids`` (see ``project`` in sql/recall.sql). ``leaves`` are
    hits known to be Episodes (nothing above them); ``with_sources=False`` skips the chunk keys,
    which only evidence units (``highly_related``) use. ``times`` collects each node's times
    (:func:`with_times`), ``docs`` the documents of the results."""
    if not ids:
        return Subgraph()
    leaf_set = set(leaves)
    result = conn.execute(
        q("project"),
        {
            "dataset_id": dataset_id,
            "ids": ids,
            "leaves": [i for i in ids if i in leaf_set],
            "fanout": config.hub_fanout,
            "max_nodes": config.max_projection_nodes,
            "with_sources": with_sources,
            "degree_cap": config.entity_degree_cap,
            "max_sources": config.max_sources,
            **params(visible),
        },
    )
    # (all rows in one fetch: iterating the result fetches them one at a time)
    return _subgraph(list(result.keys()), result.all(), config, Subgraph(), times, docs)


def expand(
    conn: Connection,
    dataset_id: uuid.UUID,
    episode_ids: list[uuid.UUID],
    graph: Subgraph,
    config: RecallConfig,
    visible: Visible | None = None,
    times: NodeTimes | None = None,
) -> Subgraph:
    """``graph`` plus the facets, points and entities of ``episode_ids`` (detail display)."""
    if not episode_ids:
        return graph
    result = conn.execute(
        q("expand"), {"dataset_id": dataset_id, "episode_ids": episode_ids, **params(visible)}
    )
    keys, rows = list(result.keys()), result.all()
    known = {(e.src, e.relationship, e.dst) for e in graph.edges}
    fresh = [
        r
        for r in rows
        if (r.row_type == "node" and r.id not in graph.nodes)
        or (r.row_type == "edge" and (r.src, r.relationship, r.dst) not in known)
    ]
    merged = Subgraph(nodes=dict(graph.nodes), edges=list(graph.edges), notes=list(graph.notes))
    return _subgraph(keys, fresh, config, merged, times)


# GraphNode's fields are the projection statements' column names (sql/recall.sql), but for its
# last, replaced_at, which validity sets after the projection (memflow.recall.temporal).
_NODE_COLUMNS = tuple(f.name for f in fields(GraphNode) if f.name != "replaced_at")
_EDGE_COLUMNS = tuple(f.name for f in fields(GraphEdge))
# What `node_times` (sql/temporal.sql) reads, on every node row of the statements above.
_TIME_COLUMNS = (
    "valid_at",
    "recorded_at",
    "invalid_at",
    "superseded_by",
    "restates",
    "restated_by",
)
_uuid_int = attrgetter("int")
# A node's _TIME_COLUMNS as a search keeps them (:func:`node_clock`); by node id, collected over
# a search's statements.
Clock = tuple[dict[str, Any], Any, Any]
NodeTimes = dict[uuid.UUID, Clock]


def node_clock(row: Sequence[Any]) -> Clock:
    """A node's _TIME_COLUMNS: its times and validity by name (what ``Subgraph.times`` holds;
    never changed once made, so a cached graph's are shared by its searches) and its restates /
    restated_by links as stored."""
    valid_at, recorded_at, invalid_at, superseded_by, restates, restated_by = row
    times = {
        "valid_at": valid_at,
        "recorded_at": recorded_at,
        "invalid_at": invalid_at,
        "superseded_by": superseded_by,
    }
    return times, restates, restated_by


def with_times(graph: Subgraph, times: NodeTimes) -> Subgraph:
    """The subgraph with the times and validity of its nodes and their links to the other
    nodes of it, from the rows its statements returned: what
    :func:`memflow.recall.temporal.node_times` reads, without a statement."""
    if not graph.nodes:
        return graph
    out: dict[uuid.UUID, dict[str, Any]] = {}
    links: dict[uuid.UUID, tuple[tuple[uuid.UUID, str], ...]] = {}
    for node in sorted(graph.nodes, key=_uuid_int):  # (UUIDs' order, C comparisons)
        row = times.get(node)
        if row is None:
            continue
        out[node], restates, restated_by = row
        if not (restates or restated_by):  # (most nodes: no links to parse)
            continue
        found = tuple(
            (other, role)
            for role, given in (("restates", restates), ("restated_by", restated_by))
            for other in linked_ids(given)
            if other in graph.nodes
        )
        if found:
            links[node] = found
    graph.times, graph.links = out, links
    return graph


def _subgraph(
    keys: Sequence[str],
    rows: Iterable[Any],
    config: RecallConfig,
    graph: Subgraph,
    times: NodeTimes | None = None,
    docs: Documents | None = None,
) -> Subgraph:
    """Node, edge and document rows of the projection statements added to ``graph`` (the
    documents to ``docs``). Columns are read by name, resolved once per result
    (:mod:`memflow.db.rows`: the hot path of a search builds ~600 nodes and ~700 edges)."""
    row_type, count = column_index(keys, "row_type"), column_index(keys, "episode_count")
    node, edge = columns(keys, *_NODE_COLUMNS), columns(keys, *_EDGE_COLUMNS)
    timed = columns(keys, *_TIME_COLUMNS)
    same: dict[Any, Any] = {i: i for i in graph.nodes}
    # (`expand`, of the detail display, returns no documents: its nodes cite none)
    document = _documents(keys) if "sourced_episode" in keys else None
    for r in rows:
        kind = r[row_type]
        if kind == "document":
            if docs is not None and document is not None:
                docs.add(*document(r))
            continue
        if kind == "node":
            n = GraphNode(*node(r))
            graph.nodes[n.id] = n
            same[n.id] = n.id
            if times is not None:
                times[n.id] = node_clock(timed(r))
            if r[count] is not None:
                graph.episode_count = int(r[count])
            if n.degree is not None and n.degree > config.hub_fanout:
                graph.notes.append(
                    f"hub guard: entity {n.name!r} has more than {config.hub_fanout} links; "
                    f"only the {config.hub_fanout} best were followed"
                )
        else:
            src, relationship, dst, edge_text = edge(r)
            # (the nodes' own id objects: the scorer's lookups then compare by identity)
            graph.edges.append(
                GraphEdge(same.get(src) or src, relationship, same.get(dst) or dst, edge_text)
            )
    return graph


_EXPAND_COLUMNS = ("episode_id", "facet_id", "facet_edge_text", "point_edge_text", "distance")


def _documents(keys: Sequence[str]) -> Any:
    """The ``document`` rows' columns, as :meth:`Documents.add` takes them."""
    return columns(keys, "id", "scope", "metadata", "created_at", "sourced_episode")


def expand_points(
    conn: Connection,
    dataset_id: uuid.UUID,
    qvec: Vector,
    episode_ids: Sequence[uuid.UUID],
    graph: Subgraph,
    config: RecallConfig,
    visible: Visible | None = None,
    times: NodeTimes | None = None,
    docs: Documents | None = None,
) -> Subgraph:
    """``graph`` plus the FacetPoints of ``episode_ids`` it lacks, with their exact distances in
    ``unit_distances`` (the highly_related context only; see ``expand_points`` in
    sql/recall.sql), and the documents they cite to ``docs``."""
    if not episode_ids:
        return graph
    known = [n.id for n in graph.nodes.values() if n.kind == "FacetPoint"]
    result = conn.execute(
        q("expand_points"),
        {
            "dataset_id": dataset_id,
            "q": qvec,
            "episode_ids": list(episode_ids),
            "known": known,
            "max_sources": config.max_sources,
            **params(visible),
        },
    )
    keys = list(result.keys())
    node, extra = columns(keys, *_NODE_COLUMNS), columns(keys, *_EXPAND_COLUMNS)
    timed, document = columns(keys, *_TIME_COLUMNS), _documents(keys)
    row_type = column_index(keys, "row_type")
    # A fetched point is new to the graph, so is its has_point link (once per facet and point);
    # its facet's has_facet link may be known.
    links = {(e.src, e.dst) for e in graph.edges if e.relationship == "has_facet"}
    for r in result.all():
        if r[row_type] == "document":
            if docs is not None:
                docs.add(*document(r))
            continue
        n = GraphNode(*node(r))
        episode, facet, facet_text, point_text, distance = extra(r)
        graph.nodes.setdefault(n.id, n)
        if times is not None and n.id not in times:
            times[n.id] = node_clock(timed(r))
        graph.unit_distances[n.id] = float(distance)
        if (episode, facet) not in links:
            links.add((episode, facet))
            graph.edges.append(GraphEdge(episode, "has_facet", facet, facet_text))
        if (facet, n.id) not in links:
            links.add((facet, n.id))
            graph.edges.append(GraphEdge(facet, "has_point", n.id, point_text))
    return graph


def vector_units(
    conn: Connection,
    dataset_id: uuid.UUID,
    qvec: Vector,
    k: int,
    *,
    max_sources: int,
    include_facets: bool = True,
    visible: Visible | None = None,
) -> list[Any]:
    return list(
        conn.execute(
            q("vector_units"),
            {
                "dataset_id": dataset_id,
                "q": qvec,
                "k": k,
                "max_sources": max_sources,
                "include_facets": include_facets,
                **params(visible),
            },
        ).all()
    )


def tsquery_for(query: str) -> str:
    """An OR query of the words of ``query`` (stop words dropped), each quoted as one lexeme."""
    words = [w.lower() for w in _WORD.findall(query)]
    kept = [w for w in words if w not in _STOP] or words
    seen: dict[str, None] = {}
    for w in kept:
        seen.setdefault(w.replace("'", "''"), None)
    return " | ".join(f"'{w}'" for w in seen)


def lexical_units(
    conn: Connection, dataset_id: uuid.UUID, query: str, k: int, visible: Visible | None = None
) -> list[Any]:
    tsq = tsquery_for(query)
    trigram = bool(_CJK.search(query))
    if not tsq and not trigram:
        return []
    return list(
        conn.execute(
            q("lexical_units"),
            {
                "dataset_id": dataset_id,
                "tsquery": tsq or "''",
                "raw": query,
                "trigram": trigram,
                "k": k,
                **params(visible),
            },
        ).all()
    )
