"""A scripted OpenAI-compatible HTTP server for tests.

``FakeOpenAI`` listens on 127.0.0.1 (ephemeral port) and serves ``POST /v1/chat/completions`` and
``POST /v1/embeddings``. Each endpoint answers from a queue of behaviours (``ChatJson``,
``ChatText``, ``Slow``, ``HttpError``, ``Embeddings``, ``WrongDim``, ``Respond``); when its queue is
empty it uses the endpoint's ``default`` behaviour. Every request is recorded, and the largest
number of requests in flight at once is tracked per endpoint.

    with FakeOpenAI() as fake:
        fake.script_chat(ChatText("not json"), ChatJson({"ok": True}))
        client = LlmClient(LlmSettings(base_url=fake.base_url, model="m", api_key="k"))
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATH = "/v1/chat/completions"
EMBED_PATH = "/v1/embeddings"


@dataclass(frozen=True)
class Recorded:
    """One request: its path, JSON body and headers (names lower-cased)."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def prompt_text(self) -> str:
        return "\n".join(str(m.get("content", "")) for m in self.messages)


@dataclass(frozen=True)
class Reply:
    status: int
    payload: dict[str, Any]


class Behaviour:
    """One scripted answer; ``answer`` may block (it is told when the server stops)."""

    def answer(self, body: dict[str, Any], stopping: threading.Event) -> Reply:
        raise NotImplementedError


def _count_tokens(text: str) -> int:
    return max(1, len(text.split()))


def _chat_reply(body: dict[str, Any], content: str, finish_reason: str = "stop") -> Reply:
    prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    prompt_tokens = _count_tokens(prompt)
    completion_tokens = _count_tokens(content)
    return Reply(
        200,
        {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        },
    )


@dataclass
class ChatJson(Behaviour):
    """A well-formed completion whose content is ``content`` serialised as JSON."""

    content: Any

    def answer(self, body: dict[str, Any], stopping: threading.Event) -> Reply:
        return _chat_reply(body, json.dumps(self.content))


@dataclass
class ChatText(Behaviour):
    """A completion whose content is the raw text given (use it for malformed replies)."""

    content: str
    finish_reason: str = "stop"

    def answer(self, body: dict[str, Any], stopping: threading.Event) -> Reply:
        return _chat_reply(body, self.content, self.finish_reason)


@dataclass
class HttpError(Behaviour):
    status: int = 500
    message: str = "scripted server error"

    def answer(self, body: dict[str, Any], stopping: threading.Event) -> Reply:
        return Reply(
            self.status,
            {"error": {"message": self.message, "type": "server_error", "code": None}},
        )


@dataclass
class Slow(Behaviour):
    """Waits ``seconds`` (or until the server stops), then answers like ``then``."""

    seconds: float
    then: Behaviour = field(default_factory=lambda: HttpError(503, "too late"))

    def answer(self, body: dict[str, Any], stopping: threading.Event) -> Reply:
        stopping.wait(self.seconds)
        return self.then.answer(body, stopping)


@dataclass
class Respond(Behaviour):
    """Computes the reply from the request body: ``fn(body) -> content object`` (chat)."""

    fn: Callable[[dict[str, Any]], Any]
    delay: float = 0.0

    def answer(self, body: dict[str, Any], stopping: threading.Event) -> Reply:
        if self.delay:
            stopping.wait(self.delay)
        return _chat_reply(body, json.dumps(self.fn(body)))


def fake_vector(text: str, dim: int) -> list[float]:
    """Deterministic, finite, L2-normalised vector for ``text``."""
    values: list[float] = []
    counter = 0
    while len(values) < dim:
        digest = hashlib.blake2b(f"{counter}\x1f{text}".encode(), digest_size=64).digest()
        for (word,) in struct.iter_unpack("<I", digest):
            values.append(word / 2**32 - 0.5)
        counter += 1
    values = values[:dim]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def _inputs(body: dict[str, Any]) -> list[str]:
    raw = body.get("input", [])
    return [raw] if isinstance(raw, str) else [str(t) for t in raw]


