"""Corrections, version history and document versions of a dataset (revision 0004)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

from pydantic import BaseModel
from sqlalchemy import Connection

from memflow.context import StoreContext
from memflow.db.queries import q
from memflow.db.steps import Op, sql_tx
from memflow.errors import InvalidInput, NotFound
from memflow.ids import content_hash, make_id, normalise_text
from memflow.store.plan import EdgeRow, EmbedRow, NodeRow, WritePlan
from memflow.store.writer import DocumentInfo, Writer, document_id


class HistoryEntry(BaseModel):
    """One version of a fact: its text, both times, whether it still holds and why it stopped."""

    node_id: uuid.UUID
    kind: str
    text: str
    valid_at: datetime | None = None
    recorded_at: datetime | None = None
    invalid_at: datetime | None = None
    superseded_by: uuid.UUID | None = None
    reason: str | None = None  # document | rule | model | correction (what closed it)
    actor: str | None = None
    changed_at: datetime | None = None

    @property
    def current(self) -> bool:
        return self.invalid_at is None


class DocumentVersion(BaseModel):
    id: uuid.UUID
    source: str
    title: str
    content_type: str
    version: int
    status: str  # current | replaced
    previous_id: uuid.UUID | None = None
    replaced_by: uuid.UUID | None = None
    reference_time: datetime | None = None
    created_at: datetime


def history_op(ds: uuid.UUID, node_id: uuid.UUID) -> Op[list[HistoryEntry]]:
    """Every version of the fact ``node_id`` belongs to, oldest first."""
    chain = yield sql_tx(
        lambda conn: conn.execute(q("history_chain"), {"dataset_id": ds, "id": node_id}).all(), ds
    )
    rows = [r for r in chain if r.kind is not None]
    if not rows:
        raise NotFound(
            f"no node {node_id} in this dataset: use a node id from a search's --json output "
            "(best_point_id, context_units[].node_id)"
        )
    return [
        HistoryEntry(
            node_id=r.id,
            kind=r.kind,
            text=r.text or "",
            valid_at=r.valid_at,
            recorded_at=r.recorded_at,
            invalid_at=r.invalid_at,
            superseded_by=r.superseded_by,
            reason=r.reason if r.invalid_at is not None else None,
            actor=r.actor if r.invalid_at is not None else None,
            changed_at=r.changed_at if r.invalid_at is not None else None,
        )
        for r in rows
    ]


def correct_op(
    ctx: StoreContext, point_id: uuid.UUID, text: str, *, actor: str | None = None
) -> Op[uuid.UUID]:
    """Write ``text`` as the new version of FacetPoint ``point_id`` (same facet) and close the
    old one (reason ``correction``): the lookup, then the new version's write. Returns the new
    point's id."""
    text = (text or "").replace("\x00", "").strip()
    if not text:
        raise InvalidInput("the correction is empty: pass the text the fact should now say")
    ds = ctx.dataset_id
    old = yield sql_tx(
        lambda conn: conn.execute(q("node_get"), {"dataset_id": ds, "id": point_id}).first(), ds
    )
    if old is None or old.kind != "FacetPoint":
        raise NotFound(
            f"no FacetPoint {point_id} in this dataset: correct a point id from a search "
            "(--json: best_point_id or context_units[].node_id)"
        )
    if old.invalid_at is not None:
        raise InvalidInput(
            f"point {point_id} was already replaced by {old.superseded_by}: correct the current "
            "version (memflow history shows it)"
        )
    now = datetime.now(UTC)
    new_id = make_id(ds, "FacetPoint", old.facet_id or old.id, normalise_text(text))
    if new_id == old.id:
        raise InvalidInput("the correction says the same as the point: nothing to change")
    plan = WritePlan(replace_reason="correction", rules=False)
    plan.nodes[new_id] = NodeRow(
        id=new_id, kind="FacetPoint", name=text[:120], search_text=text, replaces=old.id
    )
    plan.embeds.append(EmbedRow("FacetPoint_search_text", new_id, text))
    if old.facet_id is not None:
        eid = make_id(ds, "edge", old.facet_id, "has_point", new_id)
        plan.edges[eid] = EdgeRow(eid, old.facet_id, "has_point", new_id, f"correction -> {text}")
    chash = content_hash(json.dumps([str(point_id), text, now.isoformat()]))
    doc = DocumentInfo(
        id=document_id(ds, chash),
        source="correct",
        title=f"correction of {point_id}",
        content_type="correction",
        content_hash=chash,
        reference_time=now,
        meta={"corrects": str(point_id)},
        actor=actor,
    )
    yield from Writer(ctx.embedder, fault=ctx.fault).write_op(ds, doc, plan)
    return new_id


def document_versions(conn: Connection, ds: uuid.UUID) -> list[DocumentVersion]:
    """The dataset's documents with their source, version and status, by source and version."""
    rows = conn.execute(q("document_list"), {"dataset_id": ds}).all()
    return [DocumentVersion(**dict(r._mapping)) for r in rows]


__all__ = [
    "DocumentVersion",
    "HistoryEntry",
    "correct_op",
    "document_versions",
    "history_op",
]
