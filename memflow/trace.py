"""OpenTelemetry spans for memflow's operations: the one module that talks to OpenTelemetry.

Off by default and free when off: nothing here imports ``opentelemetry`` until spans are wanted,
which is when the environment names an exporter (``OTEL_TRACES_EXPORTER``,
``MEMFLOW_TRACES_FILE``: :func:`memflow.config.trace_exporters`) or the application has imported
OpenTelemetry and set a tracer provider of its own. Without the ``otel`` extra it is a no-op.

An operation (:mod:`memflow.db.steps`) runs in whichever thread its runner picks, so spans are
never made current here: :func:`op_spans` records when the operation's code ran and when each of
its transactions ran (``time.time_ns()``), and the spans are made at the end with those start and
end times, under the span that was current when the operation was created (the caller's span, or
the one a door extracted from a ``traceparent``: :func:`remote_parent`). docs/traces.md lists the
spans and their attributes.
"""

from __future__ import annotations

import functools
import importlib
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from memflow.config import trace_exporters

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer

T = TypeVar("T")
Attr = str | bool | int | float | Sequence[str] | Sequence[int] | Sequence[float]
Attrs = dict[str, Attr]
log = logging.getLogger("memflow.trace")

_lock = threading.Lock()
_set_up = False


# ---------------------------------------------------------------------------------- setting up


def setup() -> None:
    """Set up the OpenTelemetry SDK from the environment, once per process (the doors call it
    at start, so the MCP SDK's own spans are recorded too). Leaves a tracer provider the
    application set alone; logs a warning when an exporter is named but the SDK is missing."""
    global _set_up
    with _lock:
        if _set_up:
            return
        _set_up = True
        names = trace_exporters()
        if not names:
            return
        try:
            from opentelemetry import trace as ot
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
        except ImportError:
            log.warning("tracing asked for (%s) but the OpenTelemetry SDK is missing: "
                        "pip install 'memflow[otel]'", ", ".join(names))  # fmt: skip
            return
        if not isinstance(ot.get_tracer_provider(), ot.ProxyTracerProvider):
            return  # the application's own provider
        service = os.environ.get("OTEL_SERVICE_NAME") or "memflow"
        provider = TracerProvider(resource=Resource.create({"service.name": service}))
        for name in names:
            provider.add_span_processor(_processor(name))
        ot.set_tracer_provider(provider)


def _processor(name: str) -> Any:
    """The span processor of one exporter name (docs/traces.md)."""
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SimpleSpanProcessor,
    )

    if name.startswith("jsonl:"):
        return SimpleSpanProcessor(_jsonl_exporter(name.removeprefix("jsonl:")))
    if name == "console":  # stderr: stdout carries the CLI's --json output
        return SimpleSpanProcessor(ConsoleSpanExporter(out=sys.stderr))
    if name == "otlp":  # OTEL_EXPORTER_OTLP_* set the endpoint, headers, protocol
        grpc = os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "").startswith("grpc")
        package = f"opentelemetry-exporter-otlp-proto-{'grpc' if grpc else 'http'}"
        try:
            exporter = importlib.import_module(
                f"opentelemetry.exporter.otlp.proto.{'grpc' if grpc else 'http'}.trace_exporter"
            )
        except ImportError as exc:
            from memflow.errors import ConfigurationError

            raise ConfigurationError(
                f"OTEL_TRACES_EXPORTER=otlp needs {package}: pip install {package}"
            ) from exc
        return BatchSpanProcessor(exporter.OTLPSpanExporter())
    from memflow.errors import ConfigurationError

    raise ConfigurationError(
        f"OTEL_TRACES_EXPORTER names {name!r}: memflow sends spans to 'otlp' or 'console' (or "
        "MEMFLOW_TRACES_FILE=PATH for JSON lines); unset it to send none"
    )


def _jsonl_exporter(path: str) -> Any:
    """A span exporter appending one JSON object per span to ``path`` (docs/traces.md)."""
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class JsonLines(SpanExporter):
        def __init__(self) -> None:
            self.out: IO[str] = open(path, "a", encoding="utf-8")  # noqa: SIM115
            self.lock = threading.Lock()

        def export(self, spans: Sequence[Any]) -> SpanExportResult:
            lines = [json.dumps(span_json(s), ensure_ascii=False) + "\n" for s in spans]
            with self.lock:
                self.out.writelines(lines)
                self.out.flush()
            return SpanExportResult.SUCCESS

        def shutdown(self) -> None:
            self.out.close()

    return JsonLines()


