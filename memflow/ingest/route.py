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
when nothing merged remains, restores the base exactly.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from pydantic import BaseModel, Field
from sqlalchemy import Connection

from memflow.db.queries import q
from memflow.drafts import EpisodeDraft
from memflow.embed.base import Vector
from memflow.errors import DatabaseError
from memflow.ids import text_hash
from memflow.ingest.sentences import shorten
from memflow.store.plan import EmbedRow, WritePlan, entity_id, episode_id

SUMMARY_MAX_CHARS = 1200
ANCHOR_MAX_CHARS = 2000
CONTRIBUTION_MAX_CHARS = 1000
_MIN_FACET_SUMMARY_CHARS = 80


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
        Candidate(r.id, r.name, r.summary or "", float(r.similarity), int(r.shared_entities))
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
    out: list[uuid.UUID | None] = []
    for draft, vec in zip(drafts, vectors, strict=True):
        own = episode_id(dataset_id, draft)
        cands = [
            c
            for c in find_candidates(
                conn, dataset_id, vec, draft_entity_ids(dataset_id, draft), settings.candidates
            )
            if c.id != own  # the same episode stored already: nothing to merge
        ]
        asker = None if ask is None else (lambda c, d=draft: ask(d, c))
        target = choose_target(cands, settings, asker)
        out.append(target.id if target else None)
    return out


# ---------------------------------------------------------------- derived texts (pure)


