"""What one search may ask for, defined once.

:class:`SearchOptions` holds every option of a search. The facades (``Dataset.search``,
``Memory.search`` and their async twins) take them as keywords, typed by :class:`SearchKeywords`;
the service, the HTTP body and the MCP tool schema are derived from the model's fields
(:mod:`memflow.service`), so every door offers every option. :func:`memflow.recall.search.
plan_search` resolves them once: options left as None come from ``config``
(:class:`~memflow.recall.config.RecallConfig`).
"""

# No ``from __future__ import annotations``: the TypedDicts' ``Required`` must be seen at run time.
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Required, TypedDict

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from memflow.errors import InvalidInput
from memflow.recall.config import DisplayMode, RecallConfig, SearchMode


def iso_time(value: str | datetime | None, what: str, *, utc: bool = True) -> datetime | None:
    """``value`` as a time: ISO 8601 text (a date alone is midnight) or a datetime; a naive time
    is taken as UTC (``utc``), else left naive (read in ``RecallConfig.timezone``)."""
    if value is None or isinstance(value, datetime):
        when = value
    elif not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{what} {value!r} is not an ISO 8601 time: use e.g. 2024-05-08")
    else:
        try:
            when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInput(
                f"{what} {value!r} is not an ISO 8601 time: use e.g. 2024-05-08 or "
                "2024-05-08T13:56:00Z"
            ) from None
    return when.replace(tzinfo=UTC) if utc and when is not None and when.tzinfo is None else when


def _time_field(what: str) -> BeforeValidator:
    """An ISO 8601 time, left naive when it is (read in ``RecallConfig.timezone``); a bad one
    fails validation with a message that says what to send (any door: HTTP 422, an MCP error)."""

    def parse(value: Any) -> datetime | None:
        try:
            return iso_time(value, what, utc=False)
        except InvalidInput as exc:
            raise PydanticCustomError("iso_time", "{message}", {"message": str(exc)}) from None

    return BeforeValidator(parse)


class SearchOptions(BaseModel):
    """Every option of a search. None (the default) means "from ``config``" for ``mode``,
    ``display`` and ``top_k``; ``budget_tokens`` None is ``config.budget_tokens`` for
    ``highly_related`` and no budget for the other displays."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: SearchMode | None = Field(
        default=None,
        description="episodic (graph ranking, best) | vector | lexical baselines | "
        "procedural (procedures with their steps in order)",
    )
    display: DisplayMode | None = Field(
        default=None,
        description="highly_related: the facts most related to the query, packed into "
        "budget_tokens (what an agent should read); summary: one block per episode; detail: "
        "whole episodes",
    )
    top_k: int | None = Field(default=None, ge=1, description="episodes to return")
    budget_tokens: int | None = Field(
        default=None,
        ge=1,
        description="token budget of the context (highly_related: default 500; summary and "
        "detail keep the whole episode contexts that fit)",
    )
    now: Annotated[datetime | None, _time_field("now")] = Field(
        default=None, description="ISO 8601 time that relative dates in the query refer to"
    )
    as_of: Annotated[datetime | None, _time_field("as_of")] = Field(
        default=None,
        description="ISO 8601 time: what held then, as far as it had been learned by then",
    )
    known_at: Annotated[datetime | None, _time_field("known_at")] = Field(
        default=None, description="ISO 8601 time: what the store knew then (when rows were written)"
    )
    include_history: bool = Field(
        default=False, description="also show what each current fact replaced"
    )
    scope: dict[str, str] | None = Field(
        default=None, description='whose memory: any of {"user": .., "agent": .., "session": ..}'
    )
    where: dict[str, Any] | None = Field(
        default=None,
        description='only memories whose metadata passes this filter: {"k": v}, '
        '{"k": {"in": [..]}}, {"k": {"not": v}}, {"k": {"gte": .., "lt": ..}}, '
        '{"k": {"exists": true}}, {"and": [..]}, {"or": [..]}',
    )
    datasets: list[str] | None = Field(
        default=None, description="the datasets to search together (one ranked list)"
    )
    config: RecallConfig | None = Field(
        default=None, description="recall constants (memflow.RecallConfig); default: shipped"
    )

    @field_validator("datasets", mode="before")
    @classmethod
    def _names_not_a_string(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise InvalidInput(
                f"datasets must be a list of names, not the string {value!r}: "
                f"pass datasets=[{value!r}]"
            )
        return list(value) if isinstance(value, tuple) else value

    @classmethod
    def of(cls, **given: Any) -> "SearchOptions":
        """The options ``given`` as keywords; InvalidInput (saying which) for a bad one."""
        try:
            return cls(**given)
        except ValidationError as exc:
            first = exc.errors()[0]
            if first["type"] == "iso_time":  # its message names the option
                raise InvalidInput(first["msg"]) from None
            where = ".".join(str(p) for p in first.get("loc", ())) or "options"
            raise InvalidInput(
                f"search option {where}: {first.get('msg')}; fix it (memflow.SearchOptions "
                "documents each option)"
            ) from None

    def keywords(self) -> dict[str, Any]:
        """The options set explicitly, as keywords of ``Dataset.search`` (not converted)."""
        return {name: getattr(self, name) for name in self.model_fields_set}


class SearchKeywords(TypedDict, total=False):
    """The keywords of ``Dataset.search``: the fields of :class:`SearchOptions` but ``datasets``
    (``tests/unit/test_search_options.py`` keeps the two alike)."""

    mode: SearchMode | None
    display: DisplayMode | None
    top_k: int | None
    budget_tokens: int | None
    now: datetime | str | None
    as_of: datetime | str | None
    known_at: datetime | str | None
    include_history: bool
    scope: dict[str, str] | None
    where: dict[str, Any] | None
    config: RecallConfig | None


class MultiSearchKeywords(SearchKeywords, total=False):
    """The keywords of ``Memory.search``: :class:`SearchKeywords` and the ``datasets``."""

    datasets: Required[Sequence[str]]


__all__ = ["MultiSearchKeywords", "SearchKeywords", "SearchOptions", "iso_time"]
