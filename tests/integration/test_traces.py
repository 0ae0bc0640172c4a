"""OpenTelemetry spans of search and memorize (memflow.trace, docs/traces.md), read with the SDK's
in-memory exporter: one ``memflow.search`` per search under the caller's span, a child per
stage that covers it (the stage times sum to within 5 % of the root), memorize's call, document
and stage spans with the model's tokens; and nothing at all (no import) when tracing is off."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from opentelemetry import trace as ot
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util._once import Once

from memflow import AsyncMemory, InvalidInput, Memory, NotFound, SearchResponse
from memflow.embed.hash import HashEmbedder
from tests.integration.test_memorize import TURNS, fake, llm_client, llm_reply, session_doc
from tests.support.fake_openai import ChatJson, FakeOpenAI

__all__ = ["fake"]  # the fixture, imported for the LLM test

NOTES = [
    "Mira moved the mobile release to June 14 because the payment SDK needs another review.",
    "Dario owns the rollback plan. The release checklist lives in the ops wiki.",
    "The team lunch is on Friday at the noodle place near the station.",
]


def _install(provider: TracerProvider | None) -> None:
    """Set (or, with None, clear) the global tracer provider. The API sets it once per process;
    the reset is what the SDK's own test utilities do, so other tests run with tracing off."""
    ot._TRACER_PROVIDER_SET_ONCE = Once()
    ot._TRACER_PROVIDER = None
    if provider is not None:
        ot.set_tracer_provider(provider)


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    out = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(out))
    _install(provider)
    try:
        yield out
    finally:
        _install(None)
        provider.shutdown()


@pytest.fixture
def notes(mem: Memory) -> Memory:
    mem.dataset("notes").memorize(NOTES)
    mem.dataset("more").memorize(["Dario also plans the June offsite.", "Mira bakes bread."])
    return mem


