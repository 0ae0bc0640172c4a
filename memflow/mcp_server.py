"""``memflow mcp``: memflow as a Model Context Protocol server (the official ``mcp`` SDK).

Tools: memorize, search, search_datasets (several datasets at once), forget, reopen,
list_datasets, stats, get_episode; resource template ``memflow://{dataset}/episodes/{episode_id}``. With a fixed
dataset the tools take no dataset argument, every call is bound to it and search_datasets is not
offered. A memflow error becomes an MCP tool error carrying its
one-line message (``Error executing tool search: NotFound: no dataset named ...``).
"""

# No ``from __future__ import annotations``: the SDK reads these signatures at run time.

import functools
import inspect
import json
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BaseModel, Field

from memflow import trace
from memflow.errors import MemflowError
from memflow.service import ContentTypeChoice, Service, public_error, search_request

try:
    from mcp.server import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError
    from mcp.types import ToolAnnotations
except ModuleNotFoundError as exc:  # pragma: no cover - exercised by the CLI's message
    from memflow.errors import ConfigurationError

    raise ConfigurationError(
        "memflow mcp needs the server extra: pip install 'memflow[server]'"
    ) from exc

INSTRUCTIONS = """memflow is a long-term episodic memory. `memorize` stores a note, document or
dialog; `search` returns the stored facts most related to a question as a compact context (read
its "context" field); `get_episode` shows one episode with the documents it came from; `forget`
removes a document or an episode. Search before answering questions about past events."""

DatasetName = Annotated[str, Field(description="dataset (memory space) name, e.g. 'notes'")]
Scope = Annotated[
    dict[str, str] | None,
    Field(description='whose memory: any of {"user": .., "agent": .., "session": ..}'),
]


def _tool_error(exc: MemflowError) -> ToolError:
    kind, message = public_error(exc)
    return ToolError(f"{kind}: {message}")


def _guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def call(**kwargs: Any) -> Any:
        try:
            return fn(**kwargs)
        except MemflowError as exc:
            raise _tool_error(exc) from exc

    return call


def _with_options(fn: Callable[..., Any], request: type[BaseModel]) -> Callable[..., Any]:
    """``fn`` (which takes ``**options``) with the fields of ``request`` as its parameters: the
    tool's schema is the service's search request (memflow.service.search_request)."""
    sig = inspect.signature(fn)
    named = [p for p in sig.parameters.values() if p.kind != p.VAR_KEYWORD]
    options = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=inspect.Parameter.empty if info.is_required() else info.default,
            annotation=Annotated[(info.annotation, info)],
        )
        for name, info in request.model_fields.items()
    ]
    fn.__signature__ = sig.replace(parameters=[*named, *options])  # type: ignore[attr-defined]
    return fn


def _bind(fn: Callable[..., Any], **fixed: Any) -> Callable[..., Any]:
    """``fn`` with the ``fixed`` parameters removed from its schema and always passed."""
    sig = inspect.signature(fn, eval_str=True)

    @functools.wraps(fn)
    def call(**kwargs: Any) -> Any:
        return fn(**kwargs, **fixed)

    params = [p for p in sig.parameters.values() if p.name not in fixed]
    call.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    del call.__wrapped__
    return call


