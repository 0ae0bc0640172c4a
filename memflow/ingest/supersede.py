"""Which supersession path a memorize call uses (``MemorizeOptions.supersede``, revision 0004)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memflow.db.steps import Op
from memflow.embed.base import Embedder
from memflow.errors import ConfigurationError
from memflow.store.conflicts import ConflictFinder, ConflictSettings
from memflow.store.plan import WritePlan
from memflow.store.writer import DocumentInfo

if TYPE_CHECKING:  # the openai package takes ~1 s to import: not on every CLI start
    from memflow.llm.client import LlmClient

Decider = Callable[[uuid.UUID, DocumentInfo, WritePlan, dict[bytes, Any]], Op[None]]


def make_decider(
    choice: Any,
    client: Callable[[], LlmClient],
    embedder: Embedder | None = None,
    settings: ConflictSettings | None = None,
) -> Decider | None:
    """The Writer's ``decide`` hook, an operation run before the document's transaction (its
    reads are transactions of their own, so the async API runs it too): the similarity path
    (:mod:`memflow.store.conflicts`: closures and links) for "rules", and for "llm" or a
    configured LlmSuperseder the chat model's closures (the similarity path then only links);
    None for "off". The rules themselves run in the transaction (memflow.store.temporal)."""
    if isinstance(choice, str) and choice not in ("rules", "llm", "off"):
        raise ConfigurationError(
            f"supersede must be 'rules', 'llm', 'off' or an LlmSuperseder, not {choice!r}"
        )
    if choice == "off":
        return None
    model = not isinstance(choice, str) or choice == "llm"
    finder = (
        ConflictFinder(embedder, settings or ConflictSettings(), close=not model)
        if embedder is not None
        else None
    )
    if finder is None and not model:
        return None

    def decide(
        ds: uuid.UUID, doc: DocumentInfo, plan: WritePlan, vectors: dict[bytes, Any]
    ) -> Op[None]:
        from memflow.llm.supersede import LlmSuperseder, new_points

        if model:
            superseder = choice if not isinstance(choice, str) else LlmSuperseder(client())
            points, by_id = new_points(plan, vectors)
            plan.closures += yield from superseder.plan_decisions(ds, points, by_id)
        if finder is not None:
            speakers = {c.key: c.speaker for c in doc.chunks}
            yield from finder.plan(ds, plan, vectors, speakers, doc.scope, doc.title)

    return decide


__all__ = ["Decider", "make_decider"]
