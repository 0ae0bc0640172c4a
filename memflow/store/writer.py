"""The write path: embed what is missing, then write one document in one transaction."""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import sqlalchemy.exc as sa_exc
from sqlalchemy import Connection, TextClause

from memflow.context import FaultHook
from memflow.db.engine import limit_write_statements, session_settings, sqlstate_of
from memflow.db.filters import tags_json
from memflow.db.queries import q
from memflow.db.schema import COLLECTION_BY_NAME
from memflow.db.steps import Body, Op, Tx, sql_tx
from memflow.embed.base import Embedder, embed_passages_checked, mean_direction
from memflow.errors import DatabaseError
from memflow.ids import make_id, text_hash
from memflow.store import citations
from memflow.store.bulk import deferred_maintenance
from memflow.store.plan import WritePlan
from memflow.store.temporal import after_write, stamp_times
from memflow.text.document import Chunk

log = logging.getLogger(__name__)

# The stages a FaultHook (memflow.context) is called with.
STAGES = (
    "embedding",
    "before_write",
    "after_document",
    "after_nodes",
    "after_edges",
    "mid_embeddings",
    "before_commit",
)


@dataclass
class DocumentInfo:
    id: uuid.UUID
    source: str
    title: str
    content_type: str
    content_hash: str
    reference_time: datetime | None
    chunks: list[Chunk] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    # Revision 0004: session start times (a message is learned when it is said) and who writes.
    session_times: dict[int, datetime] = field(default_factory=dict)
    actor: str | None = None
    # Revision 0006: who the document belongs to and the caller's metadata (memflow.db.filters).
    scope: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class WriteResult:
    document_id: uuid.UUID
    status: str  # written | skipped
    counts: dict[str, int]
    embeddings: int
    seconds: float
    episode_ids: list[uuid.UUID] = field(default_factory=list)