def span_json(span: Any) -> dict[str, Any]:
    """A finished span as one line of ``MEMFLOW_TRACES_FILE``: ids in hex as in ``traceparent``."""
    ctx, parent = span.context, span.parent
    return {
        "name": span.name,
        "trace_id": f"{ctx.trace_id:032x}",
        "span_id": f"{ctx.span_id:016x}",
        "parent_span_id": f"{parent.span_id:016x}" if parent is not None else None,
        "start_ns": span.start_time,
        "end_ns": span.end_time,
        "status": span.status.status_code.name,
        "attributes": dict(span.attributes or {}),
    }


def tracer() -> Tracer | None:
    """memflow's tracer, or None when no span would be recorded (the fast path: no import)."""
    if not trace_exporters() and "opentelemetry.trace" not in sys.modules:
        return None
    setup()
    try:
        from opentelemetry import trace as ot
    except ImportError:
        return None
    if isinstance(ot.get_tracer_provider(), ot.ProxyTracerProvider):
        return None
    return ot.get_tracer("memflow", _version())


@functools.cache
def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memflow")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree not installed
        return "unknown"


# ------------------------------------------------------------------------------- propagation


def remote_parent(carrier: Mapping[str, Any] | None) -> Context | None:
    """The context a W3C ``traceparent`` (and ``tracestate``) in ``carrier`` (HTTP headers, an
    MCP request's ``_meta``) names; None without tracing or a valid one."""
    if not carrier or tracer() is None:
        return None
    from opentelemetry import trace as ot
    from opentelemetry.propagate import extract

    wanted = {
        k.lower(): str(v) for k, v in carrier.items() if k.lower() in ("traceparent", "tracestate")
    }
    ctx = extract(wanted)
    return ctx if ot.get_current_span(ctx).get_span_context().is_valid else None


@contextmanager
def attached(ctx: Context | None) -> Iterator[None]:
    """``ctx`` current for the block (nothing when None)."""
    if ctx is None:
        yield
        return
    from opentelemetry import context

    token = context.attach(ctx)
    try:
        yield
    finally:
        context.detach(token)


# ---------------------------------------------------------------------------------- recording


@dataclass
class Phase:
    """A stretch of an operation: its own code (``code``) or one of its transactions (``tx``,
    with the transaction's result)."""

    kind: Literal["code", "tx"]
    start: int
    end: int
    value: Any = None


@dataclass
class Interval:
    """A finished piece of work to show as a span: name, times (ns since the epoch), attributes."""

    name: str
    start: int
    end: int
    attributes: Attrs = field(default_factory=dict)


# (attributes of the root span, its children) from the operation's result and its phases
Describe = Callable[[T, list[Phase]], tuple[Attrs, list[Interval]]]


def op_spans(
    name: str, op: Generator[Any, Any, T], attributes: Attrs, describe: Describe[T]
) -> Generator[Any, Any, T]:
    """``op`` unchanged when spans are off; else ``op`` recorded: at its end a span ``name``
    under the span current now, with ``attributes`` and the children ``describe`` makes."""
    tr = tracer()
    if tr is None:
        return op
    return _recorded(tr, _current(), name, op, attributes, describe)


def _current() -> Context:
    from opentelemetry import context

    return context.get_current()


def _recorded(
    tr: Tracer,
    parent: Context,
    name: str,
    op: Generator[Any, Any, T],
    attributes: Attrs,
    describe: Describe[T],
) -> Generator[Any, Any, T]:
    phases: list[Phase] = []
    start = t = time.time_ns()
    value: Any = None
    error: BaseException | None = None
    try:
        while True:
            try:
                tx = op.send(value) if error is None else op.throw(error)
            except StopIteration as stop:
                phases.append(Phase("code", t, time.time_ns()))
                result: T = stop.value
                break
            now = time.time_ns()
            phases.append(Phase("code", t, now))
            t = now
            try:
                value, error = (yield tx), None
            except GeneratorExit:
                op.close()
                raise
            except BaseException as exc:  # thrown by the runner: the operation may handle it
                value, error = None, exc
            now = time.time_ns()
            phases.append(Phase("tx", t, now, value))
            t = now
    except BaseException as exc:
        emit(tr, parent, Interval(name, start, time.time_ns(), attributes), [], exc)
        raise
    attrs, children = describe(result, phases)
    emit(tr, parent, Interval(name, start, phases[-1].end, {**attributes, **attrs}), children)
    return result


def emit(
    tr: Tracer,
    parent: Context | None,
    root: Interval,
    children: Sequence[Interval],
    error: BaseException | None = None,
) -> Span:
    """``root`` as a span under ``parent`` and ``children`` as its child spans."""
    from opentelemetry import trace as ot

    span = tr.start_span(
        root.name, context=parent, attributes=root.attributes, start_time=root.start
    )
    inside = ot.set_span_in_context(span)
    for c in children:
        tr.start_span(c.name, context=inside, attributes=c.attributes, start_time=c.start).end(
            c.end
        )
    if error is not None:
        _failed(span, error)
    span.end(root.end)
    return span


