"""The one service layer behind memflow's front doors (MCP server, HTTP API).

It takes an open :class:`~memflow.memory.Memory`, validates what a remote caller sends, calls the
Dataset API and returns JSON-able dicts -- the same ones ``memflow search --json`` and
``memflow memorize --json`` print. Every failure is a :class:`~memflow.errors.MemflowError` whose
one-line message the doors pass on unchanged. Nothing here knows about HTTP or MCP.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from sqlalchemy import Engine, event

from memflow.bounds import check_json, parse_iso
from memflow.db import engine as dbe
from memflow.db.filters import check_metadata, check_scope
from memflow.db.queries import q, raw
from memflow.errors import (
    ConnectionFailed,
    DatabaseError,
    ExtensionMissing,
    InvalidInput,
    MemflowError,
    SchemaOutOfDate,
)
from memflow.ingest.parse import decode_input
from memflow.ingest.pipeline import max_document_bytes, resolve_inputs

if TYPE_CHECKING:
    from memflow.memory import Dataset, DatasetInfo, Memory
    from memflow.recall.config import DisplayMode, SearchMode
    from memflow.recall.types import SearchResponse

ContentTypeChoice = Literal["auto", "text", "markdown", "dialog", "conversation", "draft"]
CONTENT_TYPE_CHOICES: tuple[str, ...] = get_args(ContentTypeChoice)
# What an agent gets unless it asks for more: the units most related to the query, packed into
# the token budget (not whole episode blocks).
AGENT_DISPLAY: DisplayMode = "highly_related"
log = logging.getLogger(__name__)
_SQLSTATE = re.compile(r"\[([0-9A-Z]{5})\]")


class PayloadTooLarge(InvalidInput):
    """The input is larger than memflow takes in one call: split it into smaller documents."""


@dataclass(frozen=True)
class Limits:
    """Bounds on what one remote call may ask for (a local script calls the Dataset API)."""

    max_top_k: int = 100
    max_budget_tokens: int = 20_000
    max_query_chars: int = 4_000
    max_datasets: int = 20  # in one search over several datasets


def dataset_json(d: DatasetInfo) -> dict[str, Any]:
    """One row of ``memflow datasets --json``."""
    return {
        "id": str(d.id),
        "name": d.name,
        "episodes": d.episodes,
        "documents": d.documents,
        "embedder": d.embedder,
        "created_at": d.created_at.isoformat(),
    }


def stats_json(dataset: str, stats: dict[str, int]) -> dict[str, Any]:
    """What ``memflow stats --json`` prints."""
    return {"dataset": dataset, **stats}


def parse_time(value: str | datetime | None, what: str) -> datetime | None:
    """An ISO 8601 time (a date alone is midnight UTC; naive times are UTC) in memflow's time
    range (memflow.bounds)."""
    if value is None or isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be an ISO 8601 time such as 2024-05-08, got {value!r}")
    return parse_iso(value, what)


def public_error(exc: MemflowError) -> tuple[str, str]:
    """The error type and message a remote caller gets for ``exc``. A database failure says what
    failed and what to do without the server's internals (socket paths, hosts, SQL text): those
    go to the server's log. Every other error's message is the caller's to read."""
    if not isinstance(exc, DatabaseError) or isinstance(exc, SchemaOutOfDate | ExtensionMissing):
        return type(exc).__name__, str(exc)
    log.warning("%s: %s", type(exc).__name__, exc)
    found = _SQLSTATE.search(str(exc))
    state = found.group(1) if found else None
    if isinstance(exc, ConnectionFailed):
        message = (
            "the server cannot reach its database right now: retry the call in a moment; if it "
            "keeps failing, the server's operator should check that PostgreSQL runs (the "
            "server's log has the details)"
        )
    elif state in ("40001", "40P01"):
        message = f"the call conflicted with concurrent writers [{state}]: retry the call"
    elif state == "57014":
        message = (
            f"the statement was cancelled [{state}] (it ran past the server's statement "
            "timeout): retry the call, or narrow it (a smaller top_k, a tighter filter)"
        )
    elif state == "25006":
        message = (
            f"the server's database only accepts reads [{state}]: its operator should point "
            "writes at the primary"
        )
    else:
        message = (
            f"the database failed{f' [{state}]' if state else ''}: retry the call; if it keeps "
            "failing, report it to the server's operator (the server's log has the details)"
        )
    return type(exc).__name__, message


