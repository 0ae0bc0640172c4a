"""The async twin of :mod:`memflow.memory`: ``AsyncMemory.open()`` -> ``mem.dataset(name)`` ->
``await`` memorize, search, forget, add_episode.

Same arguments, same results, same errors as :class:`~memflow.memory.Memory`: each method runs
the same operation (:mod:`memflow.db.steps`), awaited. SQL runs on SQLAlchemy's async engine
(psycopg's async driver, :mod:`memflow.db.aio`), embedding and scoring in a bounded pool of worker
threads, so many searches share one event loop and none blocks it. Reads go through the same read
router (:mod:`memflow.db.replicas`), to async engines of the replicas.

Every public method of ``Memory`` and ``Dataset`` has its twin here, with the same parameters,
awaited (``tests/unit/test_async_parity.py`` keeps it so). The exceptions: ``aclose()`` for
``close()``; ``AsyncMemory.open`` also takes ``cpu_workers``; ``AsyncDataset.context()`` is
awaited where ``Dataset.context`` is a property; an ``AsyncDataset`` is looked up (created unless
``create=False``) by its first awaited call, so its ``id`` is known only after one.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Generator, Sequence
from datetime import datetime
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from memflow.config import ReadConsistency, ReplicaSettings
from memflow.context import FaultHook, StoreContext
from memflow.db import aio
from memflow.db.replicas import ReadRouter
from memflow.db.steps import Op, sql_tx
from memflow.drafts import EpisodeDraft
from memflow.embed.base import CheckedEmbedder, Embedder
from memflow.ingest.entity_types import entities_of_type_op
from memflow.ingest.inputs import Source
from memflow.ingest.pipeline import MemorizeKeywords, memorize_op
from memflow.ingest.report import MemorizeReport
from memflow.recall import multi
from memflow.recall.options import MultiSearchKeywords, SearchKeywords, SearchOptions
from memflow.recall.search import search_op
from memflow.recall.types import SearchResponse
from memflow.store import history as store_history
from memflow.store import reads
from memflow.store.datasets import (
    DatasetInfo,
    DatasetRef,
    add_episodes_op,
    check_same_embedder,
    drop_dataset_op,
    import_episodes_op,
    list_datasets,
    lookup_op,
    validate_dataset_name,
)
from memflow.store.dump import DumpFile, DumpProgressFn, ExportReport, ImportReport
from memflow.store.export import export_op
from memflow.store.forget import ForgetReport, forget_op
from memflow.store.history import DocumentVersion, HistoryEntry
from memflow.store.imports import import_op
from memflow.store.opening import open_store, recorded_embedder, replica_engine, replica_settings
from memflow.store.reads import as_uuid
from memflow.store.writer import WriteResult

if TYPE_CHECKING:
    from memflow.db.embedded import EmbeddedServer

T = TypeVar("T")
_NOT_OPEN = "the store is not open: `await AsyncMemory.open(...)` or `async with`"


class AsyncMemory:
    """A memflow store for asyncio code: one PostgreSQL database and one embedder; reads may be
    spread over streaming replicas of it, as :class:`memflow.Memory`'s.

    ``async with AsyncMemory.open(...) as mem:``, or ``mem = await AsyncMemory.open(...)``
    then ``await mem.aclose()``."""

    def __init__(self, open_args: tuple[Any, ...], cpu_workers: int | None = None) -> None:
        self._args = open_args
        self._engine: AsyncEngine | None = None
        self._embedder: Embedder | None = None
        self._replicas: dict[str, AsyncEngine] = {}
        self.reads: ReadRouter | None = None
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
        read_replicas: Sequence[str] | ReplicaSettings | None = None,
        consistency: ReadConsistency | None = None,
        cpu_workers: int | None = None,
    ) -> AsyncMemory:
        """A store to open by awaiting it or entering it (``async with``), with the database,
        embedder and replica rules of :meth:`memflow.Memory.open`.

        Starting the embedded server and checking (upgrading) the schema happen once, in a
        worker thread; every call after that runs on the async engines."""
        return cls((url, home, embedder, auto_upgrade, read_replicas, consistency), cpu_workers)

    async def start(self) -> AsyncMemory:
        """Open the store (what awaiting or entering it does); once."""
        if self._engine is None:
            url, home, embedder, auto_upgrade, read_replicas, consistency = self._args
            url, emb, server = await asyncio.to_thread(
                open_store, url, home, embedder, auto_upgrade
            )
            settings = replica_settings(read_replicas, consistency)
            self._embedder = CheckedEmbedder(emb)
            self.url, self.server = url, server
            self._engine = aio.make_async_engine(url, app_role=True)
            # The router polls each replica through a sync engine of its own (in the CPU pool's
            # threads); the reads it sends there run on that replica's async engine.
            self.reads = ReadRouter(self._engine.sync_engine, settings, replica_engine(settings))
            self._replicas = {
                u: aio.make_async_engine(
                    u,
                    app_role=True,
                    connect_timeout=settings.connect_timeout_s,
                    application_name="memflow-replica",
                )
                for u in settings.urls
            }
        return self

    @property
    def engine(self) -> AsyncEngine:
        if self._engine is None:
            raise RuntimeError(_NOT_OPEN)
        return self._engine

    @property
    def embedder(self) -> Embedder:
        """The embedder; provider failures and malformed vectors raise EmbeddingError."""
        if self._embedder is None:
            raise RuntimeError(_NOT_OPEN)
        return self._embedder

    async def _run(self, op: Op[T]) -> T:
        """Run an operation of :mod:`memflow.db.steps`, as :meth:`memflow.Memory.run` does."""
        if self.reads is None:
            raise RuntimeError(_NOT_OPEN)
        return await aio.run_op(self.engine, self.reads.route(op), self.cpu, self._replicas)

    def __await__(self) -> Generator[Any, None, AsyncMemory]:
        return self.start().__await__()

    async def aclose(self) -> None:
        for engine in (self._engine, *self._replicas.values()):
            if engine is not None:
                await engine.dispose()
        if self.reads is not None:
            self.reads.close()
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

    # -- datasets -------------------------------------------------------------------------------
    def dataset(self, name: str, *, create: bool = True) -> AsyncDataset:
        """The dataset ``name``. It is looked up (created unless ``create=False``, else
        NotFound) by the first call awaited on it."""
        return AsyncDataset(self, validate_dataset_name(name), create=create)

    async def datasets(self) -> list[DatasetInfo]:
        return await self._run(sql_tx(list_datasets, read=True).op())

    async def search(self, query: str, **options: Unpack[MultiSearchKeywords]) -> SearchResponse:
        """As :meth:`memflow.Memory.search`: one ranked list over several datasets."""
        return await self._run(multi.search_op(self.embedder, query, SearchOptions.of(**options)))

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
        return await self._run(op)

    async def drop_dataset(self, name: str, *, only_if_empty: bool = False) -> bool:
        """As :meth:`memflow.Memory.drop_dataset`. ``AsyncDataset`` objects of it still held
        fail on their next call."""
        return await self._run(drop_dataset_op(name, only_if_empty=only_if_empty))

    @staticmethod
    async def recorded_embedder(
        url: str | None, dataset: str, *, home: str | Path | None = None
    ) -> str | None:
        """As :meth:`memflow.Memory.recorded_embedder` (a one-off lookup before a store is
        opened, in a thread)."""
        return await asyncio.to_thread(recorded_embedder, url, dataset, home)


class AsyncDataset:
    """One tenant of an :class:`AsyncMemory`. Every read and write is scoped to it."""

    def __init__(self, memory: AsyncMemory, name: str, *, create: bool = True) -> None:
        self.memory = memory
        self.name = name
        self.create = create
        self.ref: DatasetRef | None = None
        self._lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"AsyncDataset(name={self.name!r}, id={self.ref and self.ref.id})"

    @property
    def id(self) -> uuid.UUID:
        """The dataset's id (known once a call on it was awaited)."""
        return self._ref.id

    @property
    def _ref(self) -> DatasetRef:
        if self.ref is None:
            raise RuntimeError(
                f"dataset {self.name!r} is looked up by the first call awaited on it"
            )
        return self.ref

    async def context(self) -> StoreContext:
        """What ingest, recall and store need of this dataset; looks it up (creates it) on first
        use, as :meth:`memflow.Memory.dataset` does. Its engine is the async engine's sync
        facade: run work with it through :mod:`memflow.db.aio` only."""
        if self.ref is None:
            async with self._lock:
                if self.ref is None:
                    m = self.memory
                    self.ref = await m._run(
                        lookup_op(self.name, m.embedder.name, create=self.create)
                    )
        m = self.memory
        return StoreContext(m.engine.sync_engine, m.embedder, self.id, m.fault)

    async def check_embedder(self) -> None:
        """As :meth:`memflow.Dataset.check_embedder` (EmbedderMismatch); it is also the first
        lookup of the dataset (which creates it unless ``create=False``)."""
        await self.context()
        if self._ref.embedder is not None:
            check_same_embedder(self.name, self._ref.embedder, self.memory.embedder.name)

    async def _run(self, op: Callable[[StoreContext], Op[T]]) -> T:
        return await self.memory._run(op(await self.context()))

    async def _read(self, fn: Callable[[Connection], T]) -> T:
        """``fn`` in one transaction bound to this dataset, on the server the store reads from."""
        return await self._run(lambda c: sql_tx(fn, c.dataset_id, read=True).op())

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
        """As :meth:`memflow.Dataset.add_episodes`."""
        return await self._run(lambda c: add_episodes_op(c, self._ref, drafts, scope, metadata))

    async def import_episodes(
        self,
        documents: Sequence[Sequence[EpisodeDraft | dict[str, Any]]],
        *,
        progress: Callable[[int, int], None] | None = None,
        scope: dict[str, str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> list[WriteResult]:
        """As :meth:`memflow.Dataset.import_episodes`: all documents in one transaction, or none
        (``progress`` is called from a worker thread, inside that transaction)."""
        op = import_episodes_op
        return await self._run(lambda c: op(c, self._ref, documents, progress, scope, metadata))

    # -- search ---------------------------------------------------------------------------------
    async def search(self, query: str, **options: Unpack[SearchKeywords]) -> SearchResponse:
        """As :meth:`memflow.Dataset.search`."""
        opts, name = SearchOptions.of(**options), [self.name]
        return await self._run(
            lambda c: multi.traced(search_op(c, self._ref, query, opts), name, opts)
        )

    # -- memorize and forget --------------------------------------------------------------------
    async def memorize(
        self, source: Source | Sequence[Source], **options: Unpack[MemorizeKeywords]
    ) -> MemorizeReport:
        """As :meth:`memflow.Dataset.memorize`; each document is written in one transaction
        (cancelling the call leaves the document being written out entirely). ``progress`` and
        ``on_progress`` are called from a worker thread."""
        return await self._run(lambda c: memorize_op(c, self._ref, source, options))

    async def forget(
        self,
        *,
        document_id: uuid.UUID | str | None = None,
        episode_id: uuid.UUID | str | None = None,
    ) -> ForgetReport:
        """As :meth:`memflow.Dataset.forget`."""
        return await self._run(
            lambda c: forget_op(c, document_id=document_id, episode_id=episode_id)
        )

    # -- facts that change (memflow.store.history) ----------------------------------------------
    async def correct(
        self, point_id: uuid.UUID | str, text: str, *, actor: str | None = None
    ) -> uuid.UUID:
        """As :meth:`memflow.Dataset.correct`."""
        await self.check_embedder()
        return await self._run(
            lambda c: store_history.correct_op(c, as_uuid(point_id), text, actor=actor)
        )

    async def history(
        self,
        node_id: uuid.UUID | str,
        *,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
    ) -> list[HistoryEntry]:
        """As :meth:`memflow.Dataset.history`."""
        clocks = {"as_of": as_of, "known_at": known_at}
        return await self._run(
            lambda c: store_history.history_op(c.dataset_id, as_uuid(node_id), **clocks)
        )

    async def reopen(self, point_id: uuid.UUID | str, *, actor: str | None = None) -> HistoryEntry:
        """As :meth:`memflow.Dataset.reopen`."""
        return await self._run(
            lambda c: store_history.reopen_op(c.dataset_id, as_uuid(point_id), actor=actor)
        )

    async def documents(self) -> list[DocumentVersion]:
        """As :meth:`memflow.Dataset.documents`."""
        return await self._read(lambda c: store_history.document_versions(c, self.id))

    async def export(
        self,
        fp: DumpFile,
        *,
        with_vectors: bool = False,
        progress: DumpProgressFn | None = None,
    ) -> ExportReport:
        """As :meth:`memflow.Dataset.export` (written, and ``progress`` called, in a worker
        thread)."""
        op = partial(export_op, sink=fp, with_vectors=with_vectors, progress=progress)
        return await self._run(lambda c: op(c.dataset_id, self.name))

    # -- inspection (memflow.store.reads) --------------------------------------------------------
    async def stats(self) -> dict[str, int]:
        return await self._read(lambda c: reads.dataset_stats(c, self.id))

    async def episodes(self, limit: int = 1000) -> list[dict[str, Any]]:
        return await self._read(lambda c: reads.episode_list(c, self.id, limit))

    async def procedures(
        self, *, all_versions: bool = False, limit: int = 1000
    ) -> list[dict[str, Any]]:
        """As :meth:`memflow.Dataset.procedures`."""
        return await self._read(
            lambda c: reads.procedure_list(c, self.id, all_versions=all_versions, limit=limit)
        )

    async def entities_of_type(
        self, label: str, *, max_distance: float = 0.12, limit: int = 100
    ) -> list[dict[str, Any]]:
        """As :meth:`memflow.Dataset.entities_of_type` (the label is embedded in the CPU pool)."""
        md = max_distance
        return await self._run(
            lambda c: entities_of_type_op(c, label, max_distance=md, limit=limit)
        )

    async def chunk(self, document_id: uuid.UUID | str, key: str) -> dict[str, Any]:
        """As :meth:`memflow.Dataset.chunk`."""
        doc = as_uuid(document_id)
        return await self._read(lambda c: reads.chunk(c, self.id, self.name, doc, key))

    async def episode_tree(self, episode_id: uuid.UUID | str) -> list[dict[str, Any]]:
        eid = as_uuid(episode_id)
        return await self._read(lambda c: reads.episode_tree(c, self.id, self.name, eid))


__all__ = ["AsyncDataset", "AsyncMemory"]