def _failed(span: Span, error: BaseException) -> None:
    from opentelemetry import trace as ot

    span.record_exception(error)
    span.set_status(ot.Status(ot.StatusCode.ERROR, type(error).__name__))


def end_to_end(
    stages: Sequence[tuple[str, float]], start: int, end: int, *, backwards: bool = False
) -> list[Interval]:
    """Stages measured in milliseconds as intervals laid end to end from ``start`` (or, with
    ``backwards``, ending at ``end``), kept inside ``[start, end]``; each carries its measured
    time as ``memflow.stage.ms``."""
    out: list[Interval] = []
    at = end - sum(int(ms * 1e6) for _, ms in stages) if backwards else start
    at = max(at, start)
    for name, ms in stages:
        stop = min(at + int(ms * 1e6), end)
        out.append(Interval(name, at, stop, {"memflow.stage.ms": ms}))
        at = stop
    return out


# ----------------------------------------------------------------------------------- memorize


class Usage(Protocol):
    """What a chat model's usage counter gives (memflow.llm.client.Usage)."""

    calls: int
    prompt_tokens: int
    completion_tokens: int


class Work:
    """A long operation's span (a memorize call), started now and ended with its ``with`` block
    (failed when the block raised), with a child span per document (:meth:`document` to
    :meth:`document_done`); within a document, :meth:`stage` ends the stage running and starts
    the next, so the stages cover the document end to end. ``attributes`` and ``usage`` (the chat
    model's counters) are called only when spans are on. Does nothing when spans are off (:func:`work`)."""

    def __init__(self, tr: Tracer | None, name: str, attributes: Attrs) -> None:
        self.tr = tr
        self.parent = _current() if tr is not None else None
        self.span = tr.start_span(name, context=self.parent, attributes=attributes) if tr else None
        self.stages: list[Interval] = []
        self.doc: Interval | None = None
        self.usage: tuple[int, int, int] = (0, 0, 0)

    def stage(self, name: str) -> None:
        if self.span is None:
            return
        now = time.time_ns()
        if self.stages:
            self.stages[-1].end = now
        elif self.doc is not None:  # the first stage starts with its document
            now = self.doc.start
        self.stages.append(Interval(name, now, now))

    def document(self, source: str, usage: Callable[[], Usage] | None = None) -> None:
        if self.span is None:
            return
        self.doc = Interval(
            "memflow.memorize.document", time.time_ns(), 0, {"memflow.source": source}
        )
        self.stages = []
        self.usage = _counts(usage)

    def document_done(
        self, attributes: Callable[[], Mapping[str, Any]], usage: Callable[[], Usage] | None = None
    ) -> None:
        if self.span is None or self.tr is None or self.doc is None:
            return
        self.doc.end = time.time_ns()
        if self.stages:
            self.stages[-1].end = self.doc.end
        calls, prompt, completion = (a - b for a, b in zip(_counts(usage), self.usage, strict=True))
        self.doc.attributes.update(attributes())
        if calls:
            self.doc.attributes.update(
                {
                    "memflow.llm.calls": calls,
                    "gen_ai.usage.input_tokens": prompt,
                    "gen_ai.usage.output_tokens": completion,
                }
            )
        from opentelemetry import trace as ot

        emit(self.tr, ot.set_span_in_context(self.span), self.doc, self.stages)
        self.doc, self.stages = None, []

    def attributes(self, attributes: Attrs) -> None:
        if self.span is not None:
            self.span.set_attributes(attributes)

    def __enter__(self) -> Work:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: object
    ) -> None:
        """Ends the span; an error (or the operation closed early) marks it failed."""
        if self.span is None:
            return
        if error is not None:
            _failed(self.span, error)
        self.span.end()


def _counts(usage: Callable[[], Usage] | None) -> tuple[int, int, int]:
    if usage is None:
        return (0, 0, 0)
    now = usage()
    return (now.calls, now.prompt_tokens, now.completion_tokens)


def work(name: str, attributes: Attrs) -> Work:
    """A :class:`Work` span started now (recording nothing when spans are off)."""
    return Work(tracer(), name, attributes)


NO_WORK = Work(None, "", {})  # a Memorizer's until memorize_op gives it one

__all__ = [
    "NO_WORK",
    "Attrs",
    "Interval",
    "Phase",
    "Usage",
    "Work",
    "attached",
    "emit",
    "end_to_end",
    "op_spans",
    "remote_parent",
    "setup",
    "span_json",
    "tracer",
    "work",
]
