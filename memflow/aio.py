"""The async twin of :mod:`memflow.memory`: ``AsyncMemory.open()`` -> ``mem.dataset(name)`` ->
``await`` memorize, search, forget, add_episode.

Same arguments, same results, same errors as :class:`~memflow.memory.Memory`. The work is the
sync API's own, split by :mod:`memflow.db.steps`: SQL on SQLAlchemy's async engine (psycopg's
async driver, :mod:`memflow.db.aio`), embedding and scoring in a bounded pool of worker threads,
so many searches share one event loop and none blocks it.

Every public method of ``Memory`` and ``Dataset`` has its twin here, with the same parameters,
awaited (``tests/unit/test_async_parity.py`` keeps it so). The exceptions: ``aclose()`` for
``close()``; ``AsyncMemory.open`` takes ``url`` (not ``database_url``) and ``cpu_workers``, and no
read replicas; ``AsyncDataset.context()`` is awaited where ``Dataset.context`` is a property; an
``AsyncDataset`` is looked up (created unless ``create=False``) by its first awaited call, so its
``id`` is known only after one.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Generator, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from memflow.context import FaultHook, StoreContext
from memflow.db import aio
from memflow.db.queries import q
from memflow.db.steps import Op, Tx
from memflow.drafts import EpisodeDraft
from memflow.embed.base import CheckedEmbedder, Embedder
from memflow.ingest.entity_types import entity_type_params
from memflow.ingest.options import ExtractorChoice, MemorizeOptions
from memflow.ingest.pipeline import Memorizer, ProgressFn, Source, outcome, resolve_inputs
from memflow.ingest.progress import ProgressCallback
from memflow.ingest.report import MemorizeReport
from memflow.ingest.route import RouteSettings
from memflow.memory import Memory
from memflow.recall import multi
from memflow.recall.budget import honour_budget
from memflow.recall.config import DisplayMode, RecallConfig, SearchMode
from memflow.recall.plan import SearchPlan
from memflow.recall.search import finish_search, plan_search, search_body
from memflow.recall.types import SearchResponse
from memflow.store import reads
from memflow.store.datasets import (
    DatasetInfo,
    check_same_embedder,
    draft_document,
    draft_documents,
    drop_dataset_op,
    list_datasets,
    resolve_dataset,
    validate_dataset_name,
    write_drafts_op,
)
from memflow.store.dump import DumpFile, DumpProgressFn, ExportReport, ImportReport
from memflow.store.export import export_op
from memflow.store.forget import ForgetReport, forget_op
from memflow.store.history import (
    DocumentVersion,
    HistoryEntry,
    correct_op,
    document_versions,
    history_op,
    reopen_op,
)
from memflow.store.imports import import_op
from memflow.store.opening import open_store
from memflow.store.reads import as_uuid
from memflow.store.writer import Writer, WriteResult

if TYPE_CHECKING:
    from memflow.db.embedded import EmbeddedServer
    from memflow.llm.client import LlmClient

T = TypeVar("T")


class AsyncMemory:
    """A memflow store for asyncio code: one PostgreSQL database and one embedder.

    ``async with AsyncMemory.open(...) as mem:``, or ``mem = await AsyncMemory.open(...)``
    then ``await mem.aclose()``."""

    def __init__(
        self,
        url: str | None = None,
        *,
        home: str | Path | None = None,
        embedder: Embedder | str | None = None,
        auto_upgrade: bool | None = None,
        cpu_workers: int | None = None,
    ) -> None:
        self._args = (url, home, embedder, auto_upgrade)
        self._engine: AsyncEngine | None = None
        self._embedder: Embedder | None = None
        self.url: str | None = None
        self.server: EmbeddedServer | None = None
        self.fault: FaultHook | None = None
        # Embedding and scoring run here, at most ``cpu_workers`` at once (default: the CPUs, <= 4).
        self.cpu = aio.CpuPool(cpu_workers)

    @classmethod
    def open(
        cls,
        url: str | None = None,
        *,
        home: str | Path | None = None,
        embedder: Embedder | str | None = None,
        auto_upgrade: bool | None = None,
        cpu_workers: int | None = None,
    ) -> AsyncMemory:
        """A store to open by awaiting it or entering it (``async with``), with the database and
        embedder rules of :meth:`memflow.Memory.open`.

        Starting the embedded server and checking (upgrading) the schema happen once, in a
        worker thread; every call after that runs on the async engine."""
        return cls(
            url, home=home, embedder=embedder, auto_upgrade=auto_upgrade, cpu_workers=cpu_workers
        )

    async def start(self) -> AsyncMemory:
        """Open the store (what awaiting or entering it does); once."""
        if self._engine is None:
            url, emb, server = await asyncio.to_thread(open_store, *self._args)
            self._embedder = CheckedEmbedder(emb)
            self.url, self.server = url, server
            self._engine = aio.make_async_engine(url, app_role=True)
        return self

    @property
    def engine(self) -> AsyncEngine:
        if self._engine is None:
            raise RuntimeError(
                "the store is not open: `await AsyncMemory.open(...)` or `async with`"
            )
        return self._engine

    @property
    def embedder(self) -> Embedder:
        """The embedder; provider failures and malformed vectors raise EmbeddingError."""
        if self._embedder is None:
            raise RuntimeError(
                "the store is not open: `await AsyncMemory.open(...)` or `async with`"
            )
        return self._embedder

    def __await__(self) -> Generator[Any, None, AsyncMemory]:
        return self.start().__await__()

    async def aclose(self) -> None:
        if self._engine is not None:
            await self._engine.dispose()
        self.cpu.close()

    async def __aenter__(self) -> AsyncMemory:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _sql(self, fn: Callable[[Connection], T], dataset_id: uuid.UUID | None = None) -> T:
        """Run ``fn`` (database work only) in one transaction bound to ``dataset_id``."""
        async with aio.transaction(self.engine, dataset_id) as conn:
            return await conn.run_sync(fn)

    # -- datasets -------------------------------------------------------------------------------
    def dataset(self, name: str, *, create: bool = True) -> AsyncDataset:
        """The dataset ``name``. It is looked up (created unless ``create=False``, else
        NotFound) by the first call awaited on it."""
        return AsyncDataset(self, validate_dataset_name(name), create=create)

    async def datasets(self) -> list[DatasetInfo]:
        return await self._sql(list_datasets)

    async def search(
        self,
        query: str,
        *,
        datasets: Sequence[str],
        top_k: int | None = None,
        mode: SearchMode | None = None,
        display: DisplayMode | None = None,
        budget_tokens: int | None = None,
        now: datetime | None = None,
        config: RecallConfig | None = None,
        as_of: datetime | None = None,
        include_history: bool = False,
        scope: dict[str, str] | None = None,
        where: dict[str, Any] | None = None,
        known_at: datetime | None = None,
    ) -> SearchResponse:
        """As :meth:`memflow.Memory.search`: one ranked list over several datasets."""
        names = multi.dataset_names(datasets)
        mine = self.embedder.name
        rows = await self._sql(
            lambda conn: [resolve_dataset(conn, n, mine, create=False) for n in names]
        )
        multi.check_one_embedder([(r.name, r.embedder) for r in rows], mine)
        targets = [multi.Target(r.name, r.id) for r in rows]
        plan = await self.cpu.run(
            plan_search, self.embedder, query, top_k=top_k, mode=mode, display=display,
            budget_tokens=budget_tokens, now=now, config=config, as_of=as_of,
            include_history=include_history, scope=scope, where=where, known_at=known_at,
        )  # fmt: skip
        fetched = await aio.run_tx(self.engine, multi.fetch_tx(targets, plan), self.cpu)
        return await self.cpu.run(multi.finish, targets, plan, fetched, config)

    async def import_dump(
        self,
        source: DumpFile,
        *,
        dataset: str | None = None,
        re_embed: bool = False,
        progress: DumpProgressFn | None = None,
    ) -> ImportReport:
        """As :meth:`memflow.Memory.import_dump` (the dump is read, and ``progress`` called,
        in a worker thread)."""
        op = import_op(self.embedder, source, dataset=dataset, re_embed=re_embed, progress=progress)
        return await aio.run_op(self.engine, op, self.cpu)

    async def drop_dataset(self, name: str, *, only_if_empty: bool = False) -> bool:
        """As :meth:`memflow.Memory.drop_dataset`. ``AsyncDataset`` objects of it still held
        fail on their next call."""
        op = drop_dataset_op(name, only_if_empty=only_if_empty)
        return await aio.run_op(self.engine, op, self.cpu)

    @staticmethod
    async def recorded_embedder(
        database_url: str | None, dataset: str, *, home: str | Path | None = None
    ) -> str | None:
        """As :meth:`memflow.Memory.recorded_embedder` (a one-off lookup before a store is
        opened: it runs the sync one in a thread)."""
        return await asyncio.to_thread(Memory.recorded_embedder, database_url, dataset, home=home)


class AsyncDataset:
    """One tenant of an :class:`AsyncMemory`. Every read and write is scoped to it."""

    def __init__(self, memory: AsyncMemory, name: str, *, create: bool = True) -> None:
        self.memory = memory
        self.name = name
        self.create = create
        self._id: uuid.UUID | None = None
        self._lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"AsyncDataset(name={self.name!r}, id={self._id})"

    @property
    def id(self) -> uuid.UUID:
        """The dataset's id (known once a call on it was awaited)."""
        if self._id is None:
            raise RuntimeError(
                f"dataset {self.name!r} is looked up by the first call awaited on it"
            )
        return self._id

    async def context(self) -> StoreContext:
        """What ingest, recall and store need of this dataset; looks it up (creates it) and
        checks its embedder on first use, as :meth:`memflow.Memory.dataset` does. Its engine is
        the async engine's sync facade: run work with it through :mod:`memflow.db.aio` only."""
        if self._id is None:
            async with self._lock:
                if self._id is None:
                    await self._resolve()
        m = self.memory
        return StoreContext(m.engine.sync_engine, m.embedder, self.id, m.fault)

    async def _resolve(self) -> None:
        mine = self.memory.embedder.name
        row = await self.memory._sql(
            lambda conn: resolve_dataset(conn, self.name, mine, create=self.create)
        )
        if row.embedder is None:
            await self.memory._sql(
                lambda conn: conn.execute(
                    q("dataset_set_embedder"), {"dataset_id": row.id, "embedder": mine}
                ),
                row.id,
            )
        else:
            check_same_embedder(self.name, row.embedder, mine)
        self._id = row.id

    async def check_embedder(self) -> None:
        """As :meth:`memflow.Dataset.check_embedder` (EmbedderMismatch); it is also the first
        lookup of the dataset (which creates it unless ``create=False``)."""
        await self.context()

    async def _cpu(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await self.memory.cpu.run(fn, *args, **kwargs)

    async def _read(self, fn: Callable[[Connection, uuid.UUID], T]) -> T:
        """``fn`` (a step of :mod:`memflow.store.reads`) in one transaction bound to this dataset."""
        ds = (await self.context()).dataset_id
        return await self.memory._sql(lambda conn: fn(conn, ds), ds)

    async def _op(self, op: Callable[[StoreContext], Op[T]]) -> T:
        """The operation ``op`` makes of this dataset's context, on the async engine."""
        ctx = await self.context()
        return await aio.run_op(self.memory.engine, op(ctx), self.memory.cpu)

    # -- structured memory in -------------------------------------------------------------------
    async def add_episode(self, draft: EpisodeDraft | dict[str, Any]) -> WriteResult:
        return await self.add_episodes([draft])

    async def add_episodes(
        self,
        drafts: Sequence[EpisodeDraft | dict[str, Any]],
        *,
        scope: dict[str, str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> WriteResult:
        """Store structured drafts in one transaction; adding the same drafts again is a no-op."""
        ctx = await self.context()
        doc, plan = await self._cpu(draft_document, ctx.dataset_id, drafts, scope, metadata)
        return await self._op(lambda c: write_drafts_op(c, doc, plan))

    async def import_episodes(
        self,
        documents: Sequence[Sequence[EpisodeDraft | dict[str, Any]]],
        *,
        progress: Callable[[int, int], None] | None = None,
        scope: dict[str, str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> list[WriteResult]:
        """As :meth:`memflow.Dataset.import_episodes`: all documents in one transaction, or none
        (``progress`` is called on the event loop's thread, inside that transaction)."""
        ctx = await self.context()
        items = await self._cpu(draft_documents, ctx.dataset_id, documents, scope, metadata)
        return await self._op(
            lambda c: Writer(c.engine, c.embedder, fault=c.fault).write_bulk_op(
                c.dataset_id, items, progress
            )
        )

    # -- search ---------------------------------------------------------------------------------
    async def search(
        self,
        query: str,
        *,
        top_k: int | None = None,
        mode: SearchMode | None = None,
        display: DisplayMode | None = None,
        budget_tokens: int | None = None,
        now: datetime | None = None,
        config: RecallConfig | None = None,
        as_of: datetime | None = None,
        include_history: bool = False,
        scope: dict[str, str] | None = None,
        where: dict[str, Any] | None = None,
        known_at: datetime | None = None,
    ) -> SearchResponse:
        """As :meth:`memflow.Dataset.search`."""
        ctx = await self.context()
        plan = await self._cpu(
            plan_search,
            ctx.embedder,
            query,
            top_k=top_k,
            mode=mode,
            display=display,
            budget_tokens=budget_tokens,
            now=now,
            config=config,
            as_of=as_of,
            include_history=include_history,
            scope=scope,
            where=where,
            known_at=known_at,
        )
        fetched = await aio.run_tx(
            self.memory.engine, Tx(lambda: search_body(ctx.dataset_id, plan)), self.memory.cpu
        )
        return await self._cpu(_respond, plan, fetched, config)

    # -- memorize and forget --------------------------------------------------------------------
    async def memorize(
        self,
        source: Source | Sequence[Source],
        *,
        content_type: str | None = None,
        extractor: ExtractorChoice | Any = None,
        reference_time: datetime | None = None,
        progress: ProgressFn | None = None,
        routing: RouteSettings | bool | None = None,
        llm: LlmClient | None = None,
        raise_on_error: bool | None = None,
        options: MemorizeOptions | None = None,
        on_progress: ProgressCallback | None = None,
        scope: dict[str, str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> MemorizeReport:
        """As :meth:`memflow.Dataset.memorize`; each document is written in one transaction
        (cancelling the call leaves the document being written out entirely). ``progress`` and
        ``on_progress`` are called from a worker thread."""
        opts = (options or MemorizeOptions()).updated(
            content_type=content_type,
            extractor=extractor,
            reference_time=reference_time,
            routing=routing,
            raise_on_error=raise_on_error,
            scope=scope,
            metadata=metadata,
        )
        ctx = await self.context()
        items = await self._cpu(
            resolve_inputs,
            source,
            content_type=opts.content_type,
            reference_time=opts.reference_time,
        )
        memorizer = await self._cpu(Memorizer, ctx, opts, llm=llm)
        try:
            report, errors = await aio.run_op(
                self.memory.engine,
                memorizer.run_op(items, progress, on_progress),
                self.memory.cpu,
            )
        finally:
            memorizer.close()
        return outcome(report, errors, opts)

    async def forget(
        self,
        *,
        document_id: uuid.UUID | str | None = None,
        episode_id: uuid.UUID | str | None = None,
    ) -> ForgetReport:
        """As :meth:`memflow.Dataset.forget`."""
        ctx = await self.context()
        op = forget_op(ctx, document_id=document_id, episode_id=episode_id)
        return await aio.run_op(self.memory.engine, op, self.memory.cpu)

    # -- facts that change (memflow.store.history) ----------------------------------------------
    async def correct(
        self, point_id: uuid.UUID | str, text: str, *, actor: str | None = None
    ) -> uuid.UUID:
        """As :meth:`memflow.Dataset.correct`."""
        pid = as_uuid(point_id)
        return await self._op(lambda c: correct_op(c, pid, text, actor=actor))

    async def history(
        self,
        node_id: uuid.UUID | str,
        *,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
    ) -> list[HistoryEntry]:
        """As :meth:`memflow.Dataset.history`."""
        nid = as_uuid(node_id)
        return await self._op(
            lambda c: history_op(c.dataset_id, nid, as_of=as_of, known_at=known_at)
        )

    async def reopen(self, point_id: uuid.UUID | str, *, actor: str | None = None) -> HistoryEntry:
        """As :meth:`memflow.Dataset.reopen`."""
        pid = as_uuid(point_id)
        return await self._op(lambda c: reopen_op(c.dataset_id, pid, actor=actor))

    async def documents(self) -> list[DocumentVersion]:
        """As :meth:`memflow.Dataset.documents`."""
        return await self._read(document_versions)

    async def export(
        self,
        fp: DumpFile,
        *,
        with_vectors: bool = False,
        progress: DumpProgressFn | None = None,
    ) -> ExportReport:
        """As :meth:`memflow.Dataset.export` (written, and ``progress`` called, in a worker
        thread)."""
        return await self._op(
            lambda c: export_op(
                c.dataset_id, self.name, fp, with_vectors=with_vectors, progress=progress
            )
        )

    # -- inspection (memflow.store.reads) --------------------------------------------------------
    async def stats(self) -> dict[str, int]:
        return await self._read(reads.dataset_stats)

    async def episodes(self, limit: int = 1000) -> list[dict[str, Any]]:
        return await self._read(lambda c, ds: reads.episode_list(c, ds, limit))

    async def procedures(
        self, *, all_versions: bool = False, limit: int = 1000
    ) -> list[dict[str, Any]]:
        """As :meth:`memflow.Dataset.procedures`."""
        return await self._read(
            lambda c, ds: reads.procedure_list(c, ds, all_versions=all_versions, limit=limit)
        )

    async def entities_of_type(
        self, label: str, *, max_distance: float = 0.12, limit: int = 100
    ) -> list[dict[str, Any]]:
        """As :meth:`memflow.Dataset.entities_of_type` (the label is embedded in the CPU pool)."""
        ctx = await self.context()
        params = await self._cpu(
            entity_type_params,
            ctx.embedder,
            ctx.dataset_id,
            label,
            max_distance=max_distance,
            limit=limit,
        )
        return await self._read(lambda c, _ds: reads.entities_of_type(c, params))

    async def chunk(self, document_id: uuid.UUID | str, key: str) -> dict[str, Any]:
        """As :meth:`memflow.Dataset.chunk`."""
        doc = as_uuid(document_id)
        return await self._read(lambda c, ds: reads.chunk(c, ds, self.name, doc, key))

    async def episode_tree(self, episode_id: uuid.UUID | str) -> list[dict[str, Any]]:
        eid = as_uuid(episode_id)
        return await self._read(lambda c, ds: reads.episode_tree(c, ds, self.name, eid))


def _respond(plan: SearchPlan, fetched: Any, config: RecallConfig | None) -> SearchResponse:
    return honour_budget(finish_search(plan, fetched), plan.budget_tokens, config)


__all__ = ["AsyncDataset", "AsyncMemory"]
