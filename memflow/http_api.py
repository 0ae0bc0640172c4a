"""``memflow serve``: an HTTP JSON API over :mod:`memflow.service` (FastAPI; OpenAPI at
``/openapi.json``).

Auth: ``MEMFLOW_API_KEYS`` holds ``{"<key>": ["dataset", ...] or ["*"]}``; requests carry
``Authorization: Bearer <key>`` (401 without a valid key, 403 for a dataset the key may not use;
``POST /v1/search`` over several datasets: 403 unless the key may use all of them). Without keys
the server listens on loopback only and answers only requests addressed to it
(``asgi.HostCheck``: 421 for another ``Host``, 403 for another ``Origin``).
Every error is ``{"error": {"type": ..., "message": ...}}`` with its status code.
"""

from __future__ import annotations

import hmac
import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from memflow.asgi import BodyLimit, HostCheck, TraceContext, allowed_hosts
from memflow.bounds import MAX_JSON_DEPTH
from memflow.errors import (
    ConfigurationError,
    DatabaseError,
    EmbedderMismatch,
    EmbeddingDimensionMismatch,
    EmbeddingError,
    ExtractionError,
    InvalidInput,
    MemflowError,
    NotFound,
)
from memflow.service import (
    ContentTypeChoice,
    PayloadTooLarge,
    Service,
    public_error,
    search_request,
)

try:
    from fastapi import APIRouter, Depends, FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse, Response
    from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
    from starlette.exceptions import HTTPException as StarletteHTTPException
except ModuleNotFoundError as exc:  # pragma: no cover - exercised by the CLI's message
    raise ConfigurationError(
        "memflow serve needs the server extra: pip install 'memflow[server]'"
    ) from exc

KeyTable = dict[str, frozenset[str] | None]  # key -> datasets it may use (None: every dataset)
UNREADABLE_BODY = (
    "the request body is JSON this server cannot read (nested deeper than Python parses, or a "
    f"number of thousands of digits): send an object nested at most {MAX_JSON_DEPTH} levels"
)


class ApiError(Exception):
    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind


def parse_api_keys(raw: str | None) -> KeyTable:
    """``MEMFLOW_API_KEYS``: a JSON object mapping each key to its datasets (``["*"]``: all)."""
    if not raw or not raw.strip():
        return {}
    hint = 'MEMFLOW_API_KEYS must be a JSON object like {"<key>": ["notes"], "<admin key>": ["*"]}'
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"{hint}; it is not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise ConfigurationError(hint)
    table: KeyTable = {}
    for key, names in data.items():
        if len(key) < 16:
            raise ConfigurationError(f"{hint}; use keys of at least 16 characters")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ConfigurationError(f"{hint}; the value of each key must be a list of names")
        table[key] = None if "*" in names else frozenset(names)
    return table


def status_of(exc: MemflowError) -> int:
    if isinstance(exc, PayloadTooLarge):
        return 413
    if isinstance(exc, InvalidInput):
        return 400
    if isinstance(exc, NotFound):
        return 404
    if isinstance(exc, EmbedderMismatch | EmbeddingDimensionMismatch):
        return 409
    if isinstance(exc, EmbeddingError | ExtractionError):
        return 502
    if isinstance(exc, DatabaseError):
        return 504 if "cancelled" in str(exc) else 503
    return 500


_PAYLOAD = TypeAdapter(dict[str, Any])


def _ok(payload: dict[str, Any]) -> Response:
    """A JSON response serialised by pydantic in one pass (FastAPI's default encoder walks the
    dict in Python first: ~5 ms for a 20 KB search result on a busy 2-core machine)."""
    return Response(_PAYLOAD.dump_json(payload), media_type="application/json")


def _timing(wall: float, cpu: float) -> dict[str, str]:
    """A ``Server-Timing`` header for work that started at ``wall`` (perf_counter) and ``cpu``
    (thread_time) on this thread."""
    app_ms = (time.perf_counter() - wall) * 1000
    cpu_ms = (time.thread_time() - cpu) * 1000
    return {"Server-Timing": f"app;dur={app_ms:.3f}, cpu;dur={cpu_ms:.3f}"}


