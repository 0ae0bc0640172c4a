"""Forget a document (everything only it supported) or one episode, in one transaction.

Provenance decides: a node or edge stays while ``node_source`` / ``edge_source`` still name a
document. Embedding rows, provenance rows and edges go with their nodes (ON DELETE CASCADE);
edge texts no remaining edge uses are deleted. Nodes a merge changed (``props["merge"]``, see
:mod:`memflow.ingest.route`) are re-derived from the contributions whose documents remain, and
restored exactly (text, ``updated_at``, embedding, props) when none remains.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field
from sqlalchemy import Connection

from memflow.context import StoreContext
from memflow.db.queries import q
from memflow.db.steps import Op, sql_tx
from memflow.embed.base import Embedder, Matrix, Vector
from memflow.errors import InvalidInput, NotFound
from memflow.ids import text_hash
from memflow.store import citations
from memflow.store.merge import (
    MergeRecord,
    NodeUpdate,
    apply_updates,
    as_array,
    decode_vector,
    derive_anchor,
    derive_summary,
    load_episodes,
    props_without_merge,
)
from memflow.store.reads import as_uuid
from memflow.store.temporal import revive_after_forget
from memflow.store.versions import restore_current


class ForgetReport(BaseModel):
    """Rows removed by a forget, and merged nodes re-derived from what remains."""

    document_ids: list[uuid.UUID] = Field(default_factory=list)
    episode_id: uuid.UUID | None = None
    documents: int = 0
    chunks: int = 0
    episodes: int = 0
    facets: int = 0
    facet_points: int = 0
    entities: int = 0
    procedures: int = 0  # procedure versions (their steps and context points go with them)
    edges: int = 0
    edge_texts: int = 0
    restored: int = 0  # episodes/facets a merge had changed, restored or re-derived
    revived: int = 0  # facts the forgotten rows had superseded, valid again

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


_KIND_FIELD = {
    "Episode": "episodes",
    "Facet": "facets",
    "FacetPoint": "facet_points",
    "Entity": "entities",
    "Procedure": "procedures",
}


def _count_kinds(report: ForgetReport, rows: Iterable[Any]) -> None:
    kinds = Counter(r.kind for r in rows)
    for kind, name in _KIND_FIELD.items():
        setattr(report, name, getattr(report, name) + kinds.get(kind, 0))


# ---------------------------------------------------------------- re-deriving merged nodes


def _vectors(
    conn: Connection, dataset_id: uuid.UUID, embedder: Embedder, texts: list[str]
) -> dict[str, Any]:
    """Vectors for ``texts``: stored ones of this dataset first, the embedder for the rest."""
    by_hash = {text_hash(t): t for t in texts}
    out: dict[str, Any] = {}
    if by_hash:
        rows = conn.execute(
            q("embedded_hashes"), {"dataset_id": dataset_id, "hashes": list(by_hash)}
        ).all()
        out = {by_hash[bytes(r.text_hash)]: r.embedding for r in rows}
    missing = [t for t in dict.fromkeys(texts) if t not in out]
    if missing:
        out.update(zip(missing, embedder.embed_passages(missing), strict=True))
    return out


def _revise(
    node_id: uuid.UUID, kind: str, props: dict[str, Any], sources: set[str]
) -> NodeUpdate | MergeRecord | None:
    """What a merged node needs now that some documents are gone: nothing (None), an exact
    restore of its pre-merge state (NodeUpdate), or re-deriving from this record."""
    rec = MergeRecord.of(props)
    if rec is None:
        return None
    docs = [d for d in rec.docs if d[0] in sources]
    base_alive = rec.base is not None and bool(sources - {d[0] for d in rec.docs})
    if docs == rec.docs and base_alive:
        return None
    if not docs and base_alive and rec.base is not None:
        vec = decode_vector(rec.base.vector)
        return NodeUpdate(
            node_id, kind, rec.base.text, props_without_merge(props), rec.base.updated_at,
            embedding=vec,
        )  # fmt: skip
    return MergeRecord(base=rec.base if base_alive else None, docs=docs)


def rederive_merged(
    conn: Connection, dataset_id: uuid.UUID, embedder: Embedder, node_ids: list[uuid.UUID]
) -> int:
    """Re-derive (or restore) the merged nodes among ``node_ids``; returns how many changed."""
    if not node_ids:
        return 0
    params = {"dataset_id": dataset_id, "ids": node_ids}
    merged = conn.execute(q("forget_merged_nodes"), params).all()
    if not merged:
        return 0
    sources: dict[uuid.UUID, set[str]] = {r.id: set() for r in merged}
    for r in conn.execute(
        q("forget_node_documents"), {"dataset_id": dataset_id, "ids": list(sources)}
    ):
        sources[r.node_id].add(str(r.document_id))

    changed = 0
    # Facets first: an episode's summary is derived from its (restored) facets.
    for kind in ("Facet", "Episode"):
        rows = [r for r in merged if r.kind == kind]
        states = load_episodes(conn, dataset_id, [r.id for r in rows]) if kind == "Episode" else {}
        updates: list[NodeUpdate] = []
        for r in rows:
            props = dict(r.props or {})
            revised = _revise(r.id, kind, props, sources[r.id])
            if isinstance(revised, MergeRecord):
                if kind == "Facet":
                    base = revised.base.text if revised.base else None
                    text = derive_anchor(base, [t for _, t in revised.docs])
                else:
                    facets = states[r.id].facets
                    text = derive_summary([(f.search_text, f.anchor_text) for f in facets])
                revised = NodeUpdate(r.id, kind, text, revised.props(props))
            if revised is not None:
                updates.append(revised)
        need = [u.text for u in updates if u.embedding is None]
        vectors = _vectors(conn, dataset_id, embedder, need)
        for u in updates:
            if u.embedding is None:
                u.embedding = as_array(vectors[u.text])
        apply_updates(conn, dataset_id, updates)
        changed += len(updates)
    return changed


# ---------------------------------------------------------------- forget a document


def _forget_document(
    conn: Connection, dataset_id: uuid.UUID, embedder: Embedder, doc_id: uuid.UUID
) -> ForgetReport:
    ds = {"dataset_id": dataset_id}
    if conn.execute(q("forget_document_lock"), {**ds, "document_id": doc_id}).first() is None:
        raise NotFound(
            f"no document {doc_id} in this dataset: memorize reports document ids (--json)"
        )
    node_ids = [
        r.node_id for r in conn.execute(q("forget_document_nodes"), {**ds, "document_id": doc_id})
    ]
    edge_ids = [
        r.edge_id for r in conn.execute(q("forget_document_edges"), {**ds, "document_id": doc_id})
    ]
    report = ForgetReport(document_ids=[doc_id])
    report.chunks = citations.delete_chunks(conn, dataset_id, [doc_id])
    report.documents = len(
        conn.execute(q("forget_delete_documents"), {**ds, "document_ids": [doc_id]}).all()
    )
    deleted = conn.execute(q("forget_delete_unsupported_nodes"), {**ds, "ids": node_ids}).all()
    _count_kinds(report, deleted)
    if edge_ids:
        conn.execute(q("forget_delete_unsupported_edges"), {**ds, "ids": edge_ids})
        remaining = int(conn.execute(q("forget_count_edges"), {**ds, "ids": edge_ids}).scalar_one())
        report.edges = len(edge_ids) - remaining
    report.edge_texts = len(conn.execute(q("forget_delete_unused_edge_texts"), ds).all())
    restore_current(conn, dataset_id)
    gone = {r.id for r in deleted}
    report.restored = rederive_merged(
        conn, dataset_id, embedder, [n for n in node_ids if n not in gone]
    )
    return report


# ---------------------------------------------------------------- forget an episode


def _forget_episode(conn: Connection, dataset_id: uuid.UUID, episode_id: uuid.UUID) -> ForgetReport:
    ds = {"dataset_id": dataset_id}
    rows = conn.execute(q("forget_episode_nodes"), {**ds, "episode_id": episode_id}).all()
    if not any(r.kind == "Episode" for r in rows):
        raise NotFound(f"no episode {episode_id} in this dataset: list them with `memflow show`")
    ids = list(dict.fromkeys(r.id for r in rows))
    entities = conn.execute(q("forget_involved_entities"), {**ds, "ids": ids}).all()
    involved = [r.id for r in entities if not r.alias]
    aliases = [r.id for r in entities if r.alias]
    doc_ids = list(
        dict.fromkeys(
            r.document_id for r in conn.execute(q("forget_node_documents"), {**ds, "ids": ids})
        )
    )
    touched = ids + involved + aliases
    edges_before = int(
        conn.execute(q("forget_node_edge_count"), {**ds, "ids": touched}).scalar_one()
    )

    report = ForgetReport(episode_id=episode_id)
    _count_kinds(report, conn.execute(q("forget_delete_nodes"), {**ds, "ids": ids}).all())
    _count_kinds(
        report, conn.execute(q("forget_delete_uninvolved_entities"), {**ds, "ids": involved}).all()
    )
    _count_kinds(
        report, conn.execute(q("forget_delete_isolated_entities"), {**ds, "ids": aliases}).all()
    )
    edges_after = int(
        conn.execute(q("forget_node_edge_count"), {**ds, "ids": touched}).scalar_one()
    )
    report.edges = edges_before - edges_after
    # A document that supports nothing any more goes too (memorizing it again recreates it).
    orphans = [
        r.id
        for r in conn.execute(q("forget_unsupporting_documents"), {**ds, "document_ids": doc_ids})
    ]
    if orphans:
        report.chunks = citations.delete_chunks(conn, dataset_id, orphans)
        report.documents = len(
            conn.execute(q("forget_delete_documents"), {**ds, "document_ids": orphans}).all()
        )
        report.document_ids = orphans
    report.edge_texts = len(conn.execute(q("forget_delete_unused_edge_texts"), ds).all())
    restore_current(conn, dataset_id)
    return report


def forget_op(
    ctx: StoreContext,
    *,
    document_id: uuid.UUID | str | None = None,
    episode_id: uuid.UUID | str | None = None,
) -> Op[ForgetReport]:
    """Forget one document or one episode of the dataset in one transaction; NotFound when it
    does not exist.

    Re-deriving a merged node may need texts embedded: no CPU work runs in a database step, so
    the transaction stops at the first text it lacks, rolls back, and runs again once those
    texts are embedded between transactions."""
    if (document_id is None) == (episode_id is None):
        raise InvalidInput("forget needs exactly one of document_id=... or episode_id=...")
    ds = ctx.dataset_id
    doc = as_uuid(document_id, "document") if document_id is not None else None
    ep = as_uuid(episode_id, "episode") if episode_id is not None else None
    known: dict[str, Any] = {}
    embedder: Embedder = _Known(ctx.embedder, known)

    def step(conn: Connection) -> ForgetReport:
        if doc is not None:
            report = _forget_document(conn, ds, embedder, doc)
        else:
            report = _forget_episode(conn, ds, ep or uuid.UUID(int=0))
        # What the forgotten rows had replaced holds again (revision 0004).
        report.revived = revive_after_forget(conn, ds)
        return report

    while True:
        try:
            report: ForgetReport = yield sql_tx(step, ds, retry=True)
            return report
        except _NeedVectors as need:
            known.update(zip(need.texts, ctx.embedder.embed_passages(need.texts), strict=True))


class _NeedVectors(Exception):
    def __init__(self, texts: list[str]) -> None:
        super().__init__(f"{len(texts)} texts to embed")
        self.texts = texts


class _Known:
    """An embedder that knows only the vectors in ``known``; any other text stops the call."""

    def __init__(self, inner: Embedder, known: dict[str, Any]) -> None:
        self.name, self.dim, self.known = inner.name, inner.dim, known

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        missing = [t for t in dict.fromkeys(texts) if t not in self.known]
        if missing:
            raise _NeedVectors(missing)
        return np.asarray([self.known[t] for t in texts], dtype=np.float32)

    def embed_query(self, text: str) -> Vector:  # pragma: no cover - forget embeds no query
        raise _NeedVectors([text])


__all__ = ["ForgetReport", "forget_op", "rederive_merged"]
