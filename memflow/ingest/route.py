"""Route: a new episode draft either starts an episode or merges into an existing one.

Candidates are the episodes whose stored summary is nearest to the draft's summary, with the
number of the draft's entities they already involve (one SQL statement, ``route_candidates``).
An LLM decides when one is configured; otherwise a candidate is merged into when its summary
similarity is >= 0.9 *and* it shares at least one entity. The threshold is deliberately strict:
a wrong merge mixes two events inside one episode (and its summary), while a missed merge only
leaves two episodes that search still finds separately. Routing is off by default for dialog and
conversation sessions: a session is its own event, and consecutive sessions between the same
speakers look alike without being the same event.

A merge changes rows that content-addressed upserts never touch, so it records what it changed
in ``node.props["merge"]``: the pre-merge text, ``updated_at`` and embedding (``base``) and each
merged document's contribution (``docs``). ``forget`` re-derives the node from what remains and,
when nothing merged remains, restores the base exactly (the records: :mod:`memflow.store.merge`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial

from pydantic import BaseModel, Field
from sqlalchemy import Connection

from memflow.db.queries import q
from memflow.db.schema import COLLECTIONS
from memflow.db.steps import Body, run_body
from memflow.drafts import EpisodeDraft
from memflow.embed.base import Vector
from memflow.store.merge import (
    EpisodeState,
    MergeBase,
    MergeRecord,
    NodeUpdate,
    derive_anchor,
    derive_summary,
    encode_vector,
)
from memflow.store.plan import EmbedRow, WritePlan, entity_id, episode_id
from memflow.text.sentences import shorten

CONTRIBUTION_MAX_CHARS = 1000


class RouteSettings(BaseModel):
    """How new episodes are routed. ``enabled=None``: on for texts, off for dialog sessions."""

    enabled: bool | None = None
    min_similarity: float = Field(default=0.9, ge=-1.0, le=1.0)
    min_shared_entities: int = Field(default=1, ge=0)
    candidates: int = Field(default=5, ge=1, le=100)
    # None: ask the LLM when the memorize call has one; False: thresholds only.
    use_llm: bool | None = None
    llm_min_similarity: float = Field(default=0.75, ge=-1.0, le=1.0)
    llm_max_calls: int = Field(default=2, ge=1)

    def active_for(self, content_type: str) -> bool:
        if self.enabled is not None:
            return self.enabled
        return content_type not in ("dialog", "conversation")


@dataclass(frozen=True)
class Candidate:
    id: uuid.UUID
    name: str
    summary: str
    similarity: float
    shared_entities: int
    time_start: datetime | None = None
    time_end: datetime | None = None


def same_time(draft: EpisodeDraft, cand: Candidate) -> bool:
    """False when both are dated, their spans do not overlap and their names differ: notes of
    two different days ("Standup — 3 May", "Standup — 4 May") are two events, however alike
    (issue 12, item 5: a merge would lose the new one's date). An update under the same name
    ("Orders database migration" again, a month later) may still merge."""
    if draft.time is None or cand.time_start is None:
        return True
    if draft.name.strip().casefold() == cand.name.strip().casefold():
        return True
    lo, hi = _aware(draft.time.start), _aware(draft.time.end)
    start = _aware(cand.time_start)
    end = _aware(cand.time_end) if cand.time_end else start
    if end <= start:
        return lo <= start < hi
    return lo < end and start < hi


def _aware(dt: datetime) -> datetime:
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)


def choose_target(
    candidates: Sequence[Candidate],
    settings: RouteSettings,
    ask: Callable[[Candidate], bool] | None = None,
) -> Candidate | None:
    """The candidate to merge into (candidates sorted by similarity, best first), or None."""
    if ask is not None:
        for asked, cand in enumerate(candidates):
            if cand.similarity < settings.llm_min_similarity or asked >= settings.llm_max_calls:
                return None
            if ask(cand):
                return cand
        return None
    for cand in candidates:
        if (
            cand.similarity >= settings.min_similarity
            and cand.shared_entities >= settings.min_shared_entities
        ):
            return cand
    return None


def draft_entity_ids(dataset_id: uuid.UUID, draft: EpisodeDraft) -> list[uuid.UUID]:
    names = [e.name for e in draft.entities] + [e.name for f in draft.facets for e in f.entities]
    return list(dict.fromkeys(entity_id(dataset_id, n) for n in names))


def find_candidates(
    conn: Connection,
    dataset_id: uuid.UUID,
    vector: Vector,
    entity_ids: list[uuid.UUID],
    k: int,
) -> list[Candidate]:
    conn.execute(q("route_bind"), {"ef_search": str(max(40, k))})
    rows = conn.execute(
        q("route_candidates"),
        {"dataset_id": dataset_id, "embedding": vector, "entity_ids": entity_ids, "k": k},
    ).all()
    return [
        Candidate(
            r.id,
            r.name,
            r.summary or "",
            float(r.similarity),
            int(r.shared_entities),
            r.time_start,
            r.time_end,
        )
        for r in rows
    ]


def route_drafts(
    conn: Connection,
    dataset_id: uuid.UUID,
    drafts: Sequence[EpisodeDraft],
    vectors: Sequence[Vector],
    settings: RouteSettings,
    ask: Callable[[EpisodeDraft, Candidate], bool] | None = None,
) -> list[uuid.UUID | None]:
    """For each draft, the existing episode it merges into (None: a new episode)."""
    return run_body(conn, route_steps(dataset_id, drafts, vectors, settings, ask))


def route_steps(
    dataset_id: uuid.UUID,
    drafts: Sequence[EpisodeDraft],
    vectors: Sequence[Vector],
    settings: RouteSettings,
    ask: Callable[[EpisodeDraft, Candidate], bool] | None = None,
) -> Body[list[uuid.UUID | None]]:
    """:func:`route_drafts` as transaction steps (``ask``, an LLM call, runs between them)."""
    out: list[uuid.UUID | None] = []
    for draft, vec in zip(drafts, vectors, strict=True):
        own = episode_id(dataset_id, draft)
        entities = draft_entity_ids(dataset_id, draft)
        found: list[Candidate] = yield partial(
            find_candidates,
            dataset_id=dataset_id,
            vector=vec,
            entity_ids=entities,
            k=settings.candidates,
        )
        cands = [
            c
            for c in found
            # the same episode stored already: nothing to merge; another day: another event
            # (unless routing was switched on explicitly, which merges whatever is alike)
            if c.id != own and (settings.enabled or same_time(draft, c))
        ]
        asker = None if ask is None else (lambda c, d=draft: ask(d, c))
        target = choose_target(cands, settings, asker)
        out.append(target.id if target else None)
    return out


# ---------------------------------------------------------------- merging a plan


def _first_chunk(sources: Sequence[str], chunk_index: dict[str, int]) -> float:
    found = [chunk_index[k] for k in sources if k in chunk_index]
    return min(found) if found else float("inf")


def merge_into_plan(
    plan: WritePlan,
    targets: dict[uuid.UUID, EpisodeState],
    document_id: uuid.UUID,
    chunk_index: dict[str, int],
) -> list[NodeUpdate]:
    """Rewrite the planned rows of merge targets and return the UPDATEs the write must run.

    The plan was built with ``Planner.add_episode(draft, ep_id=target)``: a planned facet whose
    id is an existing facet of the target absorbs its text there; the target's summary is
    re-derived from all its facets, old and new.
    """
    doc = str(document_id)
    updates: list[NodeUpdate] = []
    for ep_id, state in targets.items():
        existing: dict[uuid.UUID, tuple[str, str]] = {}
        for f in state.facets:
            row = plan.nodes.get(f.id)
            anchor = f.anchor_text
            if row is not None:
                rec = MergeRecord.of(f.props) or MergeRecord(
                    base=MergeBase(
                        text=f.anchor_text,
                        updated_at=f.updated_at,
                        vector=encode_vector(f.embedding),
                    )
                )
                contributed = shorten(row.anchor_text or "", CONTRIBUTION_MAX_CHARS)
                docs = [*rec.docs, (doc, contributed)]
                merged = derive_anchor(rec.base.text if rec.base else None, [t for _, t in docs])
                row.name, row.search_text = f.name, f.search_text
                if merged != f.anchor_text:
                    rec.docs = docs
                    anchor = merged
                    updates.append(
                        NodeUpdate(f.id, "Facet", merged, rec.props(f.props), None, f.updated_at)
                    )
                row.anchor_text = anchor
            existing[f.id] = (f.search_text, anchor)
        new = [
            plan.nodes[e.dst]
            for e in plan.edges.values()
            if e.src == ep_id and e.relationship == "has_facet" and e.dst not in existing
        ]
        new.sort(key=lambda n: (_first_chunk(n.sources, chunk_index), str(n.id)))
        summary = derive_summary(
            [*existing.values(), *((n.search_text or "", n.anchor_text or "") for n in new)]
        )
        rec = MergeRecord.of(state.props) or MergeRecord(
            base=MergeBase(
                text=state.summary,
                updated_at=state.updated_at,
                vector=encode_vector(state.embedding),
            )
        )
        rec.docs = [*rec.docs, (doc, "")]
        plan.summary_parts.pop(ep_id, None)  # re-derived from facets the plan does not all hold
        row = plan.nodes[ep_id]
        row.name, row.summary, row.time = state.name, summary, None
        updates.append(
            NodeUpdate(ep_id, "Episode", summary, rec.props(state.props), None, state.updated_at)
        )
    return updates


def reconcile(
    conn: Connection, dataset_id: uuid.UUID, plan: WritePlan, keep: set[uuid.UUID]
) -> None:
    """Planned rows that already exist keep their stored texts (nodes are content-addressed and
    never rewritten), and only new or merged nodes are (re-)embedded. ``keep``: merged nodes."""
    ids = [i for i in plan.nodes if i not in keep]
    existing: set[uuid.UUID] = set()
    if ids:
        for r in conn.execute(q("route_existing_nodes"), {"dataset_id": dataset_id, "ids": ids}):
            row = plan.nodes[r.id]
            row.name, row.summary = r.name, r.summary
            row.search_text, row.anchor_text = r.search_text, r.anchor_text
            existing.add(r.id)
    if plan.edges:
        params = {"dataset_id": dataset_id, "ids": list(plan.edges)}
        for r in conn.execute(q("route_existing_edges"), params):
            plan.edges[r.id].edge_text = r.edge_text
    fields: dict[str, list[tuple[str, str]]] = {}
    for c in COLLECTIONS:  # the embedded fields of each node kind
        if c.node_kind:
            fields.setdefault(c.node_kind, []).append((c.name, c.field))
    plan.embeds = [
        EmbedRow(collection, node.id, getattr(node, attr) or "")
        for node in plan.nodes.values()
        if node.id not in existing
        for collection, attr in fields.get(node.kind, ())
    ]


__all__ = [
    "CONTRIBUTION_MAX_CHARS",
    "Candidate",
    "RouteSettings",
    "choose_target",
    "draft_entity_ids",
    "find_candidates",
    "merge_into_plan",
    "reconcile",
    "route_drafts",
    "route_steps",
]