def error_json(kind: str, message: str) -> dict[str, Any]:
    return {"error": {"type": kind, "message": message}}


def _error(status: int, kind: str, message: str) -> JSONResponse:
    return JSONResponse(error_json(kind, message), status_code=status)


class MemorizeBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str | None = Field(
        default=None, description="the content to remember: a note, Markdown, a dialog or JSON"
    )
    conversation: dict[str, Any] | list[dict[str, Any]] | None = Field(
        default=None,
        description='instead of text: a conversation, {"messages": [{"speaker": .., "text": ..}]}, '
        '{"sessions": [...]} or a list of messages',
    )
    content_type: ContentTypeChoice = "auto"
    reference_time: str | None = Field(
        default=None, description="ISO 8601 time that relative dates in the text refer to"
    )
    scope: dict[str, str] | None = Field(
        default=None, description='who it belongs to: any of {"user", "agent", "session"}'
    )
    metadata: dict[str, Any] | None = Field(
        default=None, description="a JSON object stored on the document (search filters on it)"
    )


# The search bodies: SearchOptions with the query, within the service's bounds (Limits).
if TYPE_CHECKING:
    SearchBody: TypeAlias = BaseModel
    SearchDatasetsBody: TypeAlias = BaseModel
else:
    SearchBody = search_request(several=False)
    SearchDatasetsBody = search_request(several=True)


class ErrorDetail(BaseModel):
    type: str
    message: str


class ErrorBody(BaseModel):
    error: ErrorDetail


_JSON: dict[int | str, dict[str, Any]] = {
    200: {"description": "the JSON the matching CLI command prints with --json"}
}
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 403, 404, 413, 422, 503)
}


