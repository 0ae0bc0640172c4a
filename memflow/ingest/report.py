"""Pure data: what ``memorize`` did, per document and in total."""

from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import BaseModel, Field

Status = Literal["written", "skipped", "failed"]
COUNT_KEYS = (
    "episodes",
    "facets",
    "facet_points",
    "entities",
    "procedures",
    "edges",
    "embeddings",
    "llm_calls",
    "tokens",
)


class DocumentReport(BaseModel):
    """One input document. Counts are the rows its write touched (existing shared rows included)."""

    id: uuid.UUID | None = None  # None when the input could not even be parsed
    source: str
    status: Status
    content_type: str | None = None
    extractor: str | None = None
    episodes: int = 0
    facets: int = 0
    facet_points: int = 0
    entities: int = 0
    procedures: int = 0  # procedure versions written (steps and context points not counted)
    edges: int = 0
    embeddings: int = 0  # texts newly embedded (cache misses)
    merged: int = 0  # episode drafts routed into an existing episode
    llm_calls: int = 0
    tokens: int = 0
    seconds: float = 0.0
    episode_ids: list[uuid.UUID] = Field(default_factory=list)
    error: str | None = None
    error_type: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = self.model_dump(mode="json")
        out["seconds"] = round(self.seconds, 3)
        if self.error is None:
            out.pop("error")
            out.pop("error_type")
        return out

    def span_attributes(self) -> dict[str, Any]:
        """Its span's attributes (memflow.trace, docs/traces.md): the status and counts."""
        skip = {"source", "id", "episode_ids", "error", "seconds"}
        got = self.model_dump(mode="json", exclude_none=True, exclude=skip)
        return {
            "memflow.document.id": str(self.id),
            **{f"memflow.document.{k}": v for k, v in got.items()},
        }


class MemorizeReport(BaseModel):
    documents: list[DocumentReport] = Field(default_factory=list)

    def _with(self, status: Status) -> list[DocumentReport]:
        return [d for d in self.documents if d.status == status]

    @property
    def written(self) -> list[DocumentReport]:
        return self._with("written")

    @property
    def skipped(self) -> list[DocumentReport]:
        return self._with("skipped")

    @property
    def failed(self) -> list[DocumentReport]:
        return self._with("failed")

    @property
    def ok(self) -> bool:
        return not self.failed

    @property
    def episode_ids(self) -> list[uuid.UUID]:
        return list(dict.fromkeys(e for d in self.documents for e in d.episode_ids))

    def totals(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "documents": len(self.documents),
            "written": len(self.written),
            "skipped": len(self.skipped),
            "failed": len(self.failed),
        }
        for key in (*COUNT_KEYS, "merged"):
            out[key] = sum(int(getattr(d, key)) for d in self.documents)
        out["seconds"] = round(sum(d.seconds for d in self.documents), 3)
        return out

    def to_json(self) -> dict[str, Any]:
        return {"documents": [d.to_json() for d in self.documents], "totals": self.totals()}


__all__ = ["COUNT_KEYS", "DocumentReport", "MemorizeReport", "Status"]
