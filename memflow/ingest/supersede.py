"""Which supersession path a memorize call uses (``MemorizeOptions.supersede``, revision 0004)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine

from memflow.errors import ConfigurationError
from memflow.store.plan import WritePlan

if TYPE_CHECKING:  # the openai package takes ~1 s to import: not on every CLI start
    from memflow.llm.client import LlmClient

Decider = Callable[[uuid.UUID, WritePlan, dict[bytes, Any]], None]


def make_decider(choice: Any, client: Callable[[], LlmClient], engine: Engine) -> Decider | None:
    """The Writer's ``decide`` hook: None for "rules" and "off" (the rules run, or not, in the
    transaction), the chat model for "llm" or a configured LlmSuperseder."""
    if isinstance(choice, str):
        if choice not in ("rules", "llm", "off"):
            raise ConfigurationError(
                f"supersede must be 'rules', 'llm', 'off' or an LlmSuperseder, not {choice!r}"
            )
        if choice != "llm":
            return None

    def decide(ds: uuid.UUID, plan: WritePlan, vectors: dict[bytes, Any]) -> None:
        from memflow.llm.supersede import LlmSuperseder, new_points

        model = choice if not isinstance(choice, str) else LlmSuperseder(client())
        points, by_id = new_points(plan, vectors)
        plan.decisions = model.plan_decisions(engine, ds, points, by_id)

    return decide


__all__ = ["Decider", "make_decider"]
