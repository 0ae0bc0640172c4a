"""Pure data: a parsed input document, before extraction."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ContentType = Literal["text", "markdown", "dialog", "conversation", "draft"]


class Chunk(BaseModel):
    """One unit of the source: a sentence/paragraph of a text, or one turn of a dialog.

    ``key`` is stable inside the document (``D1:3`` turn ids when the input has them, else
    ``s<index>`` / ``t<index>``) and is what drafts cite in their ``sources``.
    """

    model_config = ConfigDict(extra="forbid")

    index: int
    key: str
    text: str
    speaker: str | None = None
    timestamp: datetime | None = None
    session: int | None = None
    section: str | None = None  # heading path for Markdown


class Session(BaseModel):
    """A dialog session: consecutive turns with a start time (conversation JSON, LoCoMo)."""

    model_config = ConfigDict(extra="forbid")

    index: int
    started_at: datetime | None = None
    chunk_indexes: list[int] = Field(default_factory=list)


class ParsedDocument(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str
    title: str
    content_type: ContentType
    text: str
    reference_time: datetime
    chunks: list[Chunk]
    sessions: list[Session] = Field(default_factory=list)
