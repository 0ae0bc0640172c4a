"""JSON shapes the LLM must reply with (sent as strict JSON schemas, validated by pydantic).

Validation is lenient where leniency is harmless (unknown keys ignored, unknown facet types become
``topic``) and strict where a bad value would corrupt memory (empty names and texts are rejected,
which triggers the client's retry).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

FACET_TYPES = (
    "topic",
    "event",
    "decision",
    "plan",
    "metric",
    "risk",
    "preference",
    "emotion",
    "relationship",
    "fact",
)
ENTITY_TYPES = (
    "person",
    "organisation",
    "place",
    "product",
    "work",
    "event",
    "date",
    "concept",
    "other",
)


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)


class LlmEntityRef(_Reply):
    name: str = Field(min_length=1, description="Entity name exactly as in the event's entities.")
    role: str = Field(description="What the entity does or is in this section, one short phrase.")


class LlmEntity(_Reply):
    name: str = Field(min_length=1, description="The name as written in the text.")
    entity_type: str = Field(
        description="Kind of entity.", json_schema_extra={"enum": list(ENTITY_TYPES)}
    )
    description: str = Field(description="Who or what it is, one sentence, from the text only.")
    role: str = Field(description="The role it plays in this event, one short phrase.")
    aliases: list[str] = Field(
        default_factory=list, description="Other names the text uses for the same entity."
    )

    @field_validator("entity_type", mode="before")
    @classmethod
    def _known_type(cls, v: object) -> str:
        text = str(v or "").strip().lower()
        return text if text in ENTITY_TYPES else "other"


class LlmPoint(_Reply):
    text: str = Field(
        min_length=1,
        description=(
            "One atomic fact as a short self-contained statement that names its subject; "
            "keep every number, date, amount and name from the source."
        ),
    )
    sources: list[str] = Field(
        default_factory=list, description="Keys of the source lines this fact comes from."
    )


class LlmSection(_Reply):
    title: str = Field(
        min_length=1,
        description="Short handle of this aspect (3-10 words) naming its subject.",
    )
    content: str = Field(
        min_length=1,
        description="The detailed text of this aspect: what was said or happened, with all "
        "numbers, dates and names kept.",
    )
    facet_type: str = Field(
        description="Kind of aspect.", json_schema_extra={"enum": list(FACET_TYPES)}
    )
    sources: list[str] = Field(
        default_factory=list, description="Keys of the source lines this section covers."
    )
    points: list[LlmPoint] = Field(default_factory=list)
    entities: list[LlmEntityRef] = Field(default_factory=list)

    @field_validator("facet_type", mode="before")
    @classmethod
    def _known_type(cls, v: object) -> str:
        text = str(v or "").strip().lower()
        return text if text in FACET_TYPES else "topic"


class LlmEvent(_Reply):
    name: str = Field(min_length=1, description="Title of the event, a few words.")
    sources: list[str] = Field(
        default_factory=list, description="Keys of all source lines that belong to this event."
    )
    sections: list[LlmSection] = Field(min_length=1)
    entities: list[LlmEntity] = Field(default_factory=list)


class LlmExtraction(_Reply):
    events: list[LlmEvent] = Field(min_length=1)


class MergeDecision(_Reply):
    same_event: bool = Field(
        description="True only if the new memory continues or describes the same event."
    )
    reason: str = Field(description="One short sentence.")


RELATIONS = ("same", "update", "contradict", "unrelated")


class FactRelation(_Reply):
    candidate: int = Field(ge=1, description="The number of the stored fact, as listed.")
    relation: str = Field(
        description="same: says the same; update: the new fact replaces it (the value changed); "
        "contradict: both cannot hold now; unrelated: about something else or both still hold.",
        json_schema_extra={"enum": list(RELATIONS)},
    )

    @field_validator("relation")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in RELATIONS:
            raise ValueError(f"relation must be one of {', '.join(RELATIONS)}")
        return v


class SupersedeDecision(_Reply):
    decisions: list[FactRelation] = Field(description="One entry per stored fact listed.")


__all__ = [
    "ENTITY_TYPES",
    "FACET_TYPES",
    "RELATIONS",
    "FactRelation",
    "LlmEntity",
    "LlmEntityRef",
    "LlmEvent",
    "LlmExtraction",
    "LlmPoint",
    "LlmSection",
    "MergeDecision",
    "SupersedeDecision",
]
