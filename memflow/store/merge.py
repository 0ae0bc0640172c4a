"""Merge records: what routing changed in a stored Episode summary or Facet anchor text.

A merge (:mod:`memflow.ingest.route`) rewrites rows that content-addressed upserts never touch,
so it records in ``node.props["merge"]`` the pre-merge text, ``updated_at`` and embedding
(``base``) and each merged document's contribution (``docs``). :mod:`memflow.store.forget`
re-derives the node from what remains, or restores the base exactly. Both sides use this module.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from pydantic import BaseModel, Field
from sqlalchemy import Connection

from memflow.db.queries import q
from memflow.embed.base import Vector, as_array
from memflow.errors import DatabaseError
from memflow.ids import text_hash
from memflow.text.sentences import shorten

SUMMARY_MAX_CHARS = 1200
ANCHOR_MAX_CHARS = 2000
_MIN_FACET_SUMMARY_CHARS = 80


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


__all__ = [
    "ANCHOR_MAX_CHARS",
    "SUMMARY_MAX_CHARS",
    "EpisodeState",
    "FacetState",
    "MergeBase",
    "MergeRecord",
    "NodeUpdate",
    "apply_updates",
    "as_array",
    "decode_vector",
    "derive_anchor",
    "derive_summary",
    "encode_vector",
    "load_episodes",
    "props_without_merge",
]
