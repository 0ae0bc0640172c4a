"""What the framework adapters share, with no framework imported: the search keywords they
forward to :meth:`memflow.Dataset.search`, a search result as JSON metadata, and the documents
they memorise (built here, so an agent's text is never read as a path or as stdin)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar

from memflow.errors import ConfigurationError, InvalidInput
from memflow.ingest.parse import parse_input
from memflow.recall.types import PathStep, SearchResponse, SearchResult
from memflow.service import AGENT_DISPLAY
from memflow.text.document import ParsedDocument

T = TypeVar("T")

# Every keyword of Dataset.search / AsyncDataset.search the adapters forward (besides the
# query), in one place: a retriever takes each as a setting and as a per-call override.
SEARCH_KEYWORDS: tuple[str, ...] = (
    "top_k",
    "mode",
    "display",
    "budget_tokens",
    "now",
    "config",
    "as_of",
    "include_history",
    "scope",
    "where",
)
# What a retriever shows unless told otherwise: the doors' agent default (the units most related
# to the query, packed into the budget).
DEFAULT_DISPLAY = AGENT_DISPLAY


def missing_extra(extra: str, package: str) -> ConfigurationError:
    return ConfigurationError(
        f"memflow.integrations.{extra.replace('-', '_')} needs {package}: "
        f"pip install 'memflow[{extra}]'"
    )


def search_keywords(
    settings: Mapping[str, Any], overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The keywords of one search: an adapter's ``settings``, then the call's ``overrides``
    (each a name of SEARCH_KEYWORDS; anything else is InvalidInput)."""
    given = {**settings, **(overrides or {})}
    unknown = sorted(set(given) - set(SEARCH_KEYWORDS))
    if unknown:
        raise InvalidInput(
            f"unknown search keyword(s) {', '.join(unknown)}: use any of "
            f"{', '.join(SEARCH_KEYWORDS)}"
        )
    return given


def require(value: T | None, what: str) -> T:
    """``value``, or a ConfigurationError saying which argument the adapter needs."""
    if value is None:
        raise ConfigurationError(what)
    return value


# ---------------------------------------------------------------- results as metadata


def _evidence(result: SearchResult) -> PathStep | None:
    """The node step of the result's best evidence: its best point, else the episode."""
    nodes = [s for s in result.path if s.kind == "node"]
    if result.best_point_id is not None:
        for step in nodes:
            if step.id == result.best_point_id:
                return step
    return next((s for s in nodes if s.id == result.episode_id), None)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def result_metadata(result: SearchResult, response: SearchResponse) -> dict[str, Any]:
    """A result as JSON-ready metadata: episode, rank, score, citations, validity, tags.

    Validity (``valid_at``, ``recorded_at``, ``invalid_at``, ``superseded_by``) is that of the
    result's best evidence (its best point, else the episode); ``units`` lists each fact of the
    result that is in the response's context with its own validity; ``replaced`` is true when
    the evidence or one of those facts no longer holds (its text is marked ``[superseded, valid
    until …]``)."""
    step = _evidence(result)
    units = [
        {
            "node_id": str(u.node_id) if u.node_id else None,
            "kind": u.kind,
            "valid_at": _iso(u.valid_at),
            "recorded_at": _iso(u.recorded_at),
            "invalid_at": _iso(u.invalid_at),
            "superseded_by": str(u.superseded_by) if u.superseded_by else None,
            "citations": [c.model_dump(mode="json") for c in u.citations],
        }
        for u in response.context_units
        if u.episode_id == result.episode_id and u.dataset == result.dataset
    ]
    invalid_at = step.invalid_at if step else None
    out: dict[str, Any] = {
        "episode_id": str(result.episode_id),
        "name": result.name,
        "kind": result.kind,
        "rank": result.rank,
        "score": result.score,
        "score_meaning": response.score_meaning,
        "best_path": result.best_path,
        "time": result.time,
        "source": result.citations[0].source if result.citations else None,
        "citations": [c.model_dump(mode="json") for c in result.citations],
        "valid_at": _iso(step.valid_at if step else None),
        "recorded_at": _iso(step.recorded_at if step else None),
        "invalid_at": _iso(invalid_at),
        "superseded_by": str(step.superseded_by) if step and step.superseded_by else None,
        "replaced": invalid_at is not None or any(u["invalid_at"] for u in units),
        "units": units,
        "scope": dict(result.scope),
        "metadata": dict(result.metadata),
    }
    if result.dataset is not None:
        out["dataset"] = result.dataset
    if result.kind == "procedure":
        out["procedure_id"] = str(result.procedure_id)
        out["steps"] = list(result.steps)
    return out


# ---------------------------------------------------------------- what the adapters memorise


def _now(when: datetime | None) -> datetime:
    if when is None:
        return datetime.now(UTC)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def text_document(text: str, *, source: str, when: datetime | None = None) -> ParsedDocument:
    """``text`` as one plain-text document named ``source`` (never read as a path, stdin or
    JSON)."""
    [doc] = parse_input(text, source=source, content_type="text", reference_time=_now(when))
    return doc


def turn_document(
    text: str, *, speaker: str, source: str, when: datetime | None = None
) -> ParsedDocument:
    """One conversation turn (``speaker`` said ``text`` at ``when``, default now) as a
    conversation document of one message."""
    if not isinstance(speaker, str) or not speaker.strip():
        raise InvalidInput("a turn needs its speaker: pass speaker='user' or a name")
    chat = {
        "title": f"{speaker} ({source})",
        "sessions": [
            {
                "started_at": _now(when).isoformat(),
                "messages": [{"speaker": speaker.strip(), "text": text}],
            }
        ],
    }
    [doc] = parse_input(json.dumps(chat), source=source, content_type="conversation")
    return doc


__all__ = [
    "DEFAULT_DISPLAY",
    "SEARCH_KEYWORDS",
    "missing_extra",
    "require",
    "result_metadata",
    "search_keywords",
    "text_document",
    "turn_document",
]