def build_server(service: Service, *, dataset: str | None = None) -> MCPServer:
    """An MCP server over ``service``; ``dataset`` fixes the one dataset every call uses. The
    SDK continues a caller's trace from a request's ``_meta.traceparent`` (docs/traces.md)."""
    trace.setup()  # before the first request: the SDK's spans are recorded too
    server = MCPServer(
        name="memflow",
        instructions=INSTRUCTIONS
        + (f" Every call uses the dataset {dataset!r}." if dataset else ""),
        log_level="WARNING",
    )

    def memorize(
        dataset: DatasetName,
        # Exactly ``str``: the SDK turns a JSON-looking string argument into an object unless
        # the parameter is a plain str, and text is memorised as the string it was sent as.
        text: Annotated[
            str,
            Field(
                description="the content to remember: a note, Markdown, a dialog, or "
                "conversation JSON as a string"
            ),
        ] = "",
        conversation: Annotated[
            dict[str, Any] | list[dict[str, Any]] | None,
            Field(
                description='instead of text: a conversation object, {"messages": [{"speaker": '
                '"Ana", "text": "...", "ts": "2024-05-08T13:56:00Z"}, ...]}, {"sessions": '
                '[{"started_at": ..., "messages": [...]}]} or a list of messages'
            ),
        ] = None,
        path: Annotated[
            str | None,
            Field(description="instead of text: a file or directory the server may read"),
        ] = None,
        content_type: Annotated[
            ContentTypeChoice,
            Field(description="auto-detected unless given"),
        ] = "auto",
        reference_time: Annotated[
            str | None,
            Field(description="ISO 8601 time that relative dates ('yesterday') refer to"),
        ] = None,
        scope: Scope = None,
        metadata: Annotated[
            dict[str, Any] | None,
            Field(description="a JSON object stored with it, for search's where filter"),
        ] = None,
    ) -> dict[str, Any]:
        """Remember a text, a conversation (or a file the server may read). Returns the
        per-document report: status written/skipped (same content again)/failed, counts and
        episode_ids."""
        return service.memorize(
            dataset,
            text=text or None,
            conversation=conversation,
            path=path,
            content_type=content_type,
            reference_time=reference_time,
            scope=scope,
            metadata=metadata,
        )

    def search(dataset: DatasetName, **options: Any) -> dict[str, Any]:
        """Search the memory. Read the "context" field: the stored facts most related to the
        query, with their dates. "results" lists the ranked episodes with their ids."""
        return service.search(dataset, **options).model_dump(mode="json")

    def search_datasets(**options: Any) -> dict[str, Any]:
        """Search several datasets at once: one ranked list, each result with its "dataset";
        read the "context" field as for search."""
        return service.search(None, **options).model_dump(mode="json")

    def forget(
        dataset: DatasetName,
        document_id: Annotated[
            str | None, Field(description="a document id from memorize's report")
        ] = None,
        episode_id: Annotated[str | None, Field(description="an episode id from search")] = None,
    ) -> dict[str, Any]:
        """Remove a document (and what only it supported) or one episode. Give exactly one id."""
        return service.forget(dataset, document_id=document_id, episode_id=episode_id)

    def reopen(
        dataset: DatasetName,
        point_id: Annotated[
            str, Field(description="a closed fact's id (search context_units[].node_id)")
        ],
    ) -> dict[str, Any]:
        """Undo a wrong closure: a fact marked superseded holds again (logged in its history)."""
        return service.reopen(dataset, point_id)

    def list_datasets() -> dict[str, Any]:
        """The datasets with their episode and document counts."""
        return service.list_datasets(None if dataset is None else frozenset({dataset}))

    def stats(dataset: DatasetName) -> dict[str, Any]:
        """Counts of episodes, facets, points, entities, edges and documents in a dataset."""
        return service.stats(dataset)

    def get_episode(
        dataset: DatasetName,
        episode_id: Annotated[str, Field(description="an episode id from search results")],
    ) -> dict[str, Any]:
        """One episode as a tree (facets, points, entities, edge texts) and the documents it
        came from (provenance)."""
        return service.get_episode(dataset, episode_id)

    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    tools: list[tuple[Callable[..., Any], ToolAnnotations]] = [
        (
            memorize,
            ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True),
        ),
        (_with_options(search, search_request(several=False)), read_only),
        (forget, ToolAnnotations(read_only_hint=False, destructive_hint=True)),
        (reopen, ToolAnnotations(read_only_hint=False, destructive_hint=False)),
        (list_datasets, read_only),
        (stats, read_only),
        (get_episode, read_only),
    ]
    if dataset is None:  # a server fixed to one dataset searches that one only
        tools.insert(2, (_with_options(search_datasets, search_request(several=True)), read_only))
    for fn, annotations in tools:
        fixed: dict[str, Any] = {}
        params = inspect.signature(fn).parameters
        if dataset is not None and "dataset" in params:
            fixed["dataset"] = dataset
        if fn is memorize and not service.read_roots:
            fixed["path"] = None
        tool = _bind(fn, **fixed) if fixed else fn
        server.add_tool(_guarded(tool), name=fn.__name__, annotations=annotations)

    @server.resource(
        "memflow://{dataset_name}/episodes/{episode_id}",
        name="episode",
        description="An episode's tree and provenance (what get_episode returns), as JSON.",
        mime_type="application/json",
    )
    def episode_resource(dataset_name: str, episode_id: str) -> str:
        if dataset is not None and dataset_name != dataset:
            raise ResourceError(f"this server serves only the dataset {dataset!r}")
        try:
            payload = service.get_episode(dataset_name, episode_id)
        except MemflowError as exc:
            kind, message = public_error(exc)
            raise ResourceError(f"{kind}: {message}") from exc
        return json.dumps(payload, ensure_ascii=False)

    return server


def streamable_http_app(server: MCPServer, *, host: str, max_body: int) -> Any:
    """The Starlette app serving ``server`` over streamable HTTP at ``/mcp``. A body over
    ``max_body`` gets 413 with a JSON-RPC error (the SDK's own refusal is plain text)."""
    from memflow.asgi import BodyLimit

    app = server.streamable_http_app(json_response=True, host=host, max_request_body_size=max_body)
    return BodyLimit(app, max_body, _too_large)


def _too_large(message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}


__all__ = ["build_server", "streamable_http_app"]
