"""Corrections, version history and document versions of a dataset (revision 0004)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import Connection

from memflow.context import StoreContext
from memflow.db.engine import transaction
from memflow.db.queries import q
from memflow.db.steps import Op, run_op, sql_tx
from memflow.errors import InvalidInput, NotFound
from memflow.ids import content_hash, make_id, normalise_text
from memflow.store.plan import EdgeRow, EmbedRow, NodeRow, WritePlan
from memflow.store.temporal import Clocks, log_change
from memflow.store.writer import DocumentInfo, Writer, document_id


class HistoryChange(BaseModel):
    """One logged change of a version: closed (``supersede``, ``correct``), ``reopen``ed,
    ``revive``d after a forget; who did it, when, and the detail logged with it."""

    action: str
    reason: str
    actor: str | None = None
    at: datetime
    detail: dict[str, Any] = Field(default_factory=dict)


class HistoryEntry(BaseModel):
    """One version of a fact: its text, its times, whether it still holds and why it stopped.

    ``recorded_at`` is its source date (what ``as_of`` reads), ``created_at`` when memflow wrote
    it (what ``known_at`` reads). ``why`` is what decided its closure: ``{"by": "rule" |
    "similarity" | "model" | ..., "score": ...}`` with the values that changed."""

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
    created_at: datetime | None = None
    why: dict[str, Any] | None = None
    changes: list[HistoryChange] = Field(default_factory=list)

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


def history(
    ctx: StoreContext,
    node_id: uuid.UUID,
    *,
    as_of: datetime | None = None,
    known_at: datetime | None = None,
) -> list[HistoryEntry]:
    """Every version of the fact ``node_id`` belongs to, oldest first; with ``as_of`` /
    ``known_at`` (:class:`memflow.store.temporal.Clocks`), as it stood then."""
    return run_op(ctx.engine, history_op(ctx.dataset_id, node_id, as_of=as_of, known_at=known_at))


def _chain(conn: Connection, ds: uuid.UUID, node_id: uuid.UUID) -> tuple[list[Any], list[Any]]:
    rows = [r for r in conn.execute(q("history_chain"), {"dataset_id": ds, "id": node_id})]
    rows = [r for r in rows if r.kind is not None]
    ids = [r.id for r in rows]
    log = list(conn.execute(q("change_log_of"), {"dataset_id": ds, "ids": ids})) if ids else []
    return rows, log


def history_op(
    ds: uuid.UUID,
    node_id: uuid.UUID,
    *,
    as_of: datetime | None = None,
    known_at: datetime | None = None,
) -> Op[list[HistoryEntry]]:
    """:func:`history` as an operation (:mod:`memflow.db.steps`)."""
    rows, log = yield sql_tx(lambda conn: _chain(conn, ds, node_id), ds)
    if not rows:
        raise NotFound(
            f"no node {node_id} in this dataset: use a node id from a search's --json output "
            "(best_point_id, context_units[].node_id)"
        )
    clocks = Clocks(_utc(as_of), _utc(known_at))
    changes: dict[uuid.UUID, list[HistoryChange]] = {}
    for c in log:
        if clocks.known_at is None or c.at <= clocks.known_at:
            changes.setdefault(c.node_id, []).append(
                HistoryChange(action=c.action, reason=c.reason, actor=c.actor, at=c.at,
                       detail=dict(c.detail or {}))
            )  # fmt: skip
    out = []
    for r in rows:
        if clocks.future(r.recorded_at, r.created_at):
            continue  # not yet said (as_of) or not yet written (known_at)
        closed = r.invalid_at is not None and (
            not clocks.set
            or clocks.closed_by(r.invalid_at, r.superseder_recorded_at, r.superseder_created_at)
        )
        out.append(
            HistoryEntry(
                node_id=r.id,
                kind=r.kind,
                text=r.text or "",
                valid_at=r.valid_at,
                recorded_at=r.recorded_at,
                invalid_at=r.invalid_at if closed else None,
                superseded_by=r.superseded_by if closed else None,
                reason=r.reason if closed else None,
                actor=r.actor if closed else None,
                changed_at=r.changed_at if closed else None,
                created_at=r.created_at,
                why=_why(r.reason, r.detail) if closed else None,
                changes=changes.get(r.id, []),
            )
        )
    return out


def _utc(when: datetime | None) -> datetime | None:
    return when.replace(tzinfo=UTC) if when is not None and when.tzinfo is None else when


def _why(reason: str | None, detail: Any) -> dict[str, Any] | None:
    """What decided a closure, from its change-log row: ``by`` (rule, similarity, model,
    document, correction) and the rest of the logged detail (score, values that changed)."""
    if reason is None:
        return None
    got = {k: v for k, v in dict(detail or {}).items() if k not in ("superseded_by", "text")}
    return {"by": got.pop("by", reason), **got}


def reopen(ctx: StoreContext, point_id: uuid.UUID, *, actor: str | None = None) -> HistoryEntry:
    """Undo a wrong closure: the closed node ``point_id`` holds again (its replacement stays
    current too), logged as ``reopen`` in its history. Returns its history entry."""
    return run_op(ctx.engine, reopen_op(ctx.dataset_id, point_id, actor=actor))


def reopen_op(ds: uuid.UUID, point_id: uuid.UUID, *, actor: str | None = None) -> Op[HistoryEntry]:
    """:func:`reopen` as an operation: one transaction."""

    def body(conn: Connection) -> None:
        node = conn.execute(q("node_get"), {"dataset_id": ds, "id": point_id}).first()
        if node is None:
            raise NotFound(
                f"no node {point_id} in this dataset: reopen a point id from a search "
                "(--json: context_units[].node_id) or from memflow history"
            )
        if node.invalid_at is None:
            raise InvalidInput(
                f"{node.kind} {point_id} is not closed: it already holds (memflow history shows "
                "its versions)"
            )
        opened = conn.execute(
            q("reopen_node"), {"dataset_id": ds, "id": point_id, "was": node.superseded_by}
        ).first()
        if opened is None:  # pragma: no cover - closed and read in this transaction
            raise InvalidInput(f"{point_id} could not be reopened: try again")
        log_change(
            conn, ds, action="reopen", reason="correction", node_id=point_id, actor=actor,
            detail={"was_superseded_by": str(node.superseded_by),
                    "was_invalid_at": node.invalid_at.isoformat(), "text": node.search_text},
        )  # fmt: skip

    yield sql_tx(body, ds)
    entries = yield from history_op(ds, point_id)
    return next(e for e in entries if e.node_id == point_id)


def correct(
    ctx: StoreContext, point_id: uuid.UUID, text: str, *, actor: str | None = None
) -> uuid.UUID:
    """Write ``text`` as the new version of FacetPoint ``point_id`` (same facet) and close the old
    one (reason ``correction``). Returns the new point's id."""
    return run_op(ctx.engine, correct_op(ctx, point_id, text, actor=actor))


