"""LLM merge decision: does a new episode draft belong to an existing episode?"""

from __future__ import annotations

import threading

from memflow.drafts import EpisodeDraft
from memflow.llm.client import LlmClient, Usage, load_prompt
from memflow.llm.schemas import MergeDecision

# Bounds keep the routing call small: the decision needs the gist, not every detail.
_SUMMARY_MAX_CHARS = 1500
_NAME_MAX_CHARS = 200


class LlmRouter:
    """Asks the chat model whether ``new`` continues the candidate episode."""

    def __init__(self, client: LlmClient) -> None:
        self.client = client
        self._lock = threading.Lock()
        self._usage = Usage()

    @property
    def usage(self) -> Usage:
        with self._lock:
            return self._usage.model_copy()

    def messages(
        self, new: EpisodeDraft, candidate_name: str, candidate_summary: str
    ) -> list[dict[str, str]]:
        user = load_prompt(
            "route_user",
            candidate_name=candidate_name[:_NAME_MAX_CHARS],
            candidate_summary=candidate_summary[:_SUMMARY_MAX_CHARS],
            new_name=new.name[:_NAME_MAX_CHARS],
            new_summary=new.summary[:_SUMMARY_MAX_CHARS],
        )
        return [
            {"role": "system", "content": load_prompt("route_system")},
            {"role": "user", "content": user},
        ]

    def decide(
        self, new: EpisodeDraft, candidate_name: str, candidate_summary: str
    ) -> MergeDecision:
        decision, used = self.client.complete_json(
            self.messages(new, candidate_name, candidate_summary), MergeDecision, "memflow_merge"
        )
        with self._lock:
            self._usage = self._usage + used
        return decision

    def should_merge(self, new: EpisodeDraft, candidate_name: str, candidate_summary: str) -> bool:
        """True when the model judges ``new`` to be the same event; raises ExtractionError."""
        return self.decide(new, candidate_name, candidate_summary).same_event


__all__ = ["LlmRouter"]
