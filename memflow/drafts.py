"""Pure data: the structured memory that extractors produce and the writer stores.

These pydantic models are the JSON shape of ``memflow add-episode FILE`` and the output of the
``rules`` and ``llm`` extractors. They hold no database state.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


def _clean(text: str) -> str:
    # Postgres text cannot hold NUL; collapse surrounding whitespace.
    return text.replace("\x00", "").strip()


class _Draft(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class TimeSpan(_Draft):
    """A mentioned time: [start, end) with the parser's confidence and the matched text."""

    start: datetime
    end: datetime
    confidence: float = Field(default=0.9, ge=0.0, le=1.0)
    text: str = ""


class EntityDraft(_Draft):
    name: str = Field(min_length=1, max_length=500)
    description: str | None = None
    entity_type: str | None = None
    # The role the entity plays in the episode/facet it is attached to (goes on the edge text).
    role: str | None = None
    # Other names the extractor resolved to this entity (become same_entity_as edges).
    aliases: list[str] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        v = _clean(v)
        if not v:
            raise ValueError("entity name is empty")
        return v


class PointDraft(_Draft):
    search_text: str = Field(min_length=1)
    description: str | None = None
    name: str | None = None
    # Keys of the chunks (turn ids like "D1:3", sentence ids like "s12") that support this point.
    sources: list[str] = Field(default_factory=list)

    @field_validator("search_text")
    @classmethod
    def _text(cls, v: str) -> str:
        v = _clean(v)
        if not v:
            raise ValueError("point search_text is empty")
        return v


class FacetDraft(_Draft):
    facet_type: str = "topic"
    search_text: str = Field(min_length=1)
    anchor_text: str = ""
    description: str | None = None
    name: str | None = None
    points: list[PointDraft] = Field(default_factory=list)
    entities: list[EntityDraft] = Field(default_factory=list)
    time: TimeSpan | None = None
    sources: list[str] = Field(default_factory=list)

    @field_validator("search_text")
    @classmethod
    def _text(cls, v: str) -> str:
        v = _clean(v)
        if not v:
            raise ValueError("facet search_text is empty")
        return v


class EpisodeDraft(_Draft):
    name: str = Field(min_length=1)
    summary: str = Field(min_length=1)
    facets: list[FacetDraft] = Field(default_factory=list)
    entities: list[EntityDraft] = Field(default_factory=list)
    memory_type: Literal["episodic", "atomic"] = "episodic"
    time: TimeSpan | None = None
    sources: list[str] = Field(default_factory=list)

    @field_validator("name", "summary")
    @classmethod
    def _text(cls, v: str) -> str:
        v = _clean(v)
        if not v:
            raise ValueError("must not be empty")
        return v


__all__ = ["EntityDraft", "EpisodeDraft", "FacetDraft", "PointDraft", "TimeSpan"]
