"""Shared pieces of the reliability tests: documents that share entities, integrity checks, figures."""

from __future__ import annotations

import json
import math
import os
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

import psycopg

from memflow.config import libpq_url
from memflow.db.steps import run_op
from memflow.drafts import EpisodeDraft
from memflow.ids import content_hash
from memflow.memory import Dataset
from memflow.store.plan import plan_drafts
from memflow.store.writer import DocumentInfo, Writer, WriteResult, document_id
from memflow.text.document import Chunk

SHARED_ENTITIES = (
    "Ines Lopez",
    "PostgreSQL",
    "Kubernetes",
    "Beijing office",
    "/chat/completions",
    "Q3 roadmap",
    "王小明",
)

# Every way a partial write could show: each count must be 0 in a healthy store (checked as the
# superuser, so row-level security hides nothing).
INTEGRITY_SQL = {
    "edges_with_missing_node": """
        SELECT count(*) FROM memflow.edge e
        WHERE NOT EXISTS (SELECT 1 FROM memflow.node n WHERE n.dataset_id = e.dataset_id AND n.id = e.src)
           OR NOT EXISTS (SELECT 1 FROM memflow.node n WHERE n.dataset_id = e.dataset_id AND n.id = e.dst)""",
    "episodes_without_summary_embedding": """
        SELECT count(*) FROM memflow.node n WHERE n.kind = 'Episode' AND NOT EXISTS
          (SELECT 1 FROM memflow.episode_summary x WHERE x.dataset_id = n.dataset_id AND x.node_id = n.id)""",
    "facets_without_search_embedding": """
        SELECT count(*) FROM memflow.node n WHERE n.kind = 'Facet' AND NOT EXISTS
          (SELECT 1 FROM memflow.facet_search_text x WHERE x.dataset_id = n.dataset_id AND x.node_id = n.id)""",
    "facets_without_anchor_embedding": """
        SELECT count(*) FROM memflow.node n WHERE n.kind = 'Facet' AND NOT EXISTS
          (SELECT 1 FROM memflow.facet_anchor_text x WHERE x.dataset_id = n.dataset_id AND x.node_id = n.id)""",
    "points_without_embedding": """
        SELECT count(*) FROM memflow.node n WHERE n.kind = 'FacetPoint' AND NOT EXISTS
          (SELECT 1 FROM memflow.facetpoint_search_text x WHERE x.dataset_id = n.dataset_id AND x.node_id = n.id)""",
    "entities_without_embedding": """
        SELECT count(*) FROM memflow.node n WHERE n.kind = 'Entity' AND NOT EXISTS
          (SELECT 1 FROM memflow.entity_name x WHERE x.dataset_id = n.dataset_id AND x.node_id = n.id)""",
    "edges_without_text_embedding": """
        SELECT count(*) FROM memflow.edge e WHERE NOT EXISTS
          (SELECT 1 FROM memflow.edge_text x WHERE x.dataset_id = e.dataset_id AND x.text_hash = e.text_hash)""",
    "nodes_without_document": """
        SELECT count(*) FROM memflow.node n WHERE NOT EXISTS
          (SELECT 1 FROM memflow.node_source s WHERE s.dataset_id = n.dataset_id AND s.node_id = n.id)""",
    "edges_without_document": """
        SELECT count(*) FROM memflow.edge e WHERE NOT EXISTS
          (SELECT 1 FROM memflow.edge_source s WHERE s.dataset_id = e.dataset_id AND s.edge_id = e.id)""",
    "documents_without_nodes": """
        SELECT count(*) FROM memflow.document d WHERE NOT EXISTS
          (SELECT 1 FROM memflow.node_source s WHERE s.dataset_id = d.dataset_id AND s.document_id = d.id)""",
    "duplicate_entities": """
        SELECT count(*) FROM (SELECT 1 FROM memflow.node WHERE kind = 'Entity'
          GROUP BY dataset_id, canonical_name HAVING count(*) > 1) d""",
}


# A message "says what to do" when it names an action or the requirement to meet.
ACTIONS = (
    "pass", "use", "remove", "split", "check", "retry", "give", "fix", "convert", "memorize",
    "open", "run", "install", "set", "shorten", "choose", "add", "provide", "must",
)  # fmt: skip


def assert_actionable(exc: BaseException) -> None:
    from memflow.errors import MemflowError

    msg = str(exc)
    assert isinstance(exc, MemflowError), f"bare {type(exc).__name__}: {msg}"
    assert len(msg) > 15 and any(w in msg.lower() for w in ACTIONS), msg


TABLES = (
    "dataset", "document", "chunk", "node", "edge", "node_source", "edge_source", "node_chunk",
    "episode_summary", "facet_search_text", "facet_anchor_text", "facetpoint_search_text",
    "entity_name", "edge_text",
    # revision 0005: procedures and entity types
    "procedure_summary", "procedure_step_text", "procedure_context_text", "entitytype_name",
)  # fmt: skip


