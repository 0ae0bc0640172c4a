"""memorize: inputs -> parse -> extract -> route -> plan -> write, one transaction per document.

:func:`memorize_op` is the operation both APIs run: the inputs resolved
(:mod:`memflow.ingest.inputs`), then the :class:`Memorizer`, one document after another.

Failures are per document: a document that fails writes nothing and the others go on. The call
raises the first failure's error (InvalidInput, ExtractionError, ...) only when *every* input
failed and ``raise_on_error`` is true (the default); otherwise failures are in the report.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, TypedDict

from sqlalchemy import Connection, Engine

from memflow import trace
from memflow.context import StoreContext
from memflow.db.filters import check_metadata, check_scope
from memflow.db.steps import Body, Op, Tx, sql_tx
from memflow.drafts import EpisodeDraft
from memflow.embed.base import Vector, mean_direction
from memflow.embed.cache import CachingEmbedder
from memflow.errors import ConfigurationError, InvalidInput, MemflowError
from memflow.ingest.inputs import InputDocument, Source, resolve_inputs
from memflow.ingest.options import EXTRACTOR_CHOICES, ExtractorChoice, MemorizeOptions
from memflow.ingest.progress import ProgressCallback, ProgressTracker
from memflow.ingest.report import DocumentReport, MemorizeReport
from memflow.ingest.route import RouteSettings, merge_into_plan, reconcile, route_steps
from memflow.ingest.supersede import make_decider
from memflow.store.datasets import DatasetRef, claim_embedder_op
from memflow.store.merge import EpisodeState, NodeUpdate, apply_updates, load_episodes
from memflow.store.plan import Planner, WritePlan, summary_parts
from memflow.store.versions import version_procedures
from memflow.store.writer import (
    DocumentInfo,
    Writer,
    document_episode_ids,
    document_exists,
    document_id,
)
from memflow.text.document import ParsedDocument

if TYPE_CHECKING:
    from memflow.llm.client import LlmClient, Usage

ProgressFn = Callable[[int, int, DocumentReport], None]


AfterRows = Callable[[Connection, uuid.UUID], None]


# What extraction can raise on a value the checks let through (a date past the calendar, text
# nested past the recursion limit): that document fails and the others go on.
_DATA_ERRORS = (ValueError, OverflowError, RecursionError)


def _unreadable(source: str, exc: Exception) -> InvalidInput:
    return InvalidInput(
        f"{source}: memflow could not memorise this input ({type(exc).__name__}: {exc}); "
        "fix the value it names, or report it with the input; the other inputs go on"
    )


# ---------------------------------------------------------------- the pipeline


class Memorizer:
    """Memorises documents into one dataset. Reusable across calls (the benchmark keeps one)."""

    def __init__(
        self,
        ctx: StoreContext,
        options: MemorizeOptions | None = None,
        *,
        llm: LlmClient | None = None,
    ) -> None:
        opts = options or MemorizeOptions()
        routing = opts.routing
        self.ctx = ctx
        self.engine: Engine = ctx.engine
        # Every stage (segmentation, routing, the writer) embeds through one cache: each distinct
        # text reaches the model once per Memorizer (one memorize call).
        self.tracker: ProgressTracker | None = None
        self.embedder = CachingEmbedder(ctx.embedder, on_embedded=self._embedded)
        self.routing = (
            routing
            if isinstance(routing, RouteSettings)
            else RouteSettings(enabled=routing if isinstance(routing, bool) else None)
        )
        self._own_client = False
        self.client = llm
        self.extractor = self._make_extractor(opts.extractor)
        self.router = self._make_router()
        self.supersede = opts.supersede
        self.scope = check_scope(opts.scope)
        self.metadata = check_metadata(opts.metadata)
        self.derive = opts.derived_vectors
        self._decide = make_decider(opts.supersede, self._llm_client, self.embedder, opts.conflicts)
        # One document ahead (run_op): its extraction runs in a worker thread while this
        # document's rows are written, so the model and the SQL overlap.
        self._ahead: InputDocument | None = None
        self._extracting: tuple[ParsedDocument, Future[tuple[list[EpisodeDraft], str]]] | None = (
            None
        )
        self._pool: ThreadPoolExecutor | None = None
        self._worker = threading.local()
        self._worker_texts = 0
        self._stop_ahead = threading.Event()
        self.trace = trace.NO_WORK  # memorize_op's spans (memflow.trace)

    # -- setup ----------------------------------------------------------------------------------
    def _llm_client(self) -> LlmClient:
        if self.client is None:
            from memflow.llm.client import LlmClient, LlmSettings

            self.client = LlmClient(LlmSettings.from_env())
            self._own_client = True
        return self.client

    def _make_extractor(self, choice: Any) -> Any:
        from memflow.ingest.rules import RulesExtractor
        from memflow.llm.client import LlmSettings
        from memflow.llm.extractor import LlmExtractor

        if not isinstance(choice, str):
            if not hasattr(choice, "extract"):
                raise ConfigurationError(f"extractor {choice!r} has no extract(document) method")
            return choice
        if choice not in EXTRACTOR_CHOICES:
            raise ConfigurationError(
                f"extractor must be one of {', '.join(EXTRACTOR_CHOICES)}, not {choice!r}"
            )
        if choice == "llm" or (choice == "auto" and (self.client or LlmSettings.configured())):
            return LlmExtractor(self._llm_client())
        return RulesExtractor(self.embedder)

    def _make_router(self) -> Any:
        use = self.routing.use_llm
        if use is False or (use is None and self.client is None):
            return None
        from memflow.llm.router import LlmRouter

        return LlmRouter(self._llm_client())

    def _embedded(self, n: int) -> None:
        if getattr(self._worker, "active", False):
            if self._stop_ahead.is_set():  # the run stopped: give the model back within a batch
                raise _AheadStopped
            self._worker_texts += n  # the next document's: reported when it begins
        elif self.tracker is not None:
            self.tracker.embedded(n)

    def close(self) -> None:
        self._finish_ahead()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        if self._own_client and self.client is not None:
            self.client.close()

    @property
    def extractor_name(self) -> str:
        return str(getattr(self.extractor, "name", type(self.extractor).__name__))

    def _usage(self) -> Usage:
        from memflow.llm.client import Usage

        return self.client.usage if self.client is not None else Usage()

    # -- one document ahead ---------------------------------------------------------------------
    def _extracts_ahead(self, item: InputDocument) -> bool:
        """Only the rules extractor works ahead: it is the model on this machine, pure CPU, and
        never reads the store; a chat model's calls and tokens belong to their own document."""
        from memflow.ingest.rules import RulesExtractor

        return (
            item.doc is not None
            and item.content_hash is not None
            and item.doc.content_type != "draft"
            and type(self.extractor) is RulesExtractor
        )

    def _start_ahead(self) -> None:
        """Extract the document marked ahead in the worker thread (from ``_writing``)."""
        item, self._ahead = self._ahead, None
        if item is None or item.doc is None or self._extracting is not None:
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="memflow-ahead")
        doc = item.doc

        def work() -> tuple[list[EpisodeDraft], str]:
            self._worker.active = True
            try:
                return self._extract_now(doc)
            finally:
                self._worker.active = False

        self._extracting = (doc, self._pool.submit(work))

    def _finish_ahead(self) -> None:
        """Stop extraction work nobody will collect (the run stopped early, or was interrupted):
        the worker stops after the model's current batch."""
        if self._extracting is not None:
            _, future = self._extracting
            self._extracting = None
            if not future.cancel():
                self._stop_ahead.set()
                future.exception()  # its error belongs to a document never written
                self._stop_ahead.clear()

    # -- one document ---------------------------------------------------------------------------
    def _extract(self, doc: ParsedDocument) -> tuple[list[EpisodeDraft], str]:
        if self._extracting is not None and self._extracting[0] is doc:
            _, future = self._extracting
            try:
                return future.result()
            finally:
                if future.done():  # else interrupted while waiting: close() stops the worker
                    self._extracting = None
                    if self._worker_texts and self.tracker is not None:
                        self.tracker.embedded(self._worker_texts)
                    self._worker_texts = 0
        return self._extract_now(doc)

    def _extract_now(self, doc: ParsedDocument) -> tuple[list[EpisodeDraft], str]:
        if doc.content_type == "draft":
            from memflow.ingest.rules import drafts_from_json

            return drafts_from_json(doc.text, doc.source), "draft"
        result = self.extractor.extract(doc)
        drafts = result[0] if isinstance(result, tuple) else result
        return list(drafts), self.extractor_name

    def _plan(
        self,
        doc: ParsedDocument,
        doc_id: uuid.UUID,
        drafts: list[EpisodeDraft],
        derive: bool,
    ) -> Body[tuple[WritePlan, list[NodeUpdate], int, AfterRows | None]]:
        """One transaction: route the drafts, load the episodes they merge into, plan the rows."""
        ds = self.ctx.dataset_id
        targets: list[uuid.UUID | None] = [None] * len(drafts)
        if drafts and self.routing.active_for(doc.content_type):
            vectors = self._summary_vectors(drafts, derive)
            ask = None
            if self.router is not None:
                ask = lambda d, c: bool(self.router.should_merge(d, c.name, c.summary))  # noqa: E731
            targets = yield from route_steps(ds, drafts, list(vectors), self.routing, ask)
        wanted = [t for t in targets if t is not None]
        states: dict[uuid.UUID, EpisodeState] = yield lambda conn: load_episodes(conn, ds, wanted)
        planner = Planner(ds, derive=derive)
        for draft, target in zip(drafts, targets, strict=True):
            state = states.get(target) if target else None
            if state is None:
                planner.add_episode(draft)
            else:
                merged = draft.model_copy(
                    update={"name": state.name, "summary": state.summary, "time": None}
                )
                planner.add_episode(merged, ep_id=state.id)
        plan = planner.finish()
        plan.episode_ids = list(dict.fromkeys(plan.episode_ids))
        chunk_index: dict[str, int] = {}
        for c in doc.chunks:
            chunk_index.setdefault(c.key, c.index)
        updates = merge_into_plan(plan, states, doc_id, chunk_index)
        yield lambda conn: reconcile(conn, ds, plan, {u.id for u in updates})
        supersede: AfterRows | None = yield lambda conn: version_procedures(conn, ds, plan)
        return plan, updates, sum(1 for t in targets if t is not None and t in states), supersede

    def _summary_vectors(self, drafts: list[EpisodeDraft], derive: bool) -> list[Vector]:
        """The drafts' summary vectors as the writer will store them (routing compares them with
        the stored ones): derived from the facets' anchors when deriving, else embedded."""
        if not derive:
            return list(self.embedder.embed_passages([d.summary for d in drafts]))
        parts = [summary_parts(d) for d in drafts]
        given = self.embedder.embed_passages(
            [t for d, ts in zip(drafts, parts, strict=True) for t in (ts or (d.summary,))]
        )
        out: list[Vector] = []
        at = 0
        for ts in parts:
            n = len(ts) or 1
            out.append(mean_direction(list(given[at : at + n])) if ts else given[at])
            at += n
        return out

    def document_op(self, item: InputDocument) -> Op[tuple[DocumentReport, MemflowError | None]]:
        """Memorise one document: skipped when stored, else extracted, routed, planned and
        written (:mod:`memflow.db.steps`)."""
        started = time.perf_counter()
        report = DocumentReport(id=None, source=item.source, status="failed")
        if item.doc is None or item.content_hash is None:
            err = item.error or InvalidInput(f"{item.source}: could not be read")
            return self._failed(report, err, started), err
        doc = item.doc
        ds = self.ctx.dataset_id
        doc_id = report.id = document_id(ds, item.content_hash, self.scope, self.metadata)
        report.content_type = doc.content_type
        usage_before = self._usage()
        self.trace.stage("check")
        try:
            stored: list[uuid.UUID] | None = yield sql_tx(
                lambda conn: (
                    document_episode_ids(conn, ds, doc_id)
                    if document_exists(conn, ds, doc_id)
                    else None
                ),
                ds,
            )
            if stored is not None:
                report.status = "skipped"
                report.episode_ids = stored
                report.seconds = time.perf_counter() - started
                return report, None
            self.trace.stage("extract")
            try:
                drafts, report.extractor = self._extract(doc)
            except _DATA_ERRORS as exc:  # a gap in the checks, or a custom extractor's error
                raise _unreadable(doc.source, exc) from exc
            # Derived edge vectors were measured on the rules' drafts, whose edge texts restate
            # their ends; a model's descriptions and roles say more (MemorizeOptions).
            derive = self.derive and report.extractor == "rules"
            self.trace.stage("plan")
            planned = yield Tx(lambda: self._plan(doc, doc_id, drafts, derive), ds)
            plan, updates, report.merged, supersede = planned
            plan.rules = self.supersede != "off"
            info = DocumentInfo(
                id=doc_id,
                source=doc.source,
                title=doc.title,
                content_type=doc.content_type,
                content_hash=item.content_hash,
                reference_time=doc.reference_time,
                chunks=list(doc.chunks),
                meta={
                    "extractor": report.extractor,
                    **({"versioned": True} if item.versioned else {}),
                },
                session_times={s.index: s.started_at for s in doc.sessions if s.started_at},
                scope=self.scope,
                metadata=self.metadata,
            )
            writer = Writer(
                self.embedder,
                fault=self.ctx.fault,
                after_rows=_after_rows(updates, supersede),
                decide=self._decide,
                on_stage=lambda _stage: self.tracker.writing() if self.tracker else None,
            )
            self.trace.stage("embed")
            result = yield from writer.write_op(ds, info, plan, on_write=self._writing)
        except MemflowError as exc:
            self._usage_into(report, usage_before)
            return self._failed(report, exc, started), exc
        self._usage_into(report, usage_before)
        report.status = "written" if result.status == "written" else "skipped"
        if report.status == "written":
            for key, value in result.counts.items():
                setattr(report, key, value)
            report.embeddings = result.embeddings
            report.episode_ids = list(result.episode_ids)
        report.seconds = time.perf_counter() - started
        return report, None

    def _writing(self) -> None:
        self.trace.stage("write")
        if self.tracker is not None:
            self.tracker.writing()
        self._start_ahead()

    def _usage_into(self, report: DocumentReport, before: Usage) -> None:
        after = self._usage()
        report.llm_calls = after.calls - before.calls
        report.tokens = after.total_tokens - before.total_tokens

    @staticmethod
    def _failed(report: DocumentReport, exc: MemflowError, started: float) -> DocumentReport:
        report.status = "failed"
        report.error = str(exc)
        report.error_type = type(exc).__name__
        report.seconds = time.perf_counter() - started
        return report

    def run_op(
        self,
        items: Sequence[InputDocument],
        progress: ProgressFn | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> Op[tuple[MemorizeReport, list[MemflowError]]]:
        """Memorise ``items``: each document in its own transactions, one after another."""
        report = MemorizeReport()
        errors: list[MemflowError] = []
        if on_progress is not None:
            chunks = sum(len(i.doc.chunks) for i in items if i.doc is not None)
            self.tracker = ProgressTracker(on_progress, len(items), chunks)
        ds = self.ctx.dataset_id
        for i, item in enumerate(items):
            following = items[i + 1] if i + 1 < len(items) else None
            self._ahead = None
            if following is not None and self._extracts_ahead(following):
                key = document_id(ds, following.content_hash or "", self.scope, self.metadata)
                stored = yield sql_tx(partial(document_exists, dataset_id=ds, doc_id=key), ds)
                self._ahead = None if stored else following
            if self.tracker is not None:
                self.tracker.begin(item.source, len(item.doc.chunks) if item.doc else 0)
            self.trace.document(item.source, self._usage)
            doc_report, err = yield from self.document_op(item)
            self.trace.document_done(doc_report.span_attributes, self._usage)
            if self.tracker is not None:
                self.tracker.end(doc_report.status)
            report.documents.append(doc_report)
            if err is not None:
                errors.append(err)
            if progress is not None:
                progress(i + 1, len(items), doc_report)
        self._finish_ahead()
        return report, errors


class _AheadStopped(Exception):
    """Raised in the worker to drop the next document's extraction (Memorizer._finish_ahead)."""


def outcome(
    report: MemorizeReport, errors: list[MemflowError], options: MemorizeOptions
) -> MemorizeReport:
    """The report, or the first error when every input failed and ``raise_on_error`` is set."""
    if (
        options.raise_on_error
        and errors
        and not any(d.status != "failed" for d in report.documents)
    ):
        raise errors[0]
    return report


def _after_rows(updates: list[NodeUpdate], supersede: AfterRows | None) -> AfterRows | None:
    """What runs in the document's transaction after its rows: routing's merge updates, then
    marking the procedures this document supersedes."""
    if not updates and supersede is None:
        return None

    def run(conn: Connection, ds: uuid.UUID) -> None:
        if updates:
            apply_updates(conn, ds, updates)
        if supersede is not None:
            supersede(conn, ds)

    return run


class MemorizeKeywords(TypedDict, total=False):
    """The keywords of ``Dataset.memorize``: the fields of :class:`MemorizeOptions` a call may
    set (left out or None: from ``options``), and what reports progress and which chat model
    to use."""

    content_type: str | None
    extractor: ExtractorChoice | Any
    reference_time: datetime | None
    progress: ProgressFn | None
    routing: RouteSettings | bool | None
    llm: LlmClient | None
    raise_on_error: bool | None
    options: MemorizeOptions | None
    on_progress: ProgressCallback | None
    scope: dict[str, str] | None
    metadata: dict[str, Any] | None


_NOT_OPTIONS = ("progress", "on_progress", "llm", "options")


def memorize_op(
    ctx: StoreContext,
    ref: DatasetRef,
    source: Source | Sequence[Source],
    keywords: MemorizeKeywords,
) -> Op[MemorizeReport]:
    """Memorise ``source`` into the dataset of ``ctx`` (see the module docstring for the rules):
    the embedder claimed for the dataset, the inputs resolved (once: resolved ones pass
    through), each document in its own transactions."""
    given: dict[str, Any] = dict(keywords)
    base = given.pop("options", None) or MemorizeOptions()
    opts = base.updated(**{k: v for k, v in given.items() if k not in _NOT_OPTIONS})
    with trace.work("memflow.memorize", {"memflow.dataset": ref.name}) as work:
        yield from claim_embedder_op(ref, ctx.embedder.name)
        items = resolve_inputs(
            source, content_type=opts.content_type, reference_time=opts.reference_time
        )
        memorizer = Memorizer(ctx, opts, llm=given.get("llm"))
        memorizer.trace = work
        try:
            run = memorizer.run_op(items, given.get("progress"), given.get("on_progress"))
            report, errors = yield from run
        finally:
            memorizer.close()
        work.attributes({f"memflow.memorize.{k}": v for k, v in report.totals().items()})
        return outcome(report, errors, opts)


__all__ = ["MemorizeKeywords", "Memorizer", "ProgressFn", "memorize_op", "outcome"]
