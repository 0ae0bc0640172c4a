"""Search that knows time (revision 0004): validity of what a search touched.

- Without ``as_of``, a replaced fact still answers but costs ``superseded_penalty`` more (a Facet
  or Episode: times the share of its points that were replaced), and is shown with its validity
  ("until 2023-03-09"). A query about the past ("before", "used to", "以前", "之前") moves the cost
  to the facts that replaced others.
- Two clocks. ``as_of`` reads the sources' own dates (``recorded_at``: a message's time, a note's
  heading, front matter, title or file name date, else its reference time): what was true at
  that time. ``known_at`` reads the store's clock (``created_at``, when the row was written): what
  memflow knew at that time. Either leaves out the nodes that come later on its clock, and a fact
  counts as replaced only if its replacement had come by then on both (and, for ``as_of``, it
  stopped holding by then).

Datasets without a replaced fact skip all of it (one indexed EXISTS) unless a clock is set, so
their ranking is exactly what it was before revision 0004.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from memflow.db.queries import q
from memflow.recall.config import RecallConfig
from memflow.recall.types import (
    SUPERSEDED_MARK,
    GraphEdge,
    GraphNode,
    Hit,
    SearchResponse,
    Subgraph,
)
from memflow.store.temporal import Clocks
from memflow.text.tense import asks_about_the_past


def _day(t: datetime | None) -> str:
    return t.date().isoformat() if t is not None else "?"


# Kinds whose rows come and go with time; an Entity (a shared name) holds while any visible
# episode links to it.
_TIMED_KINDS = frozenset({"Episode", "Facet", "FacetPoint"})


@dataclass(frozen=True)
class NodeState:
    id: uuid.UUID
    kind: str
    text: str | None
    recorded_at: datetime | None
    invalid_at: datetime | None
    superseded_by: uuid.UUID | None
    superseder_recorded_at: datetime | None
    superseder_text: str | None
    supersedes: bool
    points: int
    closed_points: int
    created_at: datetime | None = None
    superseder_created_at: datetime | None = None


class Validity:
    """What holds at the search's :class:`Clocks` (None: now) among the nodes loaded so far."""

    def __init__(self, as_of: datetime | None, known_at: datetime | None = None) -> None:
        self.clocks = Clocks(as_of, known_at)
        self.as_of = as_of
        self.nodes: dict[uuid.UUID, NodeState] = {}

    def load(self, conn: Connection, ds: uuid.UUID, ids: Iterable[uuid.UUID]) -> None:
        missing = sorted({i for i in ids if i not in self.nodes})
        if not missing:
            return
        rows = conn.execute(
            q("temporal_nodes"), {"dataset_id": ds, "ids": missing, **self.clocks.params()}
        ).all()
        for r in rows:
            self.nodes[r.id] = NodeState(
                r.id, r.kind, r.search_text, r.recorded_at, r.invalid_at, r.superseded_by,
                r.superseder_recorded_at, r.superseder_text, bool(r.supersedes), int(r.points or 0),
                int(r.closed_points or 0), r.created_at, r.superseder_created_at,
            )  # fmt: skip

    def future(self, node: uuid.UUID) -> bool:
        s = self.nodes.get(node)
        if s is None or s.kind not in _TIMED_KINDS or not self.clocks.set:
            return False
        return self.clocks.future(s.recorded_at, s.created_at)

    def closed(self, node: uuid.UUID) -> bool:
        s = self.nodes.get(node)
        if s is None or s.invalid_at is None:
            return False
        return self.clocks.closed_by(
            s.invalid_at, s.superseder_recorded_at, s.superseder_created_at
        )

    def stale_share(self, node: uuid.UUID) -> float:
        if self.closed(node):
            return 1.0
        s = self.nodes.get(node)
        return s.closed_points / s.points if s is not None and s.points else 0.0


def load(
    conn: Connection,
    ds: uuid.UUID,
    ids: Iterable[uuid.UUID],
    as_of: datetime | None,
    known_at: datetime | None = None,
) -> Validity | None:
    """The validity of ``ids``; None when the dataset has nothing replaced and no clock is set."""
    if (
        as_of is None
        and known_at is None
        and not conn.execute(q("temporal_any"), {"dataset_id": ds}).scalar_one()
    ):
        return None
    v = Validity(as_of, known_at)
    v.load(conn, ds, ids)
    return v