# Columns revisions 0004, 0006 and 0008 added: a downgrade below them drops them (an upgrade
# backfills them), so row comparisons across that step leave them out.
REVISION_0004_COLUMNS = frozenset(
    {"valid_at", "recorded_at", "invalid_at", "superseded_by", "version", "previous_id",
     "replaced_by",
     "scope", "metadata",  # revision 0006's document columns (backfilled '{}')
     "node.citations", "node.speaker"}  # revision 0008's stored citations (backfilled)
)  # fmt: skip


def _row(conn: psycopg.Connection[Any], table: str, skip: frozenset[str]) -> str:
    """The SQL text of one row of ``table`` (alias t) without the ``skip`` columns (a column
    name, or ``table.column`` for one table's column only)."""
    if not skip:
        return "t::text"
    cols = [
        r[0]
        for r in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = 'memflow' "
            "AND table_name = %s ORDER BY ordinal_position",
            (table,),
        )
        if r[0] not in skip and f"{table}.{r[0]}" not in skip
    ]
    return "(" + ", ".join(f"t.{c}" for c in cols) + ")::text"


def _exists(conn: psycopg.Connection[Any], table: str) -> bool:
    """Does the store (at its revision) have ``table``? (Migration tests step back revisions.)"""
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (f"memflow.{table}",)).fetchone()
    return bool(row and row[0])


def fingerprint(url: str, skip: frozenset[str] = frozenset()) -> dict[str, tuple[int, str]]:
    """Row count and an md5 over every row of every memflow table, computed in the server (as the
    superuser): equal fingerprints mean equal contents, cheaply enough to take around each call.
    ``skip``: columns left out of the rows."""
    out = {}
    with psycopg.connect(libpq_url(url)) as conn:
        for t in TABLES:
            if not _exists(conn, t):  # a table of a later revision: as if empty
                out[t] = (0, "")
                continue
            row = conn.execute(
                f"SELECT count(*), coalesce(md5(string_agg(x.r, '|' ORDER BY x.r)), '') "
                f"FROM (SELECT {_row(conn, t, skip)} AS r FROM memflow.{t} t) x"
            ).fetchone()
            assert row is not None
            out[t] = (int(row[0]), str(row[1]))
    return out


def row_digests(url: str, skip: frozenset[str] = frozenset()) -> dict[str, set[str]]:
    """The md5 of every row of every memflow table (as the superuser): what a later snapshot must
    still contain for no committed row to be lost. ``skip``: columns left out of the rows."""
    out: dict[str, set[str]] = {}
    with psycopg.connect(libpq_url(url)) as conn:
        for t in TABLES:
            if not _exists(conn, t):
                out[t] = set()
                continue
            rows = conn.execute(f"SELECT md5({_row(conn, t, skip)}) FROM memflow.{t} t").fetchall()
            out[t] = {str(r[0]) for r in rows}
    return out


def rows_missing(before: dict[str, set[str]], after: dict[str, set[str]]) -> int:
    """How many rows of ``before`` are absent (or changed) in ``after``."""
    return sum(len(rows - after.get(t, set())) for t, rows in before.items())


def changed_tables(
    before: dict[str, tuple[int, str]], after: dict[str, tuple[int, str]]
) -> list[str]:
    """Tables whose fingerprint differs (a failed call must leave this empty)."""
    return sorted(t for t in before.keys() | after.keys() if before.get(t) != after.get(t))


def integrity_problems(url: str) -> dict[str, int]:
    """Counts of every partial-write symptom (all zero in a healthy store)."""
    with psycopg.connect(libpq_url(url)) as conn:
        out = {}
        for name, sql in INTEGRITY_SQL.items():
            row = conn.execute(sql).fetchone()
            out[name] = int(row[0]) if row else -1
    return out


def assert_intact(url: str) -> None:
    problems = {k: v for k, v in integrity_problems(url).items() if v}
    assert problems == {}, f"partial writes left behind: {problems}"


def doc_drafts(i: int, episodes: int = 2) -> list[dict[str, Any]]:
    """Document ``i``: episodes with facets, points, shared entities and one entity of its own."""
    out: list[dict[str, Any]] = []
    for j in range(episodes):
        shared = [SHARED_ENTITIES[(i + j + k) % len(SHARED_ENTITIES)] for k in range(3)]
        out.append(
            {
                "name": f"Meeting {i}.{j}",
                "summary": f"Meeting {i}.{j}: {shared[0]} reviewed ticket T-{i}-{j} with {shared[1]}.",
                "entities": [
                    {"name": shared[0], "role": f"led meeting {i}.{j}"},
                    {"name": shared[1], "role": "discussed"},
                    {"name": f"Ticket T-{i}-{j}", "entity_type": "ticket"},
                ],
                "facets": [
                    {
                        "search_text": f"decision {i}.{j}",
                        "anchor_text": f"The team decided to move ticket T-{i}-{j} to {shared[2]}.",
                        "points": [
                            {"search_text": f"T-{i}-{j} moves to {shared[2]}"},
                            {"search_text": f"{shared[0]} owns the follow-up of {i}.{j}"},
                        ],
                        "entities": [{"name": shared[2], "role": "target"}],
                    },
                    {
                        "search_text": f"risk {i}.{j}",
                        "anchor_text": f"Latency of {shared[1]} may grow by {i + j} ms.",
                        "points": [{"search_text": f"latency grows {i + j} ms"}],
                    },
                ],
            }
        )
    return out