def limit_statements(engine: Engine, seconds: float) -> None:
    """Cancel statements of ``engine`` that run longer than ``seconds``: the transaction rolls
    back, so a timed-out write leaves nothing behind. Applies to connections opened from now on."""
    if seconds <= 0:
        raise InvalidInput(f"the statement timeout must be positive, got {seconds}")
    millis = max(1, int(seconds * 1000))

    def _set(dbapi_conn: Any, _record: object) -> None:
        with dbapi_conn.cursor() as cur:
            cur.execute(raw("set_statement_timeout"), {"ms": str(millis)})
        dbapi_conn.commit()  # SET is transactional: keep it past the pool's reset-on-return

    event.listen(engine, "connect", _set)
    engine.dispose()  # connections already pooled reopen with the limit


def _between(value: int, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidInput(f"{what} must be an integer from {low} to {high}, got {value!r}")
    return value


class Service:
    """What a remote caller may do with a store: memorize, search, forget, inspect.

    ``read_roots`` are the directories whose files ``memorize(path=...)`` may read; with none, a
    caller can only send text (a server never reads its own disk on a stranger's say-so).
    """

    def __init__(
        self,
        memory: Memory,
        *,
        read_roots: Sequence[str | Path] = (),
        limits: Limits | None = None,
    ) -> None:
        self.memory = memory
        self.read_roots = tuple(Path(r).expanduser().resolve() for r in read_roots)
        self.limits = limits or Limits()

    def _dataset(self, name: str) -> Dataset:
        return self.memory.dataset(name, create=False)

    def ping(self) -> None:
        """Raise ConnectionFailed unless the database answers."""
        with dbe.transaction(self.memory.engine) as conn:
            conn.execute(q("service_ping"))

    # -- datasets ---------------------------------------------------------------------------------
    def list_datasets(self, allowed: frozenset[str] | None = None) -> dict[str, Any]:
        """Every dataset (or those in ``allowed``) with its episode and document counts."""
        rows = self.memory.datasets()
        return {"datasets": [dataset_json(d) for d in rows if allowed is None or d.name in allowed]}

    def stats(self, dataset: str) -> dict[str, Any]:
        return stats_json(dataset, self._dataset(dataset).stats())

    # -- memorize ---------------------------------------------------------------------------------
    def _readable(self, path: str) -> Path:
        if not self.read_roots:
            raise InvalidInput(
                "this server reads no files: send the content as text, or start it with "
                "--allow-read DIR"
            )
        p = Path(path).expanduser()
        resolved = p.resolve() if p.is_absolute() else (self.read_roots[0] / p).resolve()
        if not any(resolved.is_relative_to(root) for root in self.read_roots):
            roots = ", ".join(str(r) for r in self.read_roots)
            raise InvalidInput(f"{path}: outside the directories this server may read ({roots})")
        if not resolved.exists():
            raise InvalidInput(f"{path}: no such file or directory")
        return resolved

    def memorize(
        self,
        dataset: str,
        *,
        text: str | None = None,
        path: str | None = None,
        conversation: Mapping[str, Any] | Sequence[Any] | None = None,
        content_type: str = "auto",
        reference_time: str | datetime | None = None,
        extractor: Literal["auto", "rules", "llm"] = "auto",
        scope: dict[str, str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Memorise one text, one ``conversation`` (an object or list in memflow's conversation
        format: ``{"sessions": [...]}``, ``{"messages": [...]}`` or a list of messages) or a
        file/directory under the read roots into ``dataset``, with its ``scope`` and
        ``metadata`` (memflow.db.filters).

        The input is parsed before the dataset is created or anything is written, so a request
        whose every input fails validation changes nothing; in a directory, a file that fails is
        reported (``status: failed``) and the others are memorised; a document that fails later
        writes nothing."""
        if sum(x is not None for x in (text, path, conversation)) != 1:
            raise InvalidInput("pass exactly one of text, conversation or path")
        if content_type not in CONTENT_TYPE_CHOICES:
            raise InvalidInput(
                f"content_type {content_type!r} is not one of {', '.join(CONTENT_TYPE_CHOICES)}"
            )
        ref = parse_time(reference_time, "reference_time")
        scope, metadata = check_scope(scope), check_metadata(metadata)
        source: bytes | Path
        if conversation is not None:
            text, content_type = _conversation_text(conversation, content_type), "conversation"
        if text is not None:
            if not isinstance(text, str):
                raise InvalidInput(f"text must be a string, got {type(text).__name__}")
            # Bytes, never str: a str naming an existing file would be read from this disk. The
            # text is cleaned as the Python API cleans a str (NUL dropped, lone surrogates refused).
            source = decode_input(text, "text").encode("utf-8")
            limit = max_document_bytes()
            if len(source) > limit:
                raise PayloadTooLarge(
                    f"the text is {len(source)} bytes, more than memflow memorises as one document "
                    f"({limit} bytes, MEMFLOW_MAX_DOCUMENT_BYTES): split it (by chapter, by day)"
                )
        else:
            source = self._readable(str(path))
        items = resolve_inputs(source, content_type=content_type, reference_time=ref)
        if all(item.error is not None for item in items):
            raise items[0].error or InvalidInput("nothing to memorize")
        report = self.memory.dataset(dataset).memorize(
            source,
            content_type=content_type,
            extractor=extractor,
            reference_time=ref,
            scope=scope,
            metadata=metadata,
        )
        return report.to_json()

    # -- search and forget -------------------------------------------------------------------------
    def search(
        self,
        dataset: str,
        query: str,
        *,
        top_k: int = 10,
        mode: SearchMode = "episodic",
        display: DisplayMode = AGENT_DISPLAY,
        budget_tokens: int | None = None,
        now: str | datetime | None = None,
        scope: dict[str, str] | None = None,
        where: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The same JSON as ``memflow search --json``."""
        return self.search_response(
            dataset,
            query,
            top_k=top_k,
            mode=mode,
            display=display,
            budget_tokens=budget_tokens,
            now=now,
            scope=scope,
            where=where,
        ).model_dump(mode="json")

    def search_response(
        self,
        dataset: str,
        query: str,
        *,
        top_k: int = 10,
        mode: SearchMode = "episodic",
        display: DisplayMode = AGENT_DISPLAY,
        budget_tokens: int | None = None,
        now: str | datetime | None = None,
        scope: dict[str, str] | None = None,
        where: dict[str, Any] | None = None,
    ) -> SearchResponse:
        """:meth:`search` before its conversion to JSON-able dicts (the HTTP API serialises the
        model to bytes in one pass)."""
        self._check_search(query, top_k, budget_tokens)
        return self._dataset(dataset).search(
            query,
            top_k=top_k,
            mode=mode,
            display=display,
            budget_tokens=budget_tokens,
            now=parse_time(now, "now"),
            scope=scope,
            where=where,
        )

    def search_datasets_response(
        self,
        datasets: Sequence[str],
        query: str,
        *,
        top_k: int = 10,
        mode: SearchMode = "episodic",
        display: DisplayMode = AGENT_DISPLAY,
        budget_tokens: int | None = None,
        now: str | datetime | None = None,
        scope: dict[str, str] | None = None,
        where: dict[str, Any] | None = None,
    ) -> SearchResponse:
        """One search over several datasets (:meth:`memflow.Memory.search`): each result
        carries its ``dataset``. The caller checks the datasets may be used, before this."""
        self._check_search(query, top_k, budget_tokens)
        if isinstance(datasets, str) or len(datasets) > self.limits.max_datasets:
            raise InvalidInput(
                f"datasets must be a list of at most {self.limits.max_datasets} names"
            )
        return self.memory.search(
            query,
            datasets=datasets,
            top_k=top_k,
            mode=mode,
            display=display,
            budget_tokens=budget_tokens,
            now=parse_time(now, "now"),
            scope=scope,
            where=where,
        )

    def _check_search(self, query: str, top_k: int, budget_tokens: int | None) -> None:
        lim = self.limits
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("the query is empty: pass the question or keywords to search for")
        if len(query) > lim.max_query_chars:
            raise InvalidInput(
                f"the query is {len(query)} characters long: use at most {lim.max_query_chars}"
            )
        _between(top_k, 1, lim.max_top_k, "top_k")
        if budget_tokens is not None:
            _between(budget_tokens, 1, lim.max_budget_tokens, "budget_tokens")

    def forget(
        self, dataset: str, *, document_id: str | None = None, episode_id: str | None = None
    ) -> dict[str, Any]:
        """Remove a document (and what only it supported) or one episode."""
        if (document_id is None) == (episode_id is None):
            raise InvalidInput("pass exactly one of document_id or episode_id")
        ds = self._dataset(dataset)
        return ds.forget(document_id=document_id, episode_id=episode_id).to_json()

    def reopen(self, dataset: str, point_id: str, *, actor: str | None = None) -> dict[str, Any]:
        """Undo a wrong closure: the closed fact ``point_id`` holds again (``memflow reopen``);
        returns its history entry."""
        entry = self._dataset(dataset).reopen(point_id, actor=actor)
        return {"dataset": dataset, "reopened": entry.model_dump(mode="json")}

    # -- episodes ---------------------------------------------------------------------------------
    def episodes(self, dataset: str, limit: int = 1000) -> dict[str, Any]:
        rows = self._dataset(dataset).episodes(limit)
        return {"dataset": dataset, "episodes": [_jsonable(r) for r in rows]}

    def get_episode(self, dataset: str, episode_id: str) -> dict[str, Any]:
        """An episode as ``memflow show`` prints it (rows of the tree with their edge texts),
        with its provenance: the documents that support it."""
        ds = self._dataset(dataset)
        try:
            eid = uuid.UUID(str(episode_id))
        except ValueError:
            raise InvalidInput(f"{episode_id!r} is not an episode id: pass a UUID") from None
        rows = ds.episode_tree(eid)
        with dbe.transaction(self.memory.engine, ds.id) as conn:
            docs = conn.execute(q("episode_documents"), {"dataset_id": ds.id, "node_id": eid})
            documents = [_jsonable(dict(r._mapping)) for r in docs]
        return {"dataset": dataset, "episode_id": str(eid), "rows": rows, "documents": documents}


def _conversation_text(conversation: Any, content_type: str) -> str:
    """A conversation given as an object, as the JSON text memflow parses (ingest.parse checks
    it: depth, NUL, lone surrogates, dates)."""
    if content_type not in ("auto", "conversation"):
        raise InvalidInput(f"a conversation is content_type 'conversation', not {content_type!r}")
    if not isinstance(conversation, Mapping | list | tuple):
        raise InvalidInput(
            'conversation must be an object such as {"messages": [{"speaker": "Ana", "text": '
            f'"..."}}]}} or a list of messages, got {type(conversation).__name__}'
        )
    check_json(conversation, "conversation")
    try:
        return json.dumps(conversation, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"conversation must be JSON (objects, lists, strings): {exc}") from exc


def _jsonable(row: dict[str, Any]) -> dict[str, Any]:
    return {
        k: (v.isoformat() if isinstance(v, datetime) else str(v) if isinstance(v, uuid.UUID) else v)
        for k, v in row.items()
    }


__all__ = [
    "AGENT_DISPLAY",
    "CONTENT_TYPE_CHOICES",
    "Limits",
    "PayloadTooLarge",
    "Service",
    "dataset_json",
    "limit_statements",
    "parse_time",
    "public_error",
    "stats_json",
]
