"""Micro-benchmark: projection rows -> GraphNode/GraphEdge, by position vs by column name.

``python -m benchmarks.rowmap`` builds the rows of one search (``--nodes`` node rows and
``--edges`` edge rows with the columns of ``sql/recall.sql``'s ``project``) as SQLAlchemy ``Row``
objects, the class every driver's result rows are, and times ``memflow.recall.sqlrecall``'s
mapping (columns read by name) against the former unpacking by position (kept below as the
baseline). No database: only the Python mapping is measured.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.engine.result import IteratorResult, SimpleResultMetaData

from memflow.db.rows import columns
from memflow.recall.config import RecallConfig
from memflow.recall.sqlrecall import _subgraph
from memflow.recall.types import GraphEdge, GraphNode, Hit, Subgraph

PROJECT_COLUMNS = (
    "row_type",
    "id",
    "kind",
    "name",
    "summary",
    "search_text",
    "anchor_text",
    "description",
    "facet_type",
    "created_at",
    "time_start",
    "time_end",
    "display_only",
    "sources",
    "hub",
    "src",
    "relationship",
    "dst",
    "edge_text",
)


def _rows(nodes: int, edges: int) -> list[Any]:
    now = datetime(2024, 5, 7, tzinfo=UTC)
    data: list[tuple[Any, ...]] = []
    ids = [uuid.uuid4() for _ in range(nodes)]
    for i, nid in enumerate(ids):
        kind = ("Episode", "Facet", "FacetPoint", "Entity")[i % 4]
        data.append(
            ("node", nid, kind, f"name {i}", f"summary {i}", f"search {i}", f"anchor {i}",
             None, "topic", now, now, None, False, [f"s{i}"], kind == "Entity" and i % 40 == 3,
             None, None, None, None)
        )  # fmt: skip
    for j in range(edges):
        data.append(
            ("edge", *([None] * 14), ids[j % nodes], "has_point", ids[(j + 1) % nodes], f"e {j}")
        )
    return list(IteratorResult(SimpleResultMetaData(PROJECT_COLUMNS), iter(data)).all())


def by_position(rows: Any, config: RecallConfig, graph: Subgraph) -> Subgraph:
    """The mapping before columns were read by name (memflow up to 532fec6)."""
    for row_type, *node, hub, src, relationship, dst, edge_text in rows:
        if row_type == "node":
            node_id, kind, name, *texts, display_only, sources = node
            fields = [node_id, kind, name or "", *texts, bool(display_only), list(sources or ())]
            graph.nodes[node_id] = GraphNode(*fields)
            if hub:
                graph.notes.append(
                    f"hub guard: entity {name!r} has more than {config.hub_fanout} links; "
                    f"only the {config.hub_fanout} best were followed"
                )
        else:
            graph.edges.append(GraphEdge(src, relationship, dst, edge_text))
    return graph


def by_name(rows: Any, config: RecallConfig, graph: Subgraph) -> Subgraph:
    """What a search runs now: ``sqlrecall._subgraph`` (columns resolved by name once)."""
    return _subgraph(PROJECT_COLUMNS, rows, config, graph)


RECALL_COLUMNS = ("collection", "node_id", "text_hash", "text", "distance")


def _hit_rows(n: int) -> list[Any]:
    data = [("Facet_search_text", uuid.uuid4(), None, f"text {i}", 0.3 + i / n) for i in range(n)]
    return list(IteratorResult(SimpleResultMetaData(RECALL_COLUMNS), iter(data)).all())


def hits_by_position(rows: Any, _config: RecallConfig, _graph: Subgraph) -> list[Hit]:
    return [
        Hit(collection=c, node_id=n, text=t, distance=float(d), score=float(d),
            edge_text_hash=bytes(h) if h is not None else None)
        for c, n, h, t, d in rows
    ]  # fmt: skip


def hits_by_name(rows: Any, _config: RecallConfig, _graph: Subgraph) -> list[Hit]:
    hit = columns(RECALL_COLUMNS, *RECALL_COLUMNS[::-1])  # any order: resolved by name
    return [
        Hit(collection=c, node_id=n, text=t, distance=float(d), score=float(d),
            edge_text_hash=bytes(h) if h is not None else None)
        for d, t, h, n, c in map(hit, rows)
    ]  # fmt: skip


def _time(fn: Any, rows: list[Any], config: RecallConfig, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(rows, config, Subgraph())
        out.append((time.perf_counter() - t) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=600)
    ap.add_argument("--edges", type=int, default=700)
    ap.add_argument("--hits", type=int, default=600)
    ap.add_argument("--repeat", type=int, default=500)
    args = ap.parse_args()
    rows = _rows(args.nodes, args.edges)
    config = RecallConfig()
    a, b = by_position(rows, config, Subgraph()), by_name(rows, config, Subgraph())
    assert (a.nodes, a.edges, a.notes) == (b.nodes, b.edges, b.notes), "the two mappings disagree"
    hit_rows = _hit_rows(args.hits)
    assert hits_by_position(hit_rows, config, Subgraph()) == hits_by_name(
        hit_rows, config, Subgraph()
    )
    cases = (
        ("projection by position", by_position, rows),
        ("projection by name", by_name, rows),
        ("hits by position", hits_by_position, hit_rows),
        ("hits by name", hits_by_name, hit_rows),
    )
    timings: dict[str, list[float]] = {name: [] for name, _, _ in cases}
    for _ in range(args.repeat):  # interleaved, so machine load hits every case alike
        for name, fn, data in cases:
            timings[name] += _time(fn, data, config, 1)
    for name, _, data in cases:
        ms = sorted(timings[name])
        print(
            f"{name:24} {len(data):5} rows: median {statistics.median(ms):.3f} ms, "
            f"p10 {ms[len(ms) // 10]:.3f} ms, p90 {ms[9 * len(ms) // 10]:.3f} ms"
        )


if __name__ == "__main__":
    main()