def document_id(
    dataset_id: uuid.UUID,
    content_hash: str,
    scope: Mapping[str, str] | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> uuid.UUID:
    """The id of a document: its content, and its scope and metadata when it has any (the same
    text memorised for two users is two documents; their nodes are shared by content)."""
    if scope or metadata:
        return make_id(dataset_id, "document", content_hash, tags_json(scope or {}, metadata or {}))
    return make_id(dataset_id, "document", content_hash)


def document_episode_ids(
    conn: Connection, dataset_id: uuid.UUID, doc_id: uuid.UUID
) -> list[uuid.UUID]:
    """The episodes a stored document supports."""
    rows = conn.execute(q("document_episodes"), {"dataset_id": dataset_id, "id": doc_id})
    return [r.node_id for r in rows]


def document_exists(conn: Connection, dataset_id: uuid.UUID, doc_id: uuid.UUID) -> bool:
    return (
        conn.execute(q("document_get"), {"dataset_id": dataset_id, "id": doc_id}).first()
        is not None
    )


class Writer:
    def __init__(
        self,
        embedder: Embedder,
        *,
        fault: FaultHook | None = None,
        after_rows: Callable[[Connection, uuid.UUID], None] | None = None,
        decide: Callable[[uuid.UUID, DocumentInfo, WritePlan, dict[bytes, Any]], Op[None]]
        | None = None,
        on_stage: Callable[[str], None] | None = None,
    ) -> None:
        self.embedder = embedder
        self.fault = fault or (lambda _stage: None)
        # Called as the transaction moves on (rows of each kind, each embedding table): the
        # progress of a large document's write, which can take minutes.
        self.on_stage = on_stage or (lambda _stage: None)
        # Runs inside the document's transaction after its rows (routing's merge updates).
        self.after_rows = after_rows
        # Runs after the embeddings, before the transaction: the similarity and model paths of
        # supersession (memflow.store.conflicts, memflow.llm.supersede) fill ``plan.closures``.
        self.decide = decide

    # -- embeddings (outside the transaction) ---------------------------------------------------
    def _cached_vectors(self, dataset_id: uuid.UUID, hashes: list[bytes]) -> Op[dict[bytes, Any]]:
        if not hashes:
            return {}
        rows = yield sql_tx(
            lambda conn: conn.execute(
                q("embedded_hashes"), {"dataset_id": dataset_id, "hashes": hashes}
            ).all(),
            dataset_id,
        )
        return {bytes(r.text_hash): r.embedding for r in rows}

    def vectors_op(
        self, dataset_id: uuid.UUID, *plans: WritePlan
    ) -> Op[tuple[dict[bytes, Any], list[bytes]]]:
        """Vectors for every text of the plans, by text hash, and the hashes newly embedded.

        Each distinct text is embedded at most once; a text with vector parts (a derived edge
        text or summary: :meth:`WritePlan.vector_parts`) is not embedded: its vector is its
        part's, or the normalised mean of its parts' vectors."""
        texts: dict[bytes, str] = {}
        parts: dict[bytes, tuple[bytes, ...]] = {}  # derived text -> the texts giving its vector
        for plan in plans:
            for h, given in plan.vector_parts().items():
                parts[h] = tuple(text_hash(t) for t in given)
                texts.update((text_hash(t), t) for t in given)
        for plan in plans:
            texts.update((h, e.text) for e in plan.embeds if (h := text_hash(e.text)) not in parts)
        for plan in plans:
            texts.update((h, t) for h, t in plan.edge_texts().items() if h not in parts)
        vectors = yield from self._cached_vectors(dataset_id, list(texts) + list(parts))
        missing = [h for h in texts if h not in vectors]
        if missing:
            self.fault("embedding")
            out = embed_passages_checked(self.embedder, [texts[h] for h in missing])
            for h, vec in zip(missing, out, strict=True):
                vectors[h] = np.asarray(vec, dtype=np.float32)
        for h, of in parts.items():
            if h not in vectors:
                vectors[h] = (
                    vectors[of[0]] if len(of) == 1 else mean_direction([vectors[p] for p in of])
                )
        return vectors, missing

    # -- the transaction --------------------------------------------------------------------------
    def write_op(
        self,
        dataset_id: uuid.UUID,
        doc: DocumentInfo,
        plan: WritePlan,
        *,
        on_write: Callable[[], None] | None = None,
    ) -> Op[WriteResult]:
        """Write one document: the missing embeddings, then the rows in one transaction.
        ``on_write`` runs after the embeddings, before the transaction (progress)."""
        started = time.perf_counter()
        exists = lambda conn: document_exists(conn, dataset_id, doc.id)  # noqa: E731
        if (yield sql_tx(exists, dataset_id)):
            return WriteResult(doc.id, "skipped", _zero(), 0, time.perf_counter() - started)
        vectors, missing = yield from self.vectors_op(dataset_id, plan)
        if self.decide is not None:
            stamp_times(doc, plan)
            yield from self.decide(dataset_id, doc, plan, vectors)
        if on_write is not None:
            on_write()

        def attempt() -> Body[None]:
            self.fault("before_write")
            yield limit_write_statements
            if (yield exists):
                raise _AlreadyWritten
            yield lambda conn: self._write_rows(conn, dataset_id, doc, plan, vectors)
            self.fault("before_commit")

        try:
            yield Tx(attempt, dataset_id, retry=True)
        except _AlreadyWritten:
            return WriteResult(doc.id, "skipped", _zero(), 0, time.perf_counter() - started)
        except DatabaseError as exc:
            # Another writer committed the same document between our check and our insert.
            if not _duplicate_document(exc) or not (yield sql_tx(exists, dataset_id)):
                raise
            return WriteResult(doc.id, "skipped", _zero(), 0, time.perf_counter() - started)
        return WriteResult(
            doc.id,
            "written",
            plan.counts(),
            len(missing),
            time.perf_counter() - started,
            list(plan.episode_ids),
        )

    def write_bulk_op(
        self,
        dataset_id: uuid.UUID,
        items: Sequence[tuple[DocumentInfo, WritePlan]],
        progress: Callable[[int, int], None] | None = None,
    ) -> Op[list[WriteResult]]:
        """Write many documents in one transaction, building indexes and checking foreign keys
        once at the end (:mod:`memflow.store.bulk`): all of them are written, or none.

        Other sessions wait while it runs, and the index rebuild covers every row of the store,
        so it pays off for initial imports and batches that are large next to the store."""
        started = time.perf_counter()
        vectors, missing = yield from self.vectors_op(dataset_id, *(plan for _, plan in items))

        def rows(conn: Connection) -> list[WriteResult]:
            out: list[WriteResult] = []
            new = set(missing)  # texts not stored yet: counted for the first document using them
            with deferred_maintenance(conn):
                self.fault("before_write")
                seen: set[uuid.UUID] = set()
                for i, (doc, plan) in enumerate(items):
                    if doc.id in seen or document_exists(conn, dataset_id, doc.id):
                        out.append(WriteResult(doc.id, "skipped", _zero(), 0, 0.0))
                    else:
                        seen.add(doc.id)
                        self._write_rows(conn, dataset_id, doc, plan, vectors)
                        texts = {text_hash(e.text) for e in plan.embeds} | set(plan.edge_texts())
                        added = len(texts & new)
                        new.difference_update(texts)
                        out.append(
                            WriteResult(
                                doc.id, "written", plan.counts(), added, 0.0, list(plan.episode_ids)
                            )
                        )
                    if progress is not None:
                        progress(i + 1, len(items))
                self.fault("before_commit")
            return out

        results: list[WriteResult] = yield sql_tx(rows, dataset_id, retry=True)
        elapsed = time.perf_counter() - started
        for r in results:
            r.seconds = elapsed
        return results

    def _rows(
        self, conn: Connection, statement: TextClause, rows: list[dict[str, Any]], stage: str
    ) -> None:
        """Run ``statement`` for ``rows``, :data:`WRITE_BATCH` at a time, reporting each batch: a
        large document's write moves visibly instead of going silent for a minute."""
        for start in range(0, len(rows), WRITE_BATCH):
            conn.execute(statement, rows[start : start + WRITE_BATCH])
            self.on_stage(stage)

    def _write_rows(
        self,
        conn: Connection,
        ds: uuid.UUID,
        doc: DocumentInfo,
        plan: WritePlan,
        vectors: dict[bytes, Any],
    ) -> None:
        conn.execute(
            q("document_insert"),
            {
                "dataset_id": ds,
                "id": doc.id,
                "source": doc.source,
                "title": doc.title,
                "content_type": doc.content_type,
                "content_hash": doc.content_hash,
                "reference_time": doc.reference_time,
                "meta": json.dumps(doc.meta),
                "scope": json.dumps(doc.scope),
                "metadata": json.dumps(doc.metadata),
            },
        )
        chunk_ids: dict[str, uuid.UUID] = {}
        chunk_rows = []
        for c in doc.chunks:
            cid = make_id(ds, "chunk", doc.id, str(c.index))
            chunk_ids.setdefault(c.key, cid)
            chunk_rows.append(
                {
                    "dataset_id": ds,
                    "id": cid,
                    "document_id": doc.id,
                    "idx": c.index,
                    "key": c.key,
                    "text": c.text,
                    "speaker": c.speaker,
                    "ts": c.timestamp,
                }
            )
        self._rows(conn, q("chunk_insert"), chunk_rows, "document")
        self.fault("after_document")
        stamp_times(doc, plan)
        # Sorted by id so concurrent writers lock shared rows (entities) in the same order.
        nodes = sorted(plan.nodes.values(), key=lambda n: n.id)
        self._rows(conn, q("node_upsert"), [n.params(ds) for n in nodes], "nodes")
        self._rows(
            conn,
            q("node_source_insert"),
            [{"dataset_id": ds, "node_id": n.id, "document_id": doc.id} for n in nodes],
            "nodes",
        )
        links = [
            {"dataset_id": ds, "node_id": n.id, "chunk_id": chunk_ids[k]}
            for n in nodes
            for k in sorted(set(n.sources))
            if k in chunk_ids
        ]
        self._rows(conn, q("node_chunk_insert"), links, "nodes")
        citations.refresh(conn, ds, (link["node_id"] for link in links))
        self.fault("after_nodes")
        edges = sorted(plan.edges.values(), key=lambda e: e.id)
        self._rows(conn, q("edge_upsert"), [e.params(ds) for e in edges], "edges")
        self._rows(
            conn,
            q("edge_source_insert"),
            [{"dataset_id": ds, "edge_id": e.id, "document_id": doc.id} for e in edges],
            "edges",
        )
        self.fault("after_edges")
        by_collection: dict[str, list[dict[str, Any]]] = {}
        for emb in sorted(plan.embeds, key=lambda r: (r.collection, r.node_id)):
            h = text_hash(emb.text)
            by_collection.setdefault(emb.collection, []).append(
                {
                    "dataset_id": ds,
                    "node_id": emb.node_id,
                    "text_hash": h,
                    "text": emb.text,
                    "embedding": vectors[h],
                }
            )
        for i, (name, rows) in enumerate(sorted(by_collection.items())):
            self._rows(conn, q(f"embed_upsert_{COLLECTION_BY_NAME[name].table}"), rows, name)
            if i == 1:
                self.fault("mid_embeddings")
        edge_texts = [
            {"dataset_id": ds, "text_hash": h, "text": t, "embedding": vectors[h]}
            for h, t in sorted(plan.edge_texts().items())
        ]
        self._rows(conn, q("embed_upsert_edge_text"), edge_texts, "Edge_text")
        refresh_statistics(conn, ds)
        if self.after_rows is not None:
            self.after_rows(conn, ds)
        after_write(conn, ds, doc, plan)


WRITE_BATCH = 1000  # rows a statement writes at a time; each batch is a progress event


def refresh_statistics(conn: Connection, ds: uuid.UUID) -> bool:
    """ANALYZE the graph inside this transaction when dataset ``ds`` holds many more nodes than
    the planner believes it does (its own estimate for the dataset, not the store's size: a new
    dataset in a store of many is believed nearly empty, and on that belief a LongMemEval item's
    ingest stalled for half an hour): the statements after the rows (merges, supersession) read
    them, and on stale statistics a large first document planned a nested scan per point (21
    minutes in one query; 34 ms after ANALYZE). Skipped when the role may not ANALYZE, or when
    another writer holds the tables' statistics lock (then its ANALYZE, which commits with it,
    does the work). Returns whether it ran."""
    settings = session_settings()
    row = conn.execute(q("graph_estimate")).one()
    if not row.may_analyze:
        return False
    plan = conn.execute(q("dataset_plan_rows"), {"dataset_id": ds}).scalar_one()
    plan = json.loads(plan) if isinstance(plan, str) else plan
    believed = float(plan[0]["Plan"]["Plan Rows"])
    held = int(conn.execute(q("dataset_nodes"), {"dataset_id": ds}).scalar_one())
    if held - believed < max(settings.analyze_min_rows, settings.analyze_share * believed):
        return False
    try:
        with conn.begin_nested():
            conn.execute(q("set_lock_timeout"), {"timeout": "1s"})
            conn.execute(q("analyze_written"))
            conn.execute(q("set_lock_timeout"), {"timeout": row.lock_timeout})
    except sa_exc.OperationalError as exc:
        if sqlstate_of(exc) != "55P03":  # lock_not_available
            raise
        log.info("statistics not refreshed: another writer is refreshing them")
        return False
    return True


def _duplicate_document(exc: DatabaseError) -> bool:
    orig = getattr(exc.__cause__, "orig", None)
    diag = getattr(orig, "diag", None)
    return (
        getattr(orig, "sqlstate", None) == "23505"
        and getattr(diag, "constraint_name", None) == "document_pkey"
    )


class _AlreadyWritten(Exception):
    """Another writer committed the same document while this one was embedding."""


def _zero() -> dict[str, int]:
    return {
        "episodes": 0,
        "facets": 0,
        "facet_points": 0,
        "entities": 0,
        "procedures": 0,
        "edges": 0,
    }
