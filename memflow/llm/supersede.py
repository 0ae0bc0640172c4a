"""The model path of supersession: does a new fact replace stored ones? (revision 0004)

Runs before the document's transaction (a slow model holds no lock). Candidates are the stored
current FacetPoints closest to each new point (cosine similarity at least ``min_similarity``);
the model answers with the strict :class:`~memflow.llm.schemas.SupersedeDecision`. ``update`` and
``contradict`` close the stored fact (reason ``model``) in the document's transaction. A failed,
malformed or slow reply decides nothing: the document is still written, with the rules path only.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memflow.db.queries import q
from memflow.db.steps import Op, sql_tx
from memflow.errors import MemflowError
from memflow.ids import text_hash
from memflow.llm.client import LlmClient, load_prompt
from memflow.llm.schemas import SupersedeDecision
from memflow.text.supersede import Closure

log = logging.getLogger(__name__)

_TEXT_MAX = 400


@dataclass(frozen=True)
class Candidate:
    """A stored point the model is asked about, with its cosine similarity to the new one."""

    id: uuid.UUID
    text: str
    similarity: float | None


@dataclass(frozen=True)
class NewPoint:
    id: uuid.UUID
    text: str
    when: str  # the record time as text, for the prompt


class LlmSuperseder:
    def __init__(
        self, client: LlmClient, *, min_similarity: float = 0.75, max_candidates: int = 5
    ) -> None:
        self.client = client
        self.min_similarity = min_similarity
        self.max_candidates = max_candidates
        self.failures = 0

    def messages(
        self, new: NewPoint, candidates: Sequence[tuple[uuid.UUID, str]]
    ) -> list[dict[str, str]]:
        listed = "\n".join(f"{i}. {t[:_TEXT_MAX]}" for i, (_, t) in enumerate(candidates, start=1))
        user = load_prompt(
            "supersede_user", new_fact=new.text[:_TEXT_MAX], new_time=new.when, candidates=listed
        )
        return [
            {"role": "system", "content": load_prompt("supersede_system")},
            {"role": "user", "content": user},
        ]

    def decide(
        self, new: NewPoint, candidates: Sequence[tuple[uuid.UUID, str] | Candidate]
    ) -> list[Closure]:
        """The candidates the model says ``new`` replaces, each a closure logged with ``by:
        "model"``, its decision and the candidate's similarity (``score``); [] when the call
        fails."""
        if not candidates:
            return []
        given = [c if isinstance(c, Candidate) else Candidate(c[0], c[1], None) for c in candidates]
        try:
            reply, _ = self.client.complete_json(
                self.messages(new, [(c.id, c.text) for c in given]),
                SupersedeDecision,
                "memflow_supersede",
            )
        except MemflowError as exc:
            self.failures += 1
            log.warning("memflow: supersession by the model skipped for one point: %s", exc)
            return []
        out = []
        for d in reply.decisions:
            if d.relation in ("update", "contradict") and d.candidate <= len(given):
                c = given[d.candidate - 1]
                detail: dict[str, Any] = {
                    "by": "model",
                    "decision": d.relation,
                    "candidate": c.text,
                }
                if c.similarity is not None:
                    detail["score"] = round(c.similarity, 4)
                out.append(Closure(c.id, new.id, "model", detail))
        return out

    def neighbours(
        self, ds: uuid.UUID, vector: Any, exclude: list[uuid.UUID]
    ) -> Op[list[Candidate]]:
        params = {"dataset_id": ds, "q": vector, "exclude": exclude, "k": self.max_candidates}
        rows = yield sql_tx(lambda conn: conn.execute(q("supersede_neighbours"), params).all(), ds)
        found = [Candidate(r.id, r.text or "", 1.0 - float(r.distance)) for r in rows]
        return [
            c for c in found if c.similarity is not None and c.similarity >= self.min_similarity
        ]

    def plan_decisions(
        self,
        ds: uuid.UUID,
        points: Sequence[NewPoint],
        vectors: Mapping[uuid.UUID, Any],
    ) -> Op[list[Closure]]:
        """Closures for every new point that has close stored candidates (an operation: one
        read per point, the model called between them)."""
        exclude = [p.id for p in points]
        out: list[Closure] = []
        for p in points:
            vec = vectors.get(p.id)
            if vec is None:
                continue
            candidates = yield from self.neighbours(ds, vec, exclude)
            out += self.decide(p, candidates)
        return out


def new_points(
    plan: Any, vectors: Mapping[bytes, Any]
) -> tuple[list[NewPoint], dict[uuid.UUID, Any]]:
    """The FacetPoints of a write plan with their vectors (by text hash in ``vectors``)."""
    points: list[NewPoint] = []
    by_id: dict[uuid.UUID, Any] = {}
    for n in plan.nodes.values():
        if n.kind != "FacetPoint" or not n.search_text:
            continue
        when = n.recorded_at.isoformat() if n.recorded_at else "now"
        points.append(NewPoint(n.id, n.search_text, when))
        vec = vectors.get(text_hash(n.search_text))
        if vec is not None:
            by_id[n.id] = vec
    return points, by_id


__all__ = ["Candidate", "LlmSuperseder", "NewPoint", "new_points"]
