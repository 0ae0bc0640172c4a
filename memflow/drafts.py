"""Pure data: the structured memory that extractors produce and the writer stores.

These pydantic models are the JSON shape of ``memflow add-episode FILE`` and the output of the
``rules`` and ``llm`` extractors. They hold no database state.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator


def _clean(text: str) -> str:
    # Postgres text cannot hold NUL; surrounding whitespace is dropped.
    text = text.replace("\x00", "").strip()
    if not text:
        raise ValueError("must not be empty or whitespace only")
    return text


# A required text field: NUL characters removed, not empty after stripping.
Text = Annotated[str, AfterValidator(_clean)]


class _Draft(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    @model_validator(mode="before")
    @classmethod
    def _drop_nul(cls, data: Any) -> Any:
        """Postgres text cannot hold NUL: remove it from every string field and string list."""
        if not isinstance(data, dict):
            return data
        out: dict[str, Any] = {}
        for key, value in data.items():
            if isinstance(value, str):
                value = value.replace("\x00", "")
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                value = [v.replace("\x00", "") for v in value]
            out[key] = value
        return out


class TimeSpan(_Draft):
    """A mentioned time: [start, end) with the parser's confidence and the matched text."""

    start: datetime
    end: datetime
    confidence: float = Field(default=0.9, ge=0.0, le=1.0)
    text: str = ""


class EntityDraft(_Draft):
    name: Text = Field(max_length=500)
    description: str | None = None
    entity_type: str | None = None
    # The role the entity plays in the episode/facet it is attached to (goes on the edge text).
    role: str | None = None
    # Other names the extractor resolved to this entity (become same_entity_as edges).
    aliases: list[str] = Field(default_factory=list)


class PointDraft(_Draft):
    search_text: Text
    description: str | None = None
    name: str | None = None
    # Keys of the chunks (turn ids like "D1:3", sentence ids like "s12") that support this point.
    sources: list[str] = Field(default_factory=list)
    # The id of a stored FacetPoint this one replaces (it is closed, reason "document").
    replaces: UUID | None = None


class FacetDraft(_Draft):
    facet_type: str = "topic"
    search_text: Text
    anchor_text: str = ""
    description: str | None = None
    name: str | None = None
    points: list[PointDraft] = Field(default_factory=list)
    entities: list[EntityDraft] = Field(default_factory=list)
    time: TimeSpan | None = None
    sources: list[str] = Field(default_factory=list)


class EpisodeDraft(_Draft):
    name: Text
    summary: Text
    facets: list[FacetDraft] = Field(default_factory=list)
    entities: list[EntityDraft] = Field(default_factory=list)
    memory_type: Literal["episodic", "atomic"] = "episodic"
    time: TimeSpan | None = None
    sources: list[str] = Field(default_factory=list)


__all__ = ["EntityDraft", "EpisodeDraft", "FacetDraft", "PointDraft", "TimeSpan"]
