"""ASGI plumbing shared by memflow's HTTP doors (``memflow serve``, ``memflow mcp --transport
http``): Starlette only, so either door works without the other's framework."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse

from memflow import trace

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyLimit:
    """Refuse request bodies over ``limit`` bytes with 413 and a JSON body (``error(message)``)
    before the app reads them."""

    def __init__(self, app: ASGIApp, limit: int, error: Callable[[str], dict[str, Any]]) -> None:
        self.app = app
        self.limit = limit
        self.error = error  # the JSON body of the refusal, from its message

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await self._refuse(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
            if size > self.limit:
                await self._refuse(scope, receive, send)
                return
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        msg = f"the request body is over {self.limit} bytes: split the document"
        await JSONResponse(self.error(msg), status_code=413)(scope, receive, send)


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def allowed_hosts(bound: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The host names a server without keys answers to: the loopback names, the address it
    listens on and ``extra`` (``--allow-host``), lower-case."""
    return frozenset(_host_name(h) or h.lower() for h in (*LOOPBACK_HOSTS, bound, *extra))


def _host_name(value: str | None) -> str | None:
    """The host of a Host header (``127.0.0.1:8080``, ``[::1]:8080``, ``localhost``) or of an
    origin (``http://localhost:3000``), lower-case without a trailing dot; None if none."""
    if not value:
        return None
    try:
        host = urlsplit(value if "//" in value else f"//{value}").hostname
    except ValueError:
        return None
    return host.rstrip(".") if host else None


class HostCheck:
    """Answer only requests addressed to this server: 421 when the ``Host`` header names another
    host, 403 when an ``Origin`` header names a page of another host. A server without keys
    trusts whoever reaches it; a web page whose own name an attacker re-points at 127.0.0.1
    (DNS rebinding) reaches it too, but its requests carry that name in ``Host`` and
    ``Origin``."""

    def __init__(
        self, app: ASGIApp, hosts: frozenset[str], error: Callable[[str], dict[str, Any]]
    ) -> None:
        self.app = app
        self.hosts = hosts
        self.error = error

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        allowed = ", ".join(sorted(self.hosts))
        host = _host_name(headers.get("host"))
        if host not in self.hosts:
            msg = (
                f"this server answers requests for {allowed}, not {headers.get('host')!r}: "
                "call it by one of those names (memflow serve --allow-host NAME adds one)"
            )
            await JSONResponse(self.error(msg), status_code=421)(scope, receive, send)
            return
        origin = headers.get("origin")
        if origin is not None and (
            _host_name(origin) not in self.hosts or not origin.lower().startswith("http")
        ):
            msg = (
                f"requests from pages of {origin!r} are refused: this server takes requests from "
                f"pages of {allowed} only (memflow serve --allow-host NAME adds one)"
            )
            await JSONResponse(self.error(msg), status_code=403)(scope, receive, send)
            return
        await self.app(scope, receive, send)


class TraceContext:
    """The caller's trace (a W3C ``traceparent`` header) current while ``app`` answers, so the
    spans of a search or memorize are children of the caller's span (memflow.trace,
    docs/traces.md). With tracing off the header is not even read."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        trace.setup()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or trace.tracer() is None:
            await self.app(scope, receive, send)
            return
        with trace.attached(trace.remote_parent(Headers(scope=scope))):
            await self.app(scope, receive, send)


__all__ = ["LOOPBACK_HOSTS", "ASGIApp", "BodyLimit", "HostCheck", "TraceContext", "allowed_hosts"]
