"""Facts that change, on the write path: record and event times, supersession, document versions,
and the change log (revision 0004).

Runs inside the document's transaction (:class:`memflow.store.writer.Writer`), after its rows:
a document is written with its supersessions, or not at all. Three paths close an older point:

- **structured**: a draft point names the point it ``replaces`` (reason ``document``, or
  ``correction`` for :func:`memflow.store.history.correct`);
- **similarity** and **model**: closures decided before the transaction
  (:mod:`memflow.store.conflicts`, reason ``rule`` with ``by: "similarity"``;
  :mod:`memflow.llm.supersede`, reason ``model``), carried on the plan (``WritePlan.closures``);
- **rules**: :func:`memflow.text.supersede.superseded_by_rules` against the same speaker's
  points and the nearest ones (reason ``rule``, ``by: "rule"``), for the new points no closure
  above already decided.

A node's record time is its source's date (:func:`stamp_times`: a message's time, a note's own
date from :func:`memflow.text.dating.source_dated`, else the document's reference time): what
``as_of`` reads. Its ``created_at`` (the write) is what ``known_at`` reads (:class:`Clocks`).

A document memorised from a source (path or name) that already has a current document is that
document's next version: what only the previous version said is closed (reason ``document``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import Connection

from memflow.db.queries import q
from memflow.text.supersede import (
    PointFact,
    Supersession,
    frame_of,
    may_supersede,
    superseded_by_rules,
)

if TYPE_CHECKING:
    from memflow.store.plan import WritePlan
    from memflow.text.document import Chunk


class DocumentInfo(Protocol):
    """What of :class:`memflow.store.writer.DocumentInfo` this module reads (no import cycle)."""

    id: uuid.UUID
    source: str
    reference_time: datetime | None
    chunks: list[Chunk]
    meta: dict[str, Any]
    session_times: dict[int, datetime]
    actor: str | None


END_OF_TIME = datetime(9999, 12, 31, tzinfo=UTC)


@dataclass(frozen=True)
class Clocks:
    """The two times a search may be asked at: ``as_of`` (what was true then, by the sources' own
    dates) and ``known_at`` (what the store knew then, by its write clock). None: now."""

    as_of: datetime | None = None
    known_at: datetime | None = None

    @property
    def set(self) -> bool:
        return self.as_of is not None or self.known_at is not None

    def params(self) -> dict[str, datetime]:
        return {"as_of": self.as_of or END_OF_TIME, "known_at": self.known_at or END_OF_TIME}

    def future(self, recorded_at: datetime | None, created_at: datetime | None) -> bool:
        """Whether a row recorded (source date) and created (written) at these times comes after
        the clocks."""
        late = self.as_of is not None and recorded_at is not None and recorded_at > self.as_of
        return late or (
            self.known_at is not None and created_at is not None and created_at > self.known_at
        )

    def closed_by(
        self, invalid_at: datetime | None, recorded_at: datetime | None, written: datetime | None
    ) -> bool:
        """Whether a closure at ``invalid_at``, by a replacement recorded (source date) and
        written at these times, had happened by the clocks."""
        if invalid_at is None:
            return False
        if self.as_of is not None and not (
            invalid_at <= self.as_of and (recorded_at or invalid_at) <= self.as_of
        ):
            return False
        return self.known_at is None or written is None or written <= self.known_at


CANDIDATES_K = 8  # nearest stored points a new point is compared with (besides its speaker's)
# Nearest stored points of the new point's own speaker it is compared with: a bound (a two-speaker
# chat's same-speaker pool was the whole dataset: an ingest stall of 1,939 s on LongMemEval); the
# generator's update figures and the hand-written tune half are unchanged at this size.
SPEAKER_CANDIDATES_K = 32
# Sources that name no document of their own: never versions of one another.
ANONYMOUS_SOURCES = frozenset({"", "-", "<stdin>", "<text>", "<bytes>", "add_episode", "correct"})


# ---------------------------------------------------------------- times


def stamp_times(doc: DocumentInfo, plan: WritePlan) -> None:
    """Record time of each node: when its first message was said (chunk time, else its session's
    start), else the document's reference time, else the write time (left None: ``now()``).
    Event time: the node's own time span when it has one, else its record time."""
    when: dict[str, datetime] = {}
    for c in doc.chunks:
        t = c.timestamp
        if t is None and c.session is not None and c.session in doc.session_times:
            # A message without its own time was said at its session's start, after the ones
            # before it: one microsecond per message keeps their order ("actually, Friday").
            t = doc.session_times[c.session] + timedelta(microseconds=c.index)
        if t is not None and c.key not in when:
            when[c.key] = t
    for node in plan.nodes.values():
        times = [when[k] for k in node.sources if k in when]
        node.recorded_at = min(times) if times else doc.reference_time
        node.valid_at = node.time.start if node.time is not None else node.recorded_at
    # A point without a time of its own happened when its episode did (a journal note's title
    # date), not when the file was written: a later note's plan is then another day's.
    parent = {
        e.dst: e.src for e in plan.edges.values() if e.relationship in ("has_facet", "has_point")
    }
    for node in plan.nodes.values():
        if node.kind != "FacetPoint" or node.time is not None:
            continue
        episode = plan.nodes.get(parent.get(parent.get(node.id, node.id), node.id))
        if episode is not None and episode.kind == "Episode" and episode.time is not None:
            node.valid_at = episode.time.start
    for edge in plan.edges.values():
        dst = plan.nodes.get(edge.dst)
        edge.recorded_at = dst.recorded_at if dst is not None else doc.reference_time