def procedure_drafts(i: int) -> list[dict[str, Any]]:
    """Document ``i`` with a procedure and a typed entity (revision 0005's tables)."""
    return [
        {
            "name": f"Runbook review {i}",
            "summary": f"The team agreed how to restart worker {i}.",
            "entities": [{"name": f"Vendor {i}", "types": ["supplier"]}],
            "procedures": [
                {
                    "name": f"Restart worker {i}",
                    "summary": f"How to restart worker {i}.",
                    "context": [{"aspect": "when", "text": f"When worker {i} hangs."}],
                    "steps": [{"text": f"Stop worker {i}."}, {"text": f"Start worker {i}."}],
                }
            ],
        }
    ]


def planned_rows(
    dataset_id: uuid.UUID, docs: Iterable[Sequence[dict[str, Any]]]
) -> tuple[dict[uuid.UUID, str], set[uuid.UUID], set[bytes]]:
    """The union of what writing ``docs`` plans: node ids with kinds, edge ids, edge-text hashes."""
    nodes: dict[uuid.UUID, str] = {}
    edges: set[uuid.UUID] = set()
    texts: set[bytes] = set()
    for doc in docs:
        plan = plan_drafts(dataset_id, [EpisodeDraft.model_validate(d) for d in doc])
        nodes.update({n.id: n.kind for n in plan.nodes.values()})
        edges.update(plan.edges)
        texts.update(plan.edge_texts())
    return nodes, edges, texts


def expected_stats(
    dataset_id: uuid.UUID, docs: Sequence[Sequence[dict[str, Any]]]
) -> dict[str, int]:
    """The exact ``Dataset.stats()`` after writing ``docs`` (distinct drafts documents)."""
    nodes, edges, texts = planned_rows(dataset_id, docs)
    kinds = list(nodes.values())
    # Embeddings stats() counts (the episodic tables and edge texts; not procedures' tables).
    per_node = {"Episode": 1, "Facet": 2, "FacetPoint": 1, "Entity": 1}
    return {
        "episodes": kinds.count("Episode"),
        "facets": kinds.count("Facet"),
        "facet_points": kinds.count("FacetPoint"),
        "entities": kinds.count("Entity"),
        "edges": len(edges),
        "documents": len(docs),
        "chunks": 0,
        "embeddings": sum(per_node.get(k, 0) for k in kinds) + len(texts),
    }


def rows_of(url: str, sql: str, *params: object) -> list[tuple[Any, ...]]:
    with psycopg.connect(libpq_url(url)) as conn:
        return conn.execute(sql, params).fetchall()


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def record(name: str, **figures: object) -> None:
    """Append figures to ``$MEMFLOW_RELIABILITY_OUT`` (JSON lines) for docs/benchmarks/reliability.md."""
    path = os.environ.get("MEMFLOW_RELIABILITY_OUT")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"test": name, **figures}, ensure_ascii=False, default=str) + "\n")


def write_chunked_document(ds: Dataset, i: int) -> WriteResult:
    """Write document ``i`` with source chunks (so chunk and node_chunk rows exist too)."""
    drafts = doc_drafts(i, episodes=1)
    for d in drafts:
        d["sources"] = ["s0"]
        for f in d["facets"]:
            f["sources"] = ["s1"]
    parsed = [EpisodeDraft.model_validate(d) for d in drafts]
    chunks = [
        Chunk(index=0, key="s0", text=f"Chunk zero of document {i}: {drafts[0]['summary']}"),
        Chunk(index=1, key="s1", text=f"Chunk one of document {i}: the decision was recorded."),
    ]
    chash = content_hash(json.dumps(drafts, sort_keys=True) + "|chunked")
    doc = DocumentInfo(
        id=document_id(ds.id, chash),
        source=f"chunked-{i}.txt",
        title=f"Chunked {i}",
        content_type="text",
        content_hash=chash,
        reference_time=None,
        chunks=chunks,
    )
    writer = Writer(ds.memory.embedder)
    return run_op(ds.memory.engine, writer.write_op(ds.id, doc, plan_drafts(ds.id, parsed)))
