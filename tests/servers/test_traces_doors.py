"""The caller's trace goes through the doors (docs/traces.md): real ``memflow serve`` and
``memflow mcp`` processes write their spans to ``MEMFLOW_TRACES_FILE``, and a request carrying a
W3C ``traceparent`` (an HTTP header; an MCP request's ``_meta``) gets memflow's spans in the
caller's trace, under the caller's span."""

from __future__ import annotations

import json
import os
import secrets
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters

from .conftest import NOTE, free_port, memflow_cmd, server_process


def caller() -> tuple[str, str, str]:
    """A caller's (trace id, span id, traceparent header)."""
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    return trace_id, span_id, f"00-{trace_id}-{span_id}-01"


def spans_of(path: Path, trace_id: str, parent: str, *names: str) -> list[dict[str, Any]]:
    """The spans of ``trace_id`` in the server's file, once those named ``names`` and the
    caller's child are there (the server writes each span as it ends, some after it answered)."""
    deadline = time.monotonic() + 20
    while True:
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        got = [s for s in map(json.loads, lines) if s["trace_id"] == trace_id]
        ready = any(s["parent_span_id"] == parent for s in got)
        if (ready and set(names) <= {s["name"] for s in got}) or time.monotonic() > deadline:
            return got
        time.sleep(0.1)


def one(spans: list[dict[str, Any]], name: str) -> dict[str, Any]:
    found = [s for s in spans if s["name"] == name]
    assert len(found) == 1, [s["name"] for s in spans]
    return found[0]


def under_caller(spans: list[dict[str, Any]], parent: str, span: dict[str, Any]) -> bool:
    """Whether ``span`` descends from the server's one root span, the child of the caller's span
    ``parent`` (FastAPI's own server span when it makes one, else memflow's)."""
    roots = [s for s in spans if s["parent_span_id"] == parent]
    assert len(roots) == 1, [(s["name"], s["parent_span_id"]) for s in spans]
    by_id = {s["span_id"]: s for s in spans}
    while span["span_id"] != roots[0]["span_id"]:
        if span["parent_span_id"] not in by_id:
            return False
        span = by_id[span["parent_span_id"]]
    return True


def children(spans: list[dict[str, Any]], parent: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in spans if s["parent_span_id"] == parent["span_id"]]


@pytest.fixture(scope="module")
def traced_api(
    module_db: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[httpx.Client, Path]]:
    spans = tmp_path_factory.mktemp("traces") / "serve.jsonl"
    port = free_port()
    cmd = memflow_cmd(module_db, "serve", "--port", str(port))
    with (
        server_process(cmd, port, {"MEMFLOW_TRACES_FILE": str(spans)}),
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client,
    ):
        yield client, spans


def test_http_search_and_memorize_continue_the_callers_trace(
    traced_api: tuple[httpx.Client, Path],
) -> None:
    api, path = traced_api
    trace_id, parent, header = caller()
    wrote = api.post(
        "/v1/datasets/tr/memorize", json={"text": NOTE}, headers={"traceparent": header}
    )
    assert wrote.status_code == 200, wrote.text
    spans = spans_of(path, trace_id, parent, "memflow.memorize", "memflow.memorize.document")
    root = one(spans, "memflow.memorize")
    assert under_caller(spans, parent, root) and root["attributes"]["memflow.dataset"] == "tr"
    doc = one(children(spans, root), "memflow.memorize.document")
    assert doc["attributes"]["memflow.document.status"] == "written"
    assert [s["name"] for s in sorted(children(spans, doc), key=lambda s: s["start_ns"])] == [
        "check", "extract", "plan", "embed", "write",
    ]  # fmt: skip

    trace_id, parent, header = caller()
    body = {"query": "When is the mobile release?", "display": "summary"}
    found = api.post("/v1/datasets/tr/search", json=body, headers={"traceparent": header})
    assert found.status_code == 200 and found.json()["results"], found.text
    spans = spans_of(path, trace_id, parent, "memflow.search")
    root = one(spans, "memflow.search")
    assert under_caller(spans, parent, root) and root["attributes"]["memflow.dataset"] == "tr"
    assert root["attributes"]["memflow.search.results"] == len(found.json()["results"])
    stages = {k for k in found.json()["timings_ms"] if k != "total"}
    kids = children(spans, root)
    assert stages <= {s["name"] for s in kids}
    took = root["end_ns"] - root["start_ns"]
    assert 0.95 * took <= sum(s["end_ns"] - s["start_ns"] for s in kids) <= took

    trace_id, parent, header = caller()
    both = {"query": "Who owns the rollback plan?", "datasets": ["tr", "tr2"]}
    api.post("/v1/datasets/tr2/memorize", json={"text": "Dario bakes bread."})
    found = api.post("/v1/search", json=both, headers={"traceparent": header})
    assert found.status_code == 200, found.text
    spans = spans_of(path, trace_id, parent, "memflow.search")
    root = one(spans, "memflow.search")
    assert under_caller(spans, parent, root)
    assert root["attributes"]["memflow.datasets"] == ["tr", "tr2"]

    # No traceparent: a trace of its own, not a stranger's.
    plain = api.post("/v1/datasets/tr/search", json=body)
    assert plain.status_code == 200
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    last = [s for s in lines if s["name"] == "memflow.search"][-1]
    assert last["trace_id"] != trace_id
    assert all(s["parent_span_id"] != parent for s in lines if s["trace_id"] == last["trace_id"])


def test_mcp_tool_calls_continue_the_callers_trace(module_db: str, tmp_path: Path) -> None:
    """Over stdio: the SDK's server span takes the ``traceparent`` of the request's ``_meta``,
    and memflow's spans are its children."""
    path = tmp_path / "mcp.jsonl"
    cmd = memflow_cmd(module_db, "mcp")
    env = {"PYTHONPATH": os.pathsep.join(sys.path), "MEMFLOW_TRACES_FILE": str(path)}
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)
    ids = [caller(), caller()]

    async def session() -> None:
        async with Client(params) as client:
            (_, _, wrote_header), (_, _, found_header) = ids
            wrote = await client.call_tool(
                "memorize", {"dataset": "mc", "text": NOTE}, meta={"traceparent": wrote_header}
            )
            assert not wrote.is_error, wrote.content
            found = await client.call_tool(
                "search",
                {"dataset": "mc", "query": "When is the mobile release?"},
                meta={"traceparent": found_header},
            )
            assert not found.is_error and "June 14" in found.structured_content["context"]

    anyio.run(session)
    for (trace_id, parent, _), name in zip(ids, ("memorize", "search"), strict=True):
        spans = spans_of(path, trace_id, parent, f"tools/call {name}", f"memflow.{name}")
        server = one(spans, f"tools/call {name}")
        assert server["parent_span_id"] == parent  # the server's root span: the caller's child
        mine = one(spans, f"memflow.{name}")
        assert mine["parent_span_id"] == server["span_id"]
        assert mine["attributes"]["memflow.dataset"] == "mc"