def adjust_hits(
    hits: Sequence[Hit],
    v: Validity,
    query: str,
    cfg: RecallConfig,
    closed_edges: frozenset[bytes] = frozenset(),
) -> list[Hit]:
    """Hits without the nodes learned after ``as_of``; replaced facts and the edge texts of
    replaced links (or, for a query about the past, the facts that replaced them) farther away
    by ``superseded_penalty``. The replacement of a replaced point is recalled at least as close
    as the old point was: the current value answers where the old one would have."""
    past = asks_about_the_past(query)
    heirs: dict[uuid.UUID, Hit] = {}
    if not past:
        for h in hits:
            s = v.nodes.get(h.node_id) if h.node_id is not None else None
            if s is None or s.kind != "FacetPoint" or s.superseded_by is None:
                continue
            if v.closed(s.id) and not v.future(s.superseded_by):
                heir = heirs.get(s.superseded_by)
                if heir is None or h.distance < heir.distance:
                    heirs[s.superseded_by] = Hit(
                        h.collection, s.superseder_text or "", h.distance, s.superseded_by
                    )
    out: list[Hit] = []
    for h in hits:
        if h.node_id is None:
            closed = h.edge_text_hash is not None and h.edge_text_hash in closed_edges
            out.append(_farther(h, cfg.superseded_penalty) if closed and not past else h)
            continue
        node = h.node_id
        if v.future(node):
            continue
        heir = heirs.pop(node, None)
        if heir is not None and heir.distance < h.distance:
            h = Hit(h.collection, h.text, heir.distance, node, heir.distance)
        s = v.nodes.get(node)
        if past:
            share = 1.0 if s is not None and s.supersedes and not v.closed(node) else 0.0
        else:
            share = v.stale_share(node)
        out.append(_farther(h, cfg.superseded_penalty * share) if share else h)
    return out + list(heirs.values())


def _farther(h: Hit, by: float) -> Hit:
    d = h.distance + by
    return Hit(h.collection, h.text, d, h.node_id, d, h.edge_text_hash)


def closed_edge_hashes(
    conn: Connection, ds: uuid.UUID, hits: Sequence[Hit], v: Validity
) -> frozenset[bytes]:
    """Edge texts whose every edge is closed (as of ``as_of``)."""
    hashes = [h.edge_text_hash for h in hits if h.edge_text_hash is not None]
    if not hashes:
        return frozenset()
    rows = conn.execute(
        q("closed_edge_texts"), {"dataset_id": ds, "hashes": hashes, **v.clocks.params()}
    ).all()
    return frozenset(bytes(r.text_hash) for r in rows)


def _marked(text: str, until: datetime | None) -> str:
    return f"{text} {SUPERSEDED_MARK} {_day(until)}]"


def mark_graph(
    conn: Connection, ds: uuid.UUID, graph: Subgraph, v: Validity, *, include_history: bool
) -> Subgraph:
    """The subgraph without nodes learned after ``as_of``, each replaced point shown with its
    validity (also where episode summaries and facet texts quote it), and with
    ``include_history`` each current point followed by what it replaced."""
    v.load(conn, ds, graph.nodes)
    keep = {i: n for i, n in graph.nodes.items() if not v.future(i)}
    parents = [i for i, n in keep.items() if n.kind in ("Episode", "Facet")]
    quoted: dict[str, str] = {}
    if parents:
        for r in conn.execute(q("closed_points_of"), {"dataset_id": ds, "ids": parents}):
            closed = v.clocks.closed_by(
                r.invalid_at, r.superseder_recorded_at, r.superseder_created_at
            )
            if closed and r.search_text:
                quoted[r.search_text] = _marked(r.search_text, r.invalid_at)
    history: dict[uuid.UUID, list[str]] = {}
    if include_history:
        points = [i for i, n in keep.items() if n.kind == "FacetPoint" and not v.closed(i)]
        history = _replaced_by(conn, ds, points)
    nodes: dict[uuid.UUID, GraphNode] = {}
    for i, n in keep.items():
        done = n.replaced_at is not None or "[replaces:" in (n.search_text or "")
        if done:
            pass
        elif n.kind == "FacetPoint" and v.closed(i):
            s = v.nodes[i]
            n = replace(
                n,
                search_text=_marked(n.search_text or n.name, s.invalid_at),
                replaced_at=s.invalid_at,
            )
        elif n.kind == "FacetPoint" and i in history:
            n = replace(n, search_text=f"{n.search_text} [replaces: {'; '.join(history[i])}]")
        elif quoted and n.kind in ("Episode", "Facet"):
            n = replace(
                n, summary=_quote(n.summary, quoted), anchor_text=_quote(n.anchor_text, quoted)
            )
        nodes[i] = n
    edges: list[GraphEdge] = [e for e in graph.edges if e.src in nodes and e.dst in nodes]
    return Subgraph(
        nodes, edges, list(graph.notes), graph.episode_count,
        {k: d for k, d in graph.unit_distances.items() if k in nodes},
    )  # fmt: skip