# ---------------------------------------------------------------- closing nodes


def log_change(
    conn: Connection,
    ds: uuid.UUID,
    *,
    action: str,
    reason: str,
    node_id: uuid.UUID | None = None,
    document_id: uuid.UUID | None = None,
    actor: str | None = None,
    detail: dict[str, Any] | None = None,
) -> None:
    conn.execute(
        q("change_log_insert"),
        {
            "dataset_id": ds,
            "node_id": node_id,
            "document_id": document_id,
            "action": action,
            "reason": reason,
            "actor": actor,
            "detail": json.dumps(detail or {}, ensure_ascii=False, default=str),
        },
    )


def close_node(
    conn: Connection,
    ds: uuid.UUID,
    old: uuid.UUID,
    new: uuid.UUID,
    invalid_at: datetime | None,
    *,
    reason: str,
    document_id: uuid.UUID | None = None,
    actor: str | None = None,
    detail: dict[str, Any] | None = None,
    action: str = "supersede",
) -> bool:
    """Close ``old`` (replaced by ``new`` at ``invalid_at``, default now) and log it; False when it
    was already closed."""
    row = conn.execute(
        q("supersede_node"),
        {"dataset_id": ds, "old": old, "new": new, "invalid_at": invalid_at or datetime.now(UTC)},
    ).first()
    if row is None:
        return False
    log_change(
        conn,
        ds,
        action=action,
        reason=reason,
        node_id=old,
        document_id=document_id,
        actor=actor,
        detail={"superseded_by": str(new), "text": row.search_text, **(detail or {})},
    )
    return True


# ---------------------------------------------------------------- after a document's rows


def after_write(conn: Connection, ds: uuid.UUID, doc: DocumentInfo, plan: WritePlan) -> None:
    """Everything revision 0004 does when a document is written (see the module docstring)."""
    _version(conn, ds, doc, plan)
    points = [n for n in plan.nodes.values() if n.kind == "FacetPoint"]
    for n in points:
        if n.replaces is not None:
            close_node(
                conn, ds, n.replaces, n.id, n.valid_at, reason=plan.replace_reason,
                document_id=doc.id, actor=doc.actor,
            )  # fmt: skip
    for c in plan.closures:  # the model's and the similarity path's (decided before)
        close_node(
            conn, ds, c.old, c.new, c.invalid_at or _valid_at(plan, c.new), reason=c.reason,
            document_id=doc.id, actor=doc.actor, detail=c.detail,
        )  # fmt: skip
    # A new point whose change was decided before (a closure above) is not read again by the
    # rules: they would take the next earlier plan for the one just closed.
    decided = {c.new for c in plan.closures}
    ruled = [n.id for n in points if n.id not in decided]
    if ruled and plan.rules:
        for s in rule_supersessions(conn, ds, ruled):
            close_node(
                conn, ds, s.old, s.new, _valid_at(plan, s.new), reason="rule",
                document_id=doc.id, actor=doc.actor,
                detail={"by": "rule", "rule": s.rule, "change": s.detail},
            )  # fmt: skip


def _valid_at(plan: WritePlan, node: uuid.UUID) -> datetime | None:
    row = plan.nodes.get(node)
    return row.valid_at if row is not None else None


def _facts(rows: Iterable[Any]) -> list[PointFact]:
    return [PointFact(r.id, r.text or "", r.speaker, r.recorded_at, r.valid_at) for r in rows]