def correct_op(
    ctx: StoreContext, point_id: uuid.UUID, text: str, *, actor: str | None = None
) -> Op[uuid.UUID]:
    """:func:`correct` as an operation: the lookup, then the new version's write."""
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
            f"point {point_id} was closed on {old.invalid_at.date().isoformat()}, replaced by "
            f"{old.superseded_by}: correct that current version instead (memflow history "
            f"{point_id} shows it and why it was closed); if the closure was wrong, reopen the "
            f"point first (memflow reopen {point_id}, Dataset.reopen) and then correct it"
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
    yield from Writer(ctx.engine, ctx.embedder, fault=ctx.fault).write_op(ds, doc, plan)
    return new_id


def documents(ctx: StoreContext) -> list[DocumentVersion]:
    """The dataset's documents with their source, version and status, by source and version."""
    with transaction(ctx.engine, ctx.dataset_id) as conn:
        return document_versions(conn, ctx.dataset_id)


def document_versions(conn: Connection, ds: uuid.UUID) -> list[DocumentVersion]:
    """:func:`documents` as a step (:mod:`memflow.db.steps`)."""
    rows = conn.execute(q("document_list"), {"dataset_id": ds}).all()
    return [DocumentVersion(**dict(r._mapping)) for r in rows]


__all__ = [
    "DocumentVersion",
    "HistoryChange",
    "HistoryEntry",
    "correct",
    "correct_op",
    "document_versions",
    "documents",
    "history",
    "history_op",
    "reopen",
    "reopen_op",
]
