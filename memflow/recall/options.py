"""What one search may ask for, defined once.

:class:`SearchOptions` holds every option of a search and its default. The facades
(``Dataset.search``, ``Memory.search`` and their async twins) take them as keywords, typed by
:class:`SearchKeywords`; the service, the HTTP body and the MCP tool schema are derived from the
model's fields (:mod:`memflow.service`), so every door offers every option.
:func:`memflow.recall.search.plan_search` resolves them once (:meth:`SearchOptions.resolved`).
"""

# No ``from __future__ import annotations``: the TypedDicts' ``Required`` must be seen at run time.
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Required, TypedDict

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from memflow.bounds import check_time
from memflow.errors import InvalidInput
from memflow.recall.config import DisplayMode, RecallConfig, SearchMode
from memflow.text.tokens import TokenCounterName


def iso_time(value: str | datetime | None, what: str, *, utc: bool = True) -> datetime | None:
    """``value`` as a time: ISO 8601 text (a date alone is midnight) in memflow's time range
    (:mod:`memflow.bounds`) or a datetime; a naive time is taken as UTC (``utc``), else left
    naive (read in the search's ``timezone``)."""
    if value is None or isinstance(value, datetime):
        when = value
    elif not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{what} must be an ISO 8601 time such as 2024-05-08, got {value!r}")
    else:
        try:
            when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInput(
                f"{what} {value!r} is not an ISO 8601 time: use e.g. 2024-05-08 or "
                "2024-05-08T13:56:00Z"
            ) from None
        check_time(when, what)
    return when.replace(tzinfo=UTC) if utc and when is not None and when.tzinfo is None else when


def _time_field(what: str) -> BeforeValidator:
    """An ISO 8601 time, left naive when it is (read in the search's ``timezone``); a bad one
    fails validation with a message that says what to send (any door: HTTP 422, an MCP error)."""

    def parse(value: Any) -> datetime | None:
        try:
            return iso_time(value, what, utc=False)
        except InvalidInput as exc:
            raise PydanticCustomError("iso_time", "{message}", {"message": str(exc)}) from None

    return BeforeValidator(parse)


# What highly_related packs into when the call gives no budget (summary and detail have none).
HIGHLY_RELATED_BUDGET = 500


class SearchOptions(BaseModel):
    """Every option of a search, with its default: the one source of a search's defaults (the
    recall constants are :class:`~memflow.RecallConfig`'s). A keyword given as None takes the
    default. ``budget_tokens`` left out is 500 for ``highly_related`` and no budget for the
    other displays."""

    # Each field's docstring is its description in the doors' schemas.
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    mode: SearchMode = "episodic"
    """episodic (graph ranking, best) | vector | lexical baselines | procedural (procedures
    with their steps in order)"""
    display: DisplayMode = "summary"
    """highly_related: the facts most related to the query, packed into budget_tokens (what an
    agent should read); summary: one block per episode; detail: whole episodes"""
    top_k: int = Field(default=10, ge=1)
    """episodes to return"""
    budget_tokens: int | None = Field(default=None, ge=1)
    """token budget of the context (highly_related: default 500; summary and detail keep the
    whole episode contexts that fit)"""
    token_counter: TokenCounterName = "words"
    """how the budget counts tokens: "words" (CJK characters as half a word) or "tiktoken"
    (cl100k_base; the extra memflow[tiktoken])"""
    timezone: str = "UTC"
    """the zone of relative dates in the query and of a naive "now": an IANA name
    ("Asia/Shanghai"), "UTC" or an offset ("+08:00")"""
    now: Annotated[datetime | None, _time_field("now")] = None
    """ISO 8601 time that relative dates in the query refer to (default: the present)"""
    as_of: Annotated[datetime | None, _time_field("as_of")] = None
    """ISO 8601 time: what held then, as far as it had been learned by then"""
    known_at: Annotated[datetime | None, _time_field("known_at")] = None
    """ISO 8601 time: what the store knew then (when its rows were written)"""
    include_history: bool = False
    """also show what each current fact replaced"""
    scope: dict[str, str] | None = None
    """whose memory: any of {"user": .., "agent": .., "session": ..}"""
    where: dict[str, Any] | None = None
    """only memories whose metadata passes this filter: {"k": v}, {"k": {"in": [..]}},
    {"k": {"not": v}}, {"k": {"gte": .., "lt": ..}}, {"k": {"exists": true}}, {"and": [..]},
    {"or": [..]}"""
    datasets: list[str] | None = None
    """the datasets to search together (one ranked list, each result with its dataset)"""
    config: RecallConfig | None = None
    """recall constants (memflow.RecallConfig); default: the shipped ones"""

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
        """The options ``given`` as keywords (None: the default); InvalidInput (saying which)
        for a bad one."""
        try:
            return cls(**{k: v for k, v in given.items() if v is not None})
        except ValidationError as exc:
            first = exc.errors()[0]
            if first["type"] == "iso_time":  # its message names the option
                raise InvalidInput(first["msg"]) from None
            where = ".".join(str(p) for p in first.get("loc", ())) or "options"
            raise InvalidInput(
                f"search option {where}: {first.get('msg')}; fix it (memflow.SearchOptions "
                "documents each option)"
            ) from None

    def resolved(self) -> "SearchOptions":
        """These options as a search runs them: ``highly_related`` with its default budget."""
        if self.budget_tokens is not None or self.display != "highly_related":
            return self
        return self.model_copy(update={"budget_tokens": HIGHLY_RELATED_BUDGET})

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
    token_counter: TokenCounterName | None
    timezone: str | None
    now: datetime | str | None
    as_of: datetime | str | None
    known_at: datetime | str | None
    include_history: bool | None
    scope: dict[str, str] | None
    where: dict[str, Any] | None
    config: RecallConfig | None


class MultiSearchKeywords(SearchKeywords, total=False):
    """The keywords of ``Memory.search``: :class:`SearchKeywords` and the ``datasets``."""

    datasets: Required[Sequence[str]]


DEFAULTS = SearchOptions()

__all__ = [
    "DEFAULTS",
    "HIGHLY_RELATED_BUDGET",
    "MultiSearchKeywords",
    "SearchKeywords",
    "SearchOptions",
    "iso_time",
]
