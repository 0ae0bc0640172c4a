"""The entry object: ``Memory.open()`` -> ``mem.dataset(name)`` -> add, memorize, search, forget.

Every method is one operation of the layers below (:mod:`memflow.db.steps`: a generator that
yields transactions), run here on the sync engines: reads through the read router (a replica when
one is configured), writes on the primary. :mod:`memflow.aio` runs the same operations awaited.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

from sqlalchemy import Connection, Engine

from memflow.config import ReadConsistency, ReplicaSettings
from memflow.context import FaultHook, StoreContext
from memflow.db import engine as dbe
from memflow.db.replicas import ReadRouter
from memflow.db.steps import Op, run_op, sql_tx
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
from memflow.store import reads
from memflow.store.datasets import DatasetInfo as DatasetInfo
from memflow.store.datasets import (
    DatasetRef,
    add_episodes_op,
    check_same_embedder,
    drop_dataset_op,
    import_episodes_op,
    list_datasets,
    lookup_op,
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
from memflow.store.opening import open_store, recorded_embedder, replica_engine, replica_settings
from memflow.store.reads import as_uuid as _as_uuid
from memflow.store.writer import WriteResult

if TYPE_CHECKING:
    from memflow.db.embedded import EmbeddedServer

T = TypeVar("T")
STAT_KEYS = ("episodes", "facets", "facet_points", "entities", "edges", "documents")


class Memory:
    """A memflow store: one PostgreSQL database (external or embedded) and one embedder; reads
    may be spread over streaming replicas of it (``reads``, :mod:`memflow.db.replicas`)."""

    def __init__(
        self,
        engine: Engine,
        embedder: Embedder,
        *,
        url: str,
        server: EmbeddedServer | None = None,
        reads: ReadRouter | None = None,
    ) -> None:
        self.engine = engine  # the primary: every write and schema change
        self.reads = reads or ReadRouter(engine, ReplicaSettings())
        # Every path (write, route, search) sees provider failures and malformed vectors as
        # EmbeddingError, never as a database error further down.
        self.embedder: Embedder = CheckedEmbedder(embedder)
        self.url = url
        self.server = server
        self.fault: FaultHook | None = None

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
    ) -> Memory:
        """Open a store.

        The database is ``url``, else ``MEMFLOW_DATABASE_URL``, else the embedded server under
        ``home`` / ``MEMFLOW_HOME`` (started if needed). The embedded store upgrades its schema
        itself; an external one must be upgraded with ``memflow db upgrade`` unless
        ``auto_upgrade=True``.

        ``read_replicas`` (else ``MEMFLOW_READ_REPLICA_URLS``, comma-separated) are streaming
        standbys of that database: searches and other reads go to them round-robin, writes to
        the primary. With ``consistency="read_your_writes"`` (the default) a read waits for the
        replica to replay this store's last write (else reads the primary); ``"eventual"`` does
        not wait. Pass :class:`memflow.config.ReplicaSettings` to set the timings too.
        """
        url, emb, server = open_store(url, home, embedder, auto_upgrade)
        settings = replica_settings(read_replicas, consistency)
        primary = dbe.make_engine(url, app_role=True)
        reads = ReadRouter(primary, settings, replica_engine(settings))
        return cls(primary, emb, url=url, server=server, reads=reads)

    @staticmethod
    def recorded_embedder(
        url: str | None, dataset: str, *, home: str | Path | None = None
    ) -> str | None:
        """The embedder spec dataset ``dataset`` was written with (None: no such dataset, or a
        name that does not say how to rebuild it): what the CLI uses when given none."""
        return recorded_embedder(url, dataset, home)

    def _run(self, op: Op[T]) -> T:
        """Run an operation of :mod:`memflow.db.steps`: its reads where reads go (a replica),
        its writes on the primary."""
        return run_op(self.engine, self.reads.route(op), self.reads.engines_by_url())

    # -- lifecycle ------------------------------------------------------------------------------
    def close(self) -> None:
        self.reads.close()
        self.engine.dispose()

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- datasets -------------------------------------------------------------------------------
    def dataset(self, name: str, *, create: bool = True) -> Dataset:
        """The dataset ``name``; created unless ``create=False`` (then NotFound if absent).
        Opening one that exists only reads (a replica, or a standby given as the store, serves
        it); only creating one writes, on the primary."""
        return Dataset(self, self._run(lookup_op(name, self.embedder.name, create=create)))

    def datasets(self) -> list[DatasetInfo]:
        return self._run(sql_tx(list_datasets, read=True).op())

    def search(self, query: str, **options: Unpack[MultiSearchKeywords]) -> SearchResponse:
        """One ranked list over several ``datasets`` (each result and context unit carries its
        ``dataset``); the other keywords as :meth:`Dataset.search`. The query is embedded once,
        so the datasets must share this store's embedder (else EmbedderMismatch). One read
        transaction, bound to one listed dataset at a time (:mod:`memflow.recall.multi`)."""
        return self._run(multi.search_op(self.embedder, query, SearchOptions.of(**options)))

    def import_dump(
        self,
        source: DumpFile,
        *,
        dataset: str | None = None,
        re_embed: bool = False,
        progress: DumpProgressFn | None = None,
    ) -> ImportReport:
        """Read a dump (:meth:`Dataset.export`: a path or an open file) into the new dataset
        ``dataset`` (default: the dump's own name), all or nothing. Its vectors are kept unless
        it has none or ``re_embed``: then its texts are embedded with this store's embedder
        (docs/export.md)."""
        op = import_op(self.embedder, source, dataset=dataset, re_embed=re_embed, progress=progress)
        return self._run(op)

    def drop_dataset(self, name: str, *, only_if_empty: bool = False) -> bool:
        """Delete a dataset and everything in it; returns False if it did not exist (or, with
        ``only_if_empty``, if it holds a document)."""
        return self._run(drop_dataset_op(name, only_if_empty=only_if_empty))


class Dataset:
    """One tenant of a store. Every read and write is scoped to it."""

    def __init__(self, memory: Memory, ref: DatasetRef) -> None:
        self.memory = memory
        self.ref = ref  # the embedder it records is set by its first write
        self.id, self.name = ref.id, ref.name

    def __repr__(self) -> str:
        return f"Dataset(name={self.name!r}, id={self.id})"

    def check_embedder(self) -> None:
        """Refuse to mix models: the dataset keeps the embedder it was first written with.
        Only reads; a dataset that records none yet gets this store's with its first write."""
        if self.ref.embedder is not None:
            check_same_embedder(self.name, self.ref.embedder, self.memory.embedder.name)

    @property
    def context(self) -> StoreContext:
        """What ingest, recall and store need of this dataset (the store's current fault hook)."""
        m = self.memory
        return StoreContext(m.engine, m.embedder, self.id, m.fault)

    def _run(self, op: Callable[[StoreContext], Op[T]]) -> T:
        return self.memory._run(op(self.context))

    def _read(self, fn: Callable[[Connection], T]) -> T:
        """``fn`` in one transaction bound to this dataset, on the server the store reads from."""
        return self.memory._run(sql_tx(fn, self.id, read=True).op())

    # -- structured memory in -------------------------------------------------------------------
    def add_episode(self, draft: EpisodeDraft | dict[str, Any]) -> WriteResult:
        return self.add_episodes([draft])

    def add_episodes(
        self,
        drafts: Sequence[EpisodeDraft | dict[str, Any]],
        *,
        scope: dict[str, str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> WriteResult:
        """Store structured drafts in one transaction; adding the same drafts again is a no-op.
        ``scope`` and ``metadata``: as for :meth:`memorize`."""
        return self._run(lambda c: add_episodes_op(c, self.ref, drafts, scope, metadata))

    def import_episodes(
        self,
        documents: Sequence[Sequence[EpisodeDraft | dict[str, Any]]],
        *,
        progress: Callable[[int, int], None] | None = None,
        scope: dict[str, str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> list[WriteResult]:
        """Bulk import: each inner sequence is one document (as for :meth:`add_episodes`), all
        written in one transaction with the vector indexes rebuilt and the foreign keys checked
        once at the end -- all documents or none.

        Several times faster than :meth:`add_episodes` per document for initial loads, but other
        sessions wait until it commits and the index rebuild covers the whole store: use it when
        the batch is large next to what is stored. Needs the login role that owns the schema."""
        op = import_episodes_op
        return self._run(lambda c: op(c, self.ref, documents, progress, scope, metadata))

    # -- search ---------------------------------------------------------------------------------
    def search(self, query: str, **options: Unpack[SearchKeywords]) -> SearchResponse:
        """Episodes whose evidence chain is cheapest (``mode="episodic"``), or the ``vector`` /
        ``lexical`` baselines, or procedures (``"procedural"``). No LLM is called. The options
        and their defaults are :class:`memflow.SearchOptions` (10 episodic results, ``summary``
        display; ``budget_tokens`` applies to ``highly_related`` only unless given; ``config``:
        the recall constants, default ``RecallConfig()``). ``now`` anchors relative dates in
        the query.

        ``as_of``: what held at that time, as far as it had been learned by then. Facts replaced
        since rank below current ones and are shown with their validity; ``include_history``
        also shows what each current fact replaced. The ``vector`` and ``lexical`` modes honour
        both without reranking; ``procedural`` raises InvalidInput.

        ``scope`` (e.g. ``{"user": "u1"}``) and ``where`` (a metadata filter, see
        :mod:`memflow.db.filters`): only what documents of that scope and metadata support."""
        opts, name = SearchOptions.of(**options), [self.name]
        return self._run(lambda c: multi.traced(search_op(c, self.ref, query, opts), name, opts))

    # -- memorize and forget (memflow.ingest, memflow.store.forget) -----------------------------
    def memorize(
        self, source: Source | Sequence[Source], **options: Unpack[MemorizeKeywords]
    ) -> MemorizeReport:
        """Memorise files, directories, stdin ("-"), text, bytes or ParsedDocuments.

        Keywords left as None come from ``options`` (default ``MemorizeOptions()``, which
        documents them). See :mod:`memflow.ingest.inputs` for what ``source`` may be and
        :mod:`memflow.ingest.memorize` for when it raises. ``progress`` hears of each finished
        document; ``on_progress`` receives :class:`~memflow.ingest.progress.ProgressEvent`s
        (documents, embedding batches, writes, with counts and an ETA). ``scope`` ({"user",
        "agent", "session"}, any subset) and ``metadata`` (a JSON object) are stored on each
        document for ``search(scope=, where=)``."""
        return self._run(lambda c: memorize_op(c, self.ref, source, options))

    def forget(
        self,
        *,
        document_id: uuid.UUID | str | None = None,
        episode_id: uuid.UUID | str | None = None,
    ) -> ForgetReport:
        """Remove a document and what only it supported, or one episode with its facets."""
        return self._run(lambda c: forget_op(c, document_id=document_id, episode_id=episode_id))

    # -- facts that change (memflow.store.history) ----------------------------------------------
    def correct(
        self, point_id: uuid.UUID | str, text: str, *, actor: str | None = None
    ) -> uuid.UUID:
        """Write ``text`` as the new version of FacetPoint ``point_id`` and close the old one
        (logged with ``actor``, default the database login role). Returns the new point's id."""
        self.check_embedder()
        return self._run(lambda c: correct_op(c, _as_uuid(point_id), text, actor=actor))

    def history(
        self,
        node_id: uuid.UUID | str,
        *,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
    ) -> list[HistoryEntry]:
        """Every version of the fact ``node_id`` belongs to, oldest first, with its times, what
        closed each and why (document, rule, similarity, model, correction, with a score), and
        its logged changes (closures, reopenings). With ``as_of`` (the sources' dates) or
        ``known_at`` (the store's write clock): the versions as they stood then."""
        clocks = {"as_of": as_of, "known_at": known_at}
        return self._run(lambda c: history_op(c.dataset_id, _as_uuid(node_id), **clocks))

    def reopen(self, point_id: uuid.UUID | str, *, actor: str | None = None) -> HistoryEntry:
        """Undo a wrong closure: the closed fact ``point_id`` holds again (what replaced it stays
        current too); logged as ``reopen`` with ``actor`` in its history."""
        return self._run(lambda c: reopen_op(c.dataset_id, _as_uuid(point_id), actor=actor))

    def documents(self) -> list[DocumentVersion]:
        """The documents of the dataset: id, source, version, status (current | replaced)."""
        return self._read(lambda c: document_versions(c, self.id))

    def export(
        self,
        fp: DumpFile,
        *,
        with_vectors: bool = False,
        progress: DumpProgressFn | None = None,
    ) -> ExportReport:
        """Write the whole dataset to ``fp`` (a path or an open file) as a dump, one consistent
        snapshot, streamed (docs/export.md); :meth:`Memory.import_dump` reads it back."""
        op = partial(export_op, sink=fp, with_vectors=with_vectors, progress=progress)
        return self._run(lambda c: op(c.dataset_id, self.name))

    # -- inspection ------------------------------------------------------------------------------
    def stats(self) -> dict[str, int]:
        return self._read(lambda c: reads.dataset_stats(c, self.id))

    def episodes(self, limit: int = 1000) -> list[dict[str, Any]]:
        return self._read(lambda c: reads.episode_list(c, self.id, limit))

    def procedures(self, *, all_versions: bool = False, limit: int = 1000) -> list[dict[str, Any]]:
        """The dataset's procedures (current ones, or every version): ``id``, ``name``,
        ``summary``, ``status``, ``version``, ``steps`` (in order), ``context``, ``episode_id``,
        ``superseded_by``, ``created_at``."""
        return self._read(
            lambda c: reads.procedure_list(c, self.id, all_versions=all_versions, limit=limit)
        )

    def entities_of_type(
        self, label: str, *, max_distance: float = 0.12, limit: int = 100
    ) -> list[dict[str, Any]]:
        """Entities whose type (EntityType, linked by is_a) is ``label`` or embeds within
        ``max_distance`` of it ("customers", "客户" find entities typed customer): ``id``,
        ``name``, ``entity_type``, ``description``, ``type``, ``distance``."""
        md = max_distance
        return self._run(lambda c: entities_of_type_op(c, label, max_distance=md, limit=limit))

    def chunk(self, document_id: uuid.UUID | str, key: str) -> dict[str, Any]:
        """The message or section ``key`` of document ``document_id``: what a search's
        ``Citation`` points at (``document_id``, ``source``, ``key``, ``idx``, ``text``,
        ``speaker``, ``ts``)."""
        doc = _as_uuid(document_id)
        return self._read(lambda c: reads.chunk(c, self.id, self.name, doc, key))

    def episode_tree(self, episode_id: uuid.UUID | str) -> list[dict[str, Any]]:
        eid = _as_uuid(episode_id)
        return self._read(lambda c: reads.episode_tree(c, self.id, self.name, eid))