def named(spans: Sequence[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def children(spans: Sequence[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    kids = [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]
    return sorted(kids, key=lambda s: s.start_time or 0)


def ns(span: ReadableSpan) -> int:
    assert span.start_time is not None and span.end_time is not None
    return span.end_time - span.start_time


def check_search(
    spans: Sequence[ReadableSpan], resp: SearchResponse, caller: ot.Span
) -> tuple[ReadableSpan, list[ReadableSpan]]:
    """The one root span of ``resp`` under ``caller`` and its children: every stage of
    ``timings_ms`` with its measured time, laid end to end inside the root, summing to it."""
    (root,) = named(spans, "memflow.search")
    assert root.parent is not None and root.parent.span_id == caller.get_span_context().span_id
    assert root.context.trace_id == caller.get_span_context().trace_id
    kids = children(spans, root)
    stages = {k: v for k, v in resp.timings_ms.items() if k != "total"}
    by_name = {k.name: k for k in kids}
    assert set(stages) <= set(by_name), (sorted(stages), [k.name for k in kids])
    for name, ms in stages.items():
        assert abs(ns(by_name[name]) - ms * 1e6) <= 2_000, (name, ns(by_name[name]), ms)
    assert root.start_time is not None and root.end_time is not None
    at = root.start_time
    for k in kids:  # in order, none overlapping, all inside the root
        assert k.start_time is not None and k.end_time is not None
        assert at <= k.start_time <= k.end_time <= root.end_time, k.name
        at = k.end_time
    total = sum(ns(k) for k in kids)
    assert 0.95 * ns(root) <= total <= ns(root), (total, ns(root))
    attrs = root.attributes or {}
    assert attrs["memflow.search.results"] == len(resp.results)
    assert attrs["memflow.search.mode"] == resp.mode
    assert attrs["memflow.search.display"] == resp.display
    return root, kids


@pytest.mark.parametrize(
    "options",
    [
        {"display": "summary"},
        {"display": "highly_related"},
        {"display": "detail", "top_k": 3},
        {"mode": "vector"},
        {"mode": "lexical"},
        {"scope": {"user": "nobody"}},
    ],
    ids=["summary", "highly_related", "detail", "vector", "lexical", "scoped"],
)
def test_a_search_is_one_span_with_a_child_per_stage(
    notes: Memory, exporter: InMemorySpanExporter, options: dict[str, Any]
) -> None:
    tracer = ot.get_tracer("agent")
    with tracer.start_as_current_span("agent step") as caller:
        resp = notes.dataset("notes").search("When is the mobile release?", **options)
    spans = exporter.get_finished_spans()
    root, kids = check_search(spans, resp, caller)
    attrs = root.attributes or {}
    assert attrs["memflow.dataset"] == "notes" and tuple(attrs["memflow.datasets"]) == ("notes",)  # type: ignore[arg-type]
    assert attrs["memflow.search.top_k"] == options.get("top_k", 10)
    if options.get("mode") is None and "scope" not in options:
        assert resp.results and attrs["memflow.search.rows.hits"] > 0  # type: ignore[operator]
        assert {"embed", "recall_sql", "projection_sql", "score"} <= {k.name for k in kids}
    assert not named(spans, "lookup")  # the dataset was looked up when it was opened


def test_a_search_of_several_datasets_has_their_lookups_and_the_merge(
    notes: Memory, exporter: InMemorySpanExporter
) -> None:
    with ot.get_tracer("agent").start_as_current_span("agent step") as caller:
        resp = notes.search("Who owns the rollback plan?", datasets=["notes", "more"])
    spans = exporter.get_finished_spans()
    root, kids = check_search(spans, resp, caller)
    assert tuple((root.attributes or {})["memflow.datasets"]) == ("notes", "more")  # type: ignore[arg-type]
    assert [k.name for k in kids].count("lookup") == 2 and kids[-2].name == "merge"
    assert {r.dataset for r in resp.results} == {"notes", "more"}


def test_an_async_search_is_a_child_of_the_awaiting_span(
    notes: Memory, db_url: str, exporter: InMemorySpanExporter
) -> None:
    """The async API runs the operation's code in worker threads: the parent is the span
    current where the search was awaited."""

    async def run() -> tuple[SearchResponse, SearchResponse, ot.Span]:
        mem = await AsyncMemory.open(db_url, embedder=HashEmbedder(384))
        try:
            with ot.get_tracer("agent").start_as_current_span("agent step") as caller:
                one = await mem.dataset("notes", create=False).search("Who owns the rollback plan?")
                both = await mem.search("the rollback plan", datasets=["notes", "more"])
            return one, both, caller
        finally:
            await mem.aclose()

    one, both, caller = asyncio.run(run())
    spans = exporter.get_finished_spans()
    first, second = named(spans, "memflow.search")
    check_search([s for s in spans if s is not second], one, caller)
    check_search([s for s in spans if s is not first], both, caller)


def test_an_async_memorize_is_a_child_of_the_awaiting_span(
    db_url: str, exporter: InMemorySpanExporter
) -> None:
    async def run() -> ot.Span:
        mem = await AsyncMemory.open(db_url, embedder=HashEmbedder(384))
        try:
            with ot.get_tracer("agent").start_as_current_span("agent step") as caller:
                await mem.dataset("notes").memorize(NOTES[:2])
            return caller
        finally:
            await mem.aclose()

    caller = asyncio.run(run())
    spans = exporter.get_finished_spans()
    (root,) = named(spans, "memflow.memorize")
    assert root.parent is not None and root.parent.span_id == caller.get_span_context().span_id
    assert [d.name for d in children(spans, root)] == ["memflow.memorize.document"] * 2


def test_a_failed_search_is_a_failed_span(notes: Memory, exporter: InMemorySpanExporter) -> None:
    with pytest.raises(NotFound):
        notes.search("x", datasets=["notes", "nowhere"])
    (root,) = named(exporter.get_finished_spans(), "memflow.search")
    assert root.status.status_code == ot.StatusCode.ERROR
    assert [e.name for e in root.events] == ["exception"]


def test_memorize_has_a_span_per_document_and_stage(
    mem: Memory, exporter: InMemorySpanExporter
) -> None:
    ds = mem.dataset("notes")
    ds.memorize(NOTES[:1])
    exporter.clear()
    with ot.get_tracer("agent").start_as_current_span("agent step") as caller:
        report = ds.memorize([NOTES[1], NOTES[0]])  # a new one, one already stored
    spans = exporter.get_finished_spans()
    (root,) = named(spans, "memflow.memorize")
    assert root.parent is not None and root.parent.span_id == caller.get_span_context().span_id
    attrs = root.attributes or {}
    assert attrs["memflow.dataset"] == "notes"
    assert (attrs["memflow.memorize.written"], attrs["memflow.memorize.skipped"]) == (1, 1)
    written, skipped = children(spans, root)
    assert [d.name for d in (written, skipped)] == ["memflow.memorize.document"] * 2
    doc = report.documents[0]
    assert (written.attributes or {})["memflow.document.status"] == "written"
    assert (written.attributes or {})["memflow.document.id"] == str(doc.id)
    assert (written.attributes or {})["memflow.document.facet_points"] == doc.facet_points > 0
    stages = children(spans, written)
    assert [s.name for s in stages] == ["check", "extract", "plan", "embed", "write"]
    assert stages[0].start_time == written.start_time and stages[-1].end_time == written.end_time
    for a, b in itertools.pairwise(stages):
        assert a.end_time == b.start_time  # end to end: the stages cover the document
    assert (skipped.attributes or {})["memflow.document.status"] == "skipped"
    assert [s.name for s in children(spans, skipped)] == ["check"]


def test_a_memorize_that_raises_is_a_failed_span(
    mem: Memory, tmp_path: Path, exporter: InMemorySpanExporter
) -> None:
    with pytest.raises(InvalidInput):
        mem.dataset("notes").memorize(tmp_path / "missing.txt")
    spans = exporter.get_finished_spans()
    (root,) = named(spans, "memflow.memorize")
    assert root.status.status_code == ot.StatusCode.ERROR
    assert (root.attributes or {})["memflow.memorize.failed"] == 1
    (doc,) = children(spans, root)
    assert (doc.attributes or {})["memflow.document.status"] == "failed"
    assert (doc.attributes or {})["memflow.document.error_type"] == "InvalidInput"


def test_memorize_with_a_model_records_its_tokens(
    mem: Memory, fake: FakeOpenAI, exporter: InMemorySpanExporter
) -> None:
    fake.script_chat(ChatJson(llm_reply("one")))
    with llm_client(fake) as client:
        report = mem.dataset("chat").memorize(session_doc(TURNS, 8), extractor="llm", llm=client)
    (doc,) = named(exporter.get_finished_spans(), "memflow.memorize.document")
    attrs = doc.attributes or {}
    (written,) = report.documents
    assert attrs["memflow.llm.calls"] == written.llm_calls == 1
    prompt, completion = attrs["gen_ai.usage.input_tokens"], attrs["gen_ai.usage.output_tokens"]
    assert isinstance(prompt, int) and isinstance(completion, int)
    assert prompt > 0 and completion > 0 and prompt + completion == written.tokens


OFF = """
import json, sys
from memflow import Memory
from memflow.embed.hash import HashEmbedder
with Memory.open(sys.argv[1], embedder=HashEmbedder(384)) as m:
    m.dataset("notes").memorize("Mira moved the release to June 14.")
    resp = m.dataset("notes").search("When is the release?")
print(json.dumps({"results": len(resp.results),
                  "otel": sorted(n for n in sys.modules if n.startswith("opentelemetry"))}))
"""


def test_off_by_default_nothing_is_imported(db_url: str) -> None:
    """No exporter named and no provider set: search and memorize never import OpenTelemetry."""
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp"}
    res = subprocess.run([sys.executable, "-c", OFF, db_url], capture_output=True, text=True,
                         env=env, timeout=120)  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    assert json.loads(res.stdout) == {"results": 1, "otel": []}


def test_without_the_sdk_an_exporter_setting_is_a_warning(db_url: str) -> None:
    """``OTEL_TRACES_EXPORTER`` set where the ``otel`` extra is not installed: memflow works and
    says what to install."""
    blocked = "import sys; sys.modules['opentelemetry.sdk'] = None\n" + OFF
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "OTEL_TRACES_EXPORTER": "console"}
    res = subprocess.run([sys.executable, "-c", blocked, db_url], capture_output=True, text=True,
                         env=env, timeout=120)  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    assert json.loads(res.stdout)["results"] == 1
    assert "pip install 'memflow[otel]'" in res.stderr


class _Collector(BaseHTTPRequestHandler):
    """An OTLP/HTTP trace receiver: what a collector at ``OTEL_EXPORTER_OTLP_ENDPOINT`` gets."""

    received: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        body = self.rfile.read(int(self.headers["content-length"]))
        request = ExportTraceServiceRequest.FromString(body)
        for rs in request.resource_spans:
            service = {a.key: a.value.string_value for a in rs.resource.attributes}
            for scope in rs.scope_spans:
                for span in scope.spans:
                    self.received.append(
                        {"path": self.path, "service": service.get("service.name"),
                         "scope": scope.scope.name, "name": span.name,
                         "trace_id": span.trace_id.hex(), "parent": span.parent_span_id.hex()}
                    )  # fmt: skip
        out = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: Any) -> None:
        pass


def test_the_cli_sends_its_spans_to_an_otlp_collector(db_url: str, tmp_path: Path) -> None:
    """What docs/traces.md tells users: OTEL_TRACES_EXPORTER=otlp and the collector's endpoint;
    ``memflow search`` (a short-lived process) delivers its spans before it exits."""
    (tmp_path / "note.txt").write_text(NOTES[0], encoding="utf-8")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        env = {**os.environ, "OTEL_TRACES_EXPORTER": "otlp",
               "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://{host!s}:{port}",
               "OTEL_SERVICE_NAME": "memflow-test"}  # fmt: skip
        env.pop("MEMFLOW_TRACES_FILE", None)
        base = [sys.executable, "-m", "memflow.cli"]
        conn = ["--database-url", db_url, "--embedder", "hash"]
        for args in (["memorize", "-d", "notes", str(tmp_path / "note.txt")],
                     ["search", "When is the mobile release?", "-d", "notes", "--json"]):  # fmt: skip
            res = subprocess.run([*base, *args, *conn], capture_output=True, text=True, env=env,
                                 timeout=120)  # fmt: skip
            assert res.returncode == 0, res.stderr[-2000:]
        assert json.loads(res.stdout)["results"]  # stdout is the search's JSON, untouched
    finally:
        server.shutdown()
        server.server_close()
    got = _Collector.received
    assert {s["path"] for s in got} == {"/v1/traces"}
    mine = [s for s in got if s["scope"] == "memflow"]
    assert {s["service"] for s in mine} == {"memflow-test"}
    names = {s["name"] for s in mine}
    assert {"memflow.memorize", "memflow.memorize.document", "memflow.search", "embed"} <= names
    (search,) = [s for s in mine if s["name"] == "memflow.search"]
    stages = [s for s in mine if s["parent"] and s["trace_id"] == search["trace_id"]]
    assert len(stages) >= 5 and search["parent"] == ""
