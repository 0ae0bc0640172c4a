"""Progress of a ``memorize`` call: typed events, and the renderers the CLI puts on stderr.

The pipeline emits a :class:`ProgressEvent` when a document starts, after every small batch of
texts the model embeds, before a document's transaction and when a document ends. Counts are in
chunks (turns, sentences); within a document the share done is estimated from the texts embedded
so far, so the ETA moves during a long document too, not only between documents.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Literal, TextIO

Stage = Literal["document", "embedding", "writing", "done"]
# Texts a document typically embeds per chunk (its point, the point's edge, its share of facets).
_TEXTS_PER_CHUNK = 2.2


@dataclass(frozen=True)
class ProgressEvent:
    """``stage``: "document" (one starts; ``status`` set when it ended: written/skipped/failed),
    "embedding" (a batch of texts embedded), "writing" (its transaction starts), "done"."""

    stage: Stage
    source: str
    documents_done: int
    documents_total: int
    chunks_done: float
    chunks_total: int
    texts_embedded: int
    elapsed: float
    eta: float | None
    status: str | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)


ProgressCallback = Callable[[ProgressEvent], None]


class ProgressTracker:
    """Turns pipeline milestones into events for ``callback`` (the pipeline holds one)."""

    def __init__(self, callback: ProgressCallback, documents: int, chunks: int) -> None:
        self.callback = callback
        self.documents_total = documents
        self.chunks_total = chunks
        self.started = time.perf_counter()
        self.documents_done = 0
        self.chunks_finished = 0
        self.texts = 0
        self._source = ""
        self._doc_chunks = 0
        self._doc_texts = 0

    def _emit(self, stage: Stage, status: str | None = None) -> None:
        expected = max(1.0, self._doc_chunks * _TEXTS_PER_CHUNK)
        share = min(0.95, self._doc_texts / expected) if stage != "done" else 0.0
        done = self.chunks_finished + self._doc_chunks * share
        elapsed = time.perf_counter() - self.started
        eta = None
        if done > 0 and elapsed > 0:
            eta = max(0.0, (self.chunks_total - done) * elapsed / done)
        self.callback(
            ProgressEvent(
                stage=stage,
                source=self._source,
                documents_done=self.documents_done,
                documents_total=self.documents_total,
                chunks_done=round(done, 1),
                chunks_total=self.chunks_total,
                texts_embedded=self.texts,
                elapsed=round(elapsed, 3),
                eta=None if eta is None else round(eta, 1),
                status=status,
            )
        )

    def begin(self, source: str, chunks: int) -> None:
        self._source, self._doc_chunks, self._doc_texts = source, chunks, 0
        self._emit("document")

    def embedded(self, n: int) -> None:
        self.texts += n
        self._doc_texts += n
        self._emit("embedding")

    def writing(self) -> None:
        self._emit("writing")

    def end(self, status: str) -> None:
        self.documents_done += 1
        self.chunks_finished += self._doc_chunks
        self._doc_chunks = self._doc_texts = 0
        self._emit("document", status)
        if self.documents_done >= self.documents_total:
            self._emit("done")


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    m, s = divmod(int(seconds + 0.5), 60)
    return f"{m // 60}:{m % 60:02d}:{s:02d}" if m >= 60 else f"{m:02d}:{s:02d}"


def describe(e: ProgressEvent) -> str:
    """One line: documents, chunks, texts embedded, elapsed and ETA."""
    pct = 100.0 * e.chunks_done / e.chunks_total if e.chunks_total else 100.0
    name = e.source.rsplit("/", 1)[-1][:32]
    return (
        f"{pct:5.1f}% docs {e.documents_done}/{e.documents_total} chunks "
        f"{e.chunks_done:.0f}/{e.chunks_total} embedded {e.texts_embedded} "
        f"elapsed {_clock(e.elapsed)} eta {_clock(e.eta)} {name}"
    )


class BarRenderer:
    """A redrawn one-line bar for a terminal (at most ``fps`` redraws a second)."""

    width = 24

    def __init__(self, stream: TextIO, fps: float = 8.0) -> None:
        self.stream, self.gap, self.last = stream, 1.0 / fps, 0.0

    def __call__(self, e: ProgressEvent) -> None:
        now = time.monotonic()
        if e.stage != "done" and now - self.last < self.gap:
            return
        self.last = now
        frac = e.chunks_done / e.chunks_total if e.chunks_total else 1.0
        filled = int(self.width * min(1.0, frac))
        bar = "#" * filled + "." * (self.width - filled)
        self.stream.write(f"\r[{bar}] {describe(e)}".ljust(110))
        if e.stage == "done":
            self.stream.write("\n")
        self.stream.flush()


class LineRenderer:
    """Plain lines every ``every`` seconds (logs, pipes), plus the last one."""

    def __init__(self, stream: TextIO, every: float = 5.0) -> None:
        self.stream, self.every, self.last = stream, every, -float("inf")

    def __call__(self, e: ProgressEvent) -> None:
        now = time.monotonic()
        if e.stage != "done" and now - self.last < self.every:
            return
        self.last = now
        self.stream.write(f"memorize: {describe(e)}\n")
        self.stream.flush()


class JsonRenderer:
    """Every event as one JSON line (for tools)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, e: ProgressEvent) -> None:
        self.stream.write(e.to_json() + "\n")
        self.stream.flush()


PROGRESS_MODES = ("auto", "bar", "plain", "json", "none")


def renderer(mode: str, stream: TextIO) -> ProgressCallback | None:
    """The renderer for ``--progress``: auto is a bar on a terminal, else plain lines."""
    if mode == "auto":
        mode = "bar" if stream.isatty() else "plain"
    if mode == "bar":
        return BarRenderer(stream)
    if mode == "plain":
        return LineRenderer(stream)
    if mode == "json":
        return JsonRenderer(stream)
    return None


__all__ = [
    "PROGRESS_MODES",
    "BarRenderer",
    "JsonRenderer",
    "LineRenderer",
    "ProgressCallback",
    "ProgressEvent",
    "ProgressTracker",
    "describe",
    "renderer",
]