def _replaced_by(
    conn: Connection, ds: uuid.UUID, ids: list[uuid.UUID]
) -> dict[uuid.UUID, list[str]]:
    """What each of ``ids`` replaced, with its validity ("... (until 2023-03-09)")."""
    history: dict[uuid.UUID, list[str]] = {}
    for r in conn.execute(q("replaced_by_any"), {"dataset_id": ds, "ids": ids}):
        history.setdefault(r.superseded_by, []).append(
            f"{r.search_text} (until {_day(r.invalid_at)})"
        )
    return history


def unit_texts(
    conn: Connection,
    ds: uuid.UUID,
    units: Sequence[tuple[uuid.UUID | None, str]],
    as_of: datetime | None,
    include_history: bool,
    known_at: datetime | None = None,
) -> list[str | None]:
    """The ``vector`` and ``lexical`` modes' units (node id, text) at the clocks: None for a
    unit that came after them, a replaced fact's text marked with its validity, and with
    ``include_history`` a current fact's text followed by what it replaced. Their order is left
    alone: a baseline ranks by similarity only."""
    texts: list[str | None] = [text for _, text in units]
    v = load(conn, ds, [i for i, _ in units if i is not None], as_of, known_at)
    if v is None:
        return texts
    current = [i for i, _ in units if i is not None and not v.future(i) and not v.closed(i)]
    history = _replaced_by(conn, ds, current) if include_history else {}
    for k, (node, text) in enumerate(units):
        if node is None:
            continue
        if v.future(node):
            texts[k] = None
        elif v.closed(node):
            texts[k] = _marked(text, v.nodes[node].invalid_at)
        elif node in history:
            texts[k] = f"{text} [replaces: {'; '.join(history[node])}]"
    return texts


def _quote(text: str | None, quoted: dict[str, str]) -> str | None:
    if not text:
        return text
    for old, new in quoted.items():
        if old in text and new not in text:
            text = text.replace(old, new)
    return text


def node_times(conn: Connection, ds: uuid.UUID, graph: Subgraph) -> Subgraph:
    """The subgraph with the times and validity of its nodes and their links to the other
    nodes of it (one statement)."""
    if not graph.nodes:
        return graph
    times: dict[uuid.UUID, dict[str, Any]] = {}
    links: dict[uuid.UUID, tuple[tuple[uuid.UUID, str], ...]] = {}
    for r in conn.execute(q("node_times"), {"dataset_id": ds, "ids": sorted(graph.nodes)}):
        times[r.id] = {
            "valid_at": r.valid_at,
            "recorded_at": r.recorded_at,
            "invalid_at": r.invalid_at,
            "superseded_by": r.superseded_by,
        }
        found = tuple(
            (other, role)
            for role, given in (("restates", r.restates), ("restated_by", r.restated_by))
            for other in linked_ids(given)
            if other in graph.nodes
        )
        if found:
            links[r.id] = found
    graph.times, graph.links = times, links
    return graph


def linked_ids(given: Any) -> list[uuid.UUID]:
    """The node ids of a ``restates`` / ``restated_by`` list ([[id, score], ...])."""
    out = []
    for item in given or []:
        try:
            out.append(uuid.UUID(str(item[0] if isinstance(item, list) else item)))
        except ValueError:
            continue
    return out


def decorate(resp: SearchResponse, times: dict[uuid.UUID, dict[str, Any]]) -> SearchResponse:
    """Event time, record time and validity on the response's context units and path steps."""
    if not times:
        return resp
    units = [
        u.model_copy(update=times[u.node_id]) if u.node_id in times else u
        for u in resp.context_units
    ]
    results = [
        r.model_copy(
            update={
                "path": [s.model_copy(update=times[s.id]) if s.id in times else s for s in r.path]
            }
        )
        for r in resp.results
    ]
    return resp.model_copy(update={"context_units": units, "results": results})


__all__ = [
    "Clocks",
    "Validity",
    "adjust_hits",
    "asks_about_the_past",
    "decorate",
    "load",
    "mark_graph",
    "node_times",
    "unit_texts",
]
