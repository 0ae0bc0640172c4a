"""ASGI plumbing shared by memflow's HTTP doors (``memflow serve``, ``memflow mcp --transport
http``): Starlette only, so either door works without the other's framework."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.responses import JSONResponse

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


__all__ = ["ASGIApp", "BodyLimit"]