def derive_summary(facets: Sequence[tuple[str, str]], max_chars: int = SUMMARY_MAX_CHARS) -> str:
    """The seed's sectioned form, one ``【handle】content`` line per facet, bounded in total."""
    if not facets:
        return "(empty)"
    budget = max(_MIN_FACET_SUMMARY_CHARS, max_chars // len(facets))
    lines: list[str] = []
    used = 0
    for i, (handle, content) in enumerate(facets):
        head = f"【{shorten(handle, 40)}】"
        line = head + shorten(content or handle, max(20, budget - len(head)))
        if lines and used + len(line) > max_chars:
            lines.append(f"…(+{len(facets) - i} more)")
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


def derive_anchor(
    base: str | None, contributions: Sequence[str], max_chars: int = ANCHOR_MAX_CHARS
) -> str:
    """The base text with each merged contribution appended once, bounded by ``max_chars``
    (the base itself is never cut: it is what the facet held before any merge)."""
    out = base or ""
    for text in contributions:
        text = text.strip()
        if not text or text in out:
            continue
        if not out:
            out = shorten(text, max_chars)
            continue
        room = max_chars - len(out) - 1
        if room < 20:
            break
        out = f"{out}\n{shorten(text, room)}"
    return out


# ---------------------------------------------------------------- merge records in node.props


def as_array(vec: Any) -> Vector:
    """A float32 array from a numpy array, a list, or pgvector's ``Vector`` (as rows return)."""
    if hasattr(vec, "to_numpy"):
        vec = vec.to_numpy()
    return np.asarray(vec, dtype=np.float32)


def encode_vector(vec: Any) -> str | None:
    if vec is None:
        return None
    return base64.b64encode(as_array(vec).astype("<f4").tobytes()).decode("ascii")


def decode_vector(data: str | None) -> Vector | None:
    if data is None:
        return None
    return np.frombuffer(base64.b64decode(data), dtype="<f4").astype(np.float32)


class MergeBase(BaseModel):
    text: str
    updated_at: datetime
    vector: str | None = None  # float32 embedding of ``text``, base64


class MergeRecord(BaseModel):
    base: MergeBase | None
    docs: list[tuple[str, str]] = Field(default_factory=list)  # (document id, contributed text)

    @classmethod
    def of(cls, props: dict[str, Any] | None) -> MergeRecord | None:
        raw = (props or {}).get("merge")
        return None if raw is None else cls.model_validate(raw)

    def props(self, props: dict[str, Any] | None) -> dict[str, Any]:
        return {**(props or {}), "merge": self.model_dump(mode="json")}


def props_without_merge(props: dict[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (props or {}).items() if k != "merge"}


@dataclass
class FacetState:
    id: uuid.UUID
    name: str
    search_text: str
    anchor_text: str
    props: dict[str, Any]
    updated_at: datetime
    embedding: Any


@dataclass
class EpisodeState:
    id: uuid.UUID
    name: str
    summary: str
    props: dict[str, Any]
    updated_at: datetime
    embedding: Any
    facets: list[FacetState] = field(default_factory=list)


def load_episodes(
    conn: Connection, dataset_id: uuid.UUID, ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, EpisodeState]:
    params = {"dataset_id": dataset_id, "ids": list(ids)}
    out = {
        r.id: EpisodeState(
            r.id, r.name, r.summary or "", dict(r.props or {}), r.updated_at, r.embedding
        )
        for r in conn.execute(q("route_episode_state"), params).all()
    }
    for r in conn.execute(q("route_episode_facets"), params).all():
        if r.episode_id in out:
            out[r.episode_id].facets.append(
                FacetState(
                    r.id,
                    r.name,
                    r.search_text or "",
                    r.anchor_text or "",
                    dict(r.props or {}),
                    r.updated_at,
                    r.embedding,
                )
            )
    return out


@dataclass
class NodeUpdate:
    """An explicit UPDATE of a merged Episode summary or Facet anchor text."""

    id: uuid.UUID
    kind: str  # Episode | Facet
    text: str
    props: dict[str, Any]
    updated_at: datetime | None = None  # None: now()
    expected_updated_at: datetime | None = None  # merges: the row must not have changed since
    embedding: Any = None  # set by forget (a merge's embeddings go through the writer)


def apply_updates(conn: Connection, dataset_id: uuid.UUID, updates: Sequence[NodeUpdate]) -> None:
    expected = {u.id: u.expected_updated_at for u in updates if u.expected_updated_at}
    if expected:
        rows = conn.execute(
            q("route_lock_nodes"), {"dataset_id": dataset_id, "ids": list(expected)}
        ).all()
        current = {r.id: r.updated_at for r in rows}
        changed = [i for i, at in expected.items() if current.get(i) != at]
        if changed:
            raise DatabaseError(
                f"episode {changed[0]} changed while this document was being merged into it "
                "(a concurrent memorize or forget); memorize the document again"
            )
    for u in sorted(updates, key=lambda u: u.id):
        stmt, emb = (
            ("route_update_summary", "route_set_summary_embedding")
            if u.kind == "Episode"
            else ("route_update_anchor", "route_set_anchor_embedding")
        )
        params = {"dataset_id": dataset_id, "id": u.id, "text": u.text}
        conn.execute(q(stmt), {**params, "props": json.dumps(u.props), "updated_at": u.updated_at})
        if u.embedding is not None:
            conn.execute(
                q(emb), {**params, "text_hash": text_hash(u.text), "embedding": u.embedding}
            )


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
    fields = {
        "Episode": (("Episode_summary", "summary"),),
        "Facet": (("Facet_search_text", "search_text"), ("Facet_anchor_text", "anchor_text")),
        "FacetPoint": (("FacetPoint_search_text", "search_text"),),
        "Entity": (("Entity_name", "name"),),
    }
    plan.embeds = [
        EmbedRow(collection, node.id, getattr(node, attr) or "")
        for node in plan.nodes.values()
        if node.id not in existing
        for collection, attr in fields[node.kind]
    ]


__all__ = [
    "ANCHOR_MAX_CHARS",
    "SUMMARY_MAX_CHARS",
    "Candidate",
    "EpisodeState",
    "FacetState",
    "MergeBase",
    "MergeRecord",
    "NodeUpdate",
    "RouteSettings",
    "apply_updates",
    "as_array",
    "choose_target",
    "decode_vector",
    "derive_anchor",
    "derive_summary",
    "draft_entity_ids",
    "encode_vector",
    "find_candidates",
    "load_episodes",
    "merge_into_plan",
    "props_without_merge",
    "reconcile",
    "route_drafts",
]