def _embedding_reply(body: dict[str, Any], dim: int) -> Reply:
    texts = _inputs(body)
    data = [
        {"object": "embedding", "index": i, "embedding": fake_vector(t, dim)}
        for i, t in enumerate(texts)
    ]
    tokens = sum(_count_tokens(t) for t in texts)
    return Reply(
        200,
        {
            "object": "list",
            "data": data,
            "model": body.get("model", "fake"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        },
    )


@dataclass
class Embeddings(Behaviour):
    """Deterministic embeddings of ``dim`` dimensions (``dimensions`` in the request wins)."""

    dim: int = 8

    def answer(self, body: dict[str, Any], stopping: threading.Event) -> Reply:
        return _embedding_reply(body, int(body.get("dimensions") or self.dim))


@dataclass
class WrongDim(Behaviour):
    """Embeddings of a fixed, presumably wrong, dimension."""

    dim: int = 3

    def answer(self, body: dict[str, Any], stopping: threading.Event) -> Reply:
        return _embedding_reply(body, self.dim)


class _Endpoint:
    def __init__(self, default: Behaviour) -> None:
        self.default = default
        self.queue: deque[Behaviour] = deque()
        self.in_flight = 0
        self.max_in_flight = 0


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        headers = {k.lower(): v for k, v in self.headers.items()}
        reply = self.server.fake.handle(self.path, body, headers)
        data = json.dumps(reply.payload).encode()
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout); nothing to deliver


class _Server(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True

    def __init__(self, fake: FakeOpenAI) -> None:
        self.fake = fake
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up mid-request is expected in timeout tests


class FakeOpenAI:
    """Scripted OpenAI-compatible server; use as a context manager."""

    def __init__(self, embed_dim: int = 8) -> None:
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._endpoints = {
            CHAT_PATH: _Endpoint(HttpError(500, "no scripted chat reply left")),
            EMBED_PATH: _Endpoint(Embeddings(embed_dim)),
        }
        self.requests: list[Recorded] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # scripting -------------------------------------------------------------------------------
    def script_chat(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self._endpoints[CHAT_PATH].queue.extend(behaviours)

    def script_embeddings(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self._endpoints[EMBED_PATH].queue.extend(behaviours)

    def set_default(self, path: str, behaviour: Behaviour) -> None:
        with self._lock:
            self._endpoints[path].default = behaviour

    # inspection ------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeOpenAI is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def requests_to(self, path: str) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    @property
    def chat_requests(self) -> list[Recorded]:
        return self.requests_to(CHAT_PATH)

    @property
    def embedding_requests(self) -> list[Recorded]:
        return self.requests_to(EMBED_PATH)

    def max_in_flight(self, path: str = CHAT_PATH) -> int:
        with self._lock:
            return self._endpoints[path].max_in_flight

    # serving ---------------------------------------------------------------------------------
    def handle(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        endpoint = self._endpoints.get(path)
        with self._lock:
            self.requests.append(Recorded(path, body, headers))
            if endpoint is None:
                return Reply(404, {"error": {"message": f"unknown path {path}"}})
            behaviour = endpoint.queue.popleft() if endpoint.queue else endpoint.default
            endpoint.in_flight += 1
            endpoint.max_in_flight = max(endpoint.max_in_flight, endpoint.in_flight)
        try:
            return behaviour.answer(body, self._stopping)
        finally:
            with self._lock:
                endpoint.in_flight -= 1

    def start(self) -> FakeOpenAI:
        self._stopping.clear()
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = [
    "CHAT_PATH",
    "EMBED_PATH",
    "Behaviour",
    "ChatJson",
    "ChatText",
    "Embeddings",
    "FakeOpenAI",
    "HttpError",
    "Recorded",
    "Respond",
    "Slow",
    "WrongDim",
    "fake_vector",
]