def create_app(
    service: Service,
    *,
    keys: KeyTable,
    max_body: int,
    hosts: frozenset[str] | None = None,
    routers: Sequence[APIRouter] = (),
) -> Any:
    """The ASGI app. With no ``keys`` every caller may use every dataset (bind to loopback), and
    it answers only requests for ``hosts`` (asgi.allowed_hosts; default: the loopback names).
    ``routers`` are mounted as they are (``memflow ui``: the pages of memflow.ui)."""
    app = FastAPI(
        title="memflow",
        summary="Episodic memory for AI agents in PostgreSQL + pgvector",
        version=_version(),
        responses=_ERRORS,
    )

    # Dependencies do no I/O: async, so they run on the event loop, not a worker thread.
    async def allowed(request: Request) -> frozenset[str] | None:
        if not keys:
            return None
        auth = request.headers.get("authorization", "")
        scheme, _, token = auth.partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise ApiError(401, "Unauthorized", "send Authorization: Bearer <key>")
        for key, names in keys.items():
            if hmac.compare_digest(key.encode(), token.strip().encode()):
                return names
        raise ApiError(401, "Unauthorized", "unknown API key: check MEMFLOW_API_KEYS")

    async def dataset_access(name: str, names: frozenset[str] | None = Depends(allowed)) -> str:
        if names is not None and name not in names:
            raise ApiError(403, "Forbidden", f"this API key may not use the dataset {name!r}")
        return name

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return _error(exc.status, exc.kind, str(exc))

    @app.exception_handler(MemflowError)
    async def _memflow_error(_: Request, exc: MemflowError) -> JSONResponse:
        return _error(status_of(exc), *public_error(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return _error(422, "InvalidInput", f"{where}: {first.get('msg')}")

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400 and "parsing the body" in str(exc.detail):
            return _error(400, "InvalidInput", UNREADABLE_BODY)  # json.loads gave up on it
        return _error(exc.status_code, "HTTPError", str(exc.detail))

    @app.exception_handler(Exception)
    async def _crash(_: Request, exc: Exception) -> JSONResponse:
        return _error(500, "InternalError", f"internal error: {type(exc).__name__}")

    @app.get("/healthz", tags=["service"], responses=_JSON)
    def healthz() -> Response:
        """Liveness and database reachability (no key needed)."""
        service.ping()
        return _ok({"status": "ok", "embedder": service.memory.embedder.name})

    @app.get("/v1/datasets", tags=["datasets"], responses=_JSON)
    def datasets(names: frozenset[str] | None = Depends(allowed)) -> Response:
        """The datasets this key may use, with episode and document counts."""
        return _ok(service.list_datasets(names))

    @app.get("/v1/datasets/{name}/stats", tags=["datasets"], responses=_JSON)
    def stats(name: str = Depends(dataset_access)) -> Response:
        """Counts of episodes, facets, points, entities, edges, documents (`memflow stats`)."""
        return _ok(service.stats(name))

    @app.post("/v1/datasets/{name}/memorize", tags=["memory"], responses=_JSON)
    def memorize(body: MemorizeBody, name: str = Depends(dataset_access)) -> Response:
        """Memorise one text (the `memflow memorize --json` report). The same content again is
        `skipped`; an input that fails validation writes nothing."""
        return _ok(
            service.memorize(
                name,
                text=body.text,
                conversation=body.conversation,
                content_type=body.content_type,
                reference_time=body.reference_time,
                scope=body.scope,
                metadata=body.metadata,
            )
        )

    @app.post("/v1/datasets/{name}/search", tags=["memory"], responses=_JSON)
    def search(body: SearchBody, name: str = Depends(dataset_access)) -> Response:
        """Search (the same JSON as `memflow search --json`); `context` is what to read. The
        `Server-Timing` header says how long the server spent on it (`app`: wall ms, `cpu`:
        CPU ms of its thread): the rest of what a caller waits is the HTTP round trip."""
        wall, cpu = time.perf_counter(), time.thread_time()
        resp = service.search(name, **dict(body))
        # One pass from the model to bytes (model_dump + dump_json would walk it twice).
        payload = resp.model_dump_json()
        return Response(payload, media_type="application/json", headers=_timing(wall, cpu))

    @app.post("/v1/search", tags=["memory"], responses=_JSON)
    def search_datasets(
        body: SearchDatasetsBody, names: frozenset[str] | None = Depends(allowed)
    ) -> Response:
        """Search several datasets at once: one ranked list, each result with its `dataset`.
        403 unless the key may use every dataset asked for (nothing is searched then)."""
        given = dict(body)
        denied = [] if names is None else [d for d in given["datasets"] if d not in names]
        if denied:
            listed = ", ".join(repr(d) for d in denied)
            raise ApiError(403, "Forbidden", f"this API key may not use the datasets {listed}")
        resp = service.search(None, **given)
        return Response(resp.model_dump_json(), media_type="application/json")

    @app.delete("/v1/datasets/{name}/documents/{document_id}", tags=["memory"], responses=_JSON)
    def forget_document(document_id: str, name: str = Depends(dataset_access)) -> Response:
        """Remove a document and what only it supported (`memflow forget --document`)."""
        return _ok(service.forget(name, document_id=document_id))

    @app.delete("/v1/datasets/{name}/episodes/{episode_id}", tags=["memory"], responses=_JSON)
    def forget_episode(episode_id: str, name: str = Depends(dataset_access)) -> Response:
        """Remove one episode with its facets (`memflow forget --episode`)."""
        return _ok(service.forget(name, episode_id=episode_id))

    @app.post("/v1/datasets/{name}/points/{point_id}/reopen", tags=["memory"], responses=_JSON)
    def reopen(point_id: str, name: str = Depends(dataset_access)) -> Response:
        """Undo a wrong closure: the closed fact holds again (`memflow reopen`)."""
        return _ok(service.reopen(name, point_id))

    @app.get("/v1/datasets/{name}/episodes/{episode_id}", tags=["memory"], responses=_JSON)
    def episode(episode_id: str, name: str = Depends(dataset_access)) -> Response:
        """One episode's tree with edge texts, and the documents that support it."""
        return _ok(service.get_episode(name, episode_id))

    for router in routers:
        app.include_router(router)
    traced = TraceContext(app)  # a traceparent header: the caller's trace (docs/traces.md)
    limited = BodyLimit(traced, max_body, lambda msg: error_json("PayloadTooLarge", msg))
    if keys:
        return limited
    checked = hosts if hosts is not None else allowed_hosts("127.0.0.1")
    return HostCheck(limited, checked, lambda msg: error_json("Forbidden", msg))


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memflow")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0"


__all__ = ["BodyLimit", "create_app", "parse_api_keys", "status_of"]