def rule_supersessions(
    conn: Connection, ds: uuid.UUID, new_ids: list[uuid.UUID]
) -> list[Supersession]:
    """What the rules close among current stored points when ``new_ids`` were just written.
    Candidates are read only for the new points that may close something (most chat turns and
    note lines state no change: :func:`memflow.text.supersede.may_supersede`)."""
    said = _facts(conn.execute(q("node_speakers"), {"dataset_id": ds, "ids": new_ids}))
    new = [p for p in said if may_supersede(p)]
    if not new:
        return []
    speakers = sorted({p.speaker for p in new if p.speaker})
    rows = conn.execute(
        q("supersede_candidates"),
        {
            "dataset_id": ds,
            "probe": [p.id for p in new],
            "ids": new_ids,
            "speakers": speakers,
            "k": CANDIDATES_K,
            "k_speaker": SPEAKER_CANDIDATES_K,
        },
    ).all()
    pools: dict[uuid.UUID, list[PointFact]] = {}
    for r in rows:
        pools.setdefault(r.for_id, []).extend(_facts([r]))
    out: list[Supersession] = []
    closed: set[uuid.UUID] = set()
    for fact in sorted(new, key=lambda p: (p.recorded_at is None, p.recorded_at)):
        pool = [c for c in pools.get(fact.id, []) if c.id not in closed]
        for s in superseded_by_rules(fact, pool):
            closed.add(s.old)
            out.append(s)
    return out


# ---------------------------------------------------------------- document versions


def _version(conn: Connection, ds: uuid.UUID, doc: DocumentInfo, plan: WritePlan) -> None:
    """A new document from a known source is its next version: close what only the previous
    version supported, each point replaced by the new version's most similar point."""
    if not doc.meta.get("versioned") or doc.source in ANONYMOUS_SOURCES:
        return
    prev = conn.execute(
        q("document_current_of_source"), {"dataset_id": ds, "source": doc.source, "id": doc.id}
    ).first()
    if prev is None:
        return
    params = {"dataset_id": ds}
    conn.execute(
        q("document_set_version"),
        {**params, "id": doc.id, "version": prev.version + 1, "previous_id": prev.id},
    )
    conn.execute(q("document_set_replaced"), {**params, "id": prev.id, "replaced_by": doc.id})
    log_change(
        conn, ds, action="version", reason="document", document_id=doc.id, actor=doc.actor,
        detail={"previous": str(prev.id), "version": prev.version + 1, "source": doc.source},
    )  # fmt: skip
    stale = conn.execute(
        q("document_only_nodes"), {**params, "previous_id": prev.id, "document_id": doc.id}
    ).all()
    if not stale:
        return
    new_points = [n for n in plan.nodes.values() if n.kind == "FacetPoint"]
    fallback = plan.episode_ids[0] if plan.episode_ids else None
    for row in stale:
        if row.kind == "FacetPoint":
            target = _closest(row.search_text or "", new_points) or fallback
        else:
            target = next((n.id for n in plan.nodes.values() if n.kind == row.kind), fallback)
        if target is None:
            continue
        close_node(
            conn, ds, row.id, target, doc.reference_time, reason="document", document_id=doc.id,
            actor=doc.actor, detail={"previous_document": str(prev.id)},
        )  # fmt: skip


def _closest(text: str, points: list[Any]) -> uuid.UUID | None:
    """The new point whose frame reads most like ``text``'s (None below half similar)."""
    mine = frame_of(text).tokens
    best, score = None, 0.5
    for p in points:
        r = SequenceMatcher(None, mine, frame_of(p.search_text or "").tokens).ratio()
        if r > score:
            best, score = p.id, r
    return best


# ---------------------------------------------------------------- forget


def revive_after_forget(conn: Connection, ds: uuid.UUID, actor: str | None = None) -> int:
    """Nodes whose replacement was forgotten hold again (and documents whose newer version was
    forgotten are current again); each revival is logged. Returns how many nodes revived."""
    revived = conn.execute(q("revive_orphaned"), {"dataset_id": ds}).all()
    for r in revived:
        log_change(
            conn, ds, action="revive", reason="forget", node_id=r.id, actor=actor,
            detail={"forgotten": str(r.gone)},
        )  # fmt: skip
    conn.execute(q("document_versions_repair"), {"dataset_id": ds}).all()
    return len(revived)


__all__ = [
    "ANONYMOUS_SOURCES",
    "END_OF_TIME",
    "Clocks",
    "after_write",
    "close_node",
    "log_change",
    "revive_after_forget",
    "rule_supersessions",
    "stamp_times",
]
