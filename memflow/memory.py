"""The entry object: ``Memory.open()`` -> ``mem.dataset(name)`` -> add, memorize, search, forget."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Connection, Engine

from memflow import config as mfconfig
from memflow.config import ReadConsistency, ReplicaSettings
from memflow.context import FaultHook, StoreContext
from memflow.db import engine as dbe
from memflow.db.queries import q
from memflow.db.replicas import ReadRouter
from memflow.db.steps import run_op, run_tx
from memflow.drafts import EpisodeDraft
from memflow.embed.base import CheckedEmbedder, Embedder
from memflow.errors import (
    DatabaseError,
    MemflowError,
    NotFound,
)
from memflow.ingest.entity_types import entity_type_params
from memflow.ingest.options import ExtractorChoice, MemorizeOptions
from memflow.ingest.pipeline import ProgressFn, Source, memorize
from memflow.ingest.progress import ProgressCallback
from memflow.ingest.report import MemorizeReport
from memflow.ingest.route import RouteSettings
from memflow.recall import multi
from memflow.recall.budget import honour_budget
from memflow.recall.config import DisplayMode, RecallConfig, SearchMode
from memflow.recall.search import plan_search, search
from memflow.recall.types import SearchResponse
from memflow.store import reads
from memflow.store.datasets import DatasetInfo as DatasetInfo
from memflow.store.datasets import (
    check_same_embedder,
    create_dataset,
    dataset_infos,
    dataset_row,
    draft_document,
    draft_documents,
    drop_dataset_op,
    validate_dataset_name,
    write_drafts_op,
)
from memflow.store.dump import DumpFile, DumpProgressFn, ExportReport, ImportReport
from memflow.store.export import export_op
from memflow.store.forget import ForgetReport, forget
from memflow.store.history import DocumentVersion, HistoryEntry, correct, documents, history, reopen
from memflow.store.imports import import_op
from memflow.store.opening import locate, open_store
from memflow.store.reads import as_uuid as _as_uuid
from memflow.store.writer import Writer, WriteResult

if TYPE_CHECKING:
    from memflow.db.embedded import EmbeddedServer
    from memflow.llm.client import LlmClient

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
        database_url: str | None = None,
        *,
        home: str | Path | None = None,
        embedder: Embedder | str | None = None,
        auto_upgrade: bool | None = None,
        read_replicas: Sequence[str] | ReplicaSettings | None = None,
        consistency: ReadConsistency | None = None,
    ) -> Memory:
        """Open a store.

        The database is ``database_url``, else ``MEMFLOW_DATABASE_URL``, else the embedded server
        under ``home`` / ``MEMFLOW_HOME`` (started if needed). The embedded store upgrades its
        schema itself; an external one must be upgraded with ``memflow db upgrade`` unless
        ``auto_upgrade=True``.

        ``read_replicas`` (else ``MEMFLOW_READ_REPLICA_URLS``, comma-separated) are streaming
        standbys of that database: searches and other reads go to them round-robin, writes to
        the primary. With ``consistency="read_your_writes"`` (the default) a read waits for the
        replica to replay this store's last write (else reads the primary); ``"eventual"`` does
        not wait. Pass :class:`memflow.config.ReplicaSettings` to set the timings too.
        """
        url, emb, server = open_store(database_url, home, embedder, auto_upgrade)
        if isinstance(read_replicas, ReplicaSettings):
            settings = read_replicas
        else:
            settings = mfconfig.replica_settings(read_replicas, consistency)
        primary = dbe.make_engine(url, app_role=True)
        for replica in settings.urls:
            dbe.check_url(replica)
        reads = ReadRouter(
            primary,
            settings,
            lambda u: dbe.make_engine(
                u,
                app_role=True,
                connect_timeout=settings.connect_timeout_s,
                application_name="memflow-replica",
            ),
        )
        return cls(primary, emb, url=url, server=server, reads=reads)

    @staticmethod
    def recorded_embedder(
        database_url: str | None, dataset: str, *, home: str | Path | None = None
    ) -> str | None:
        """The embedder spec dataset ``dataset`` was written with (None: no such dataset, or a
        name that does not say how to rebuild it): what the CLI uses when given none."""
        from memflow.embed.factory import spec_for_name

        url, _ = locate(database_url, home)
        engine = dbe.make_engine(url, pool_size=1)
        try:
            with dbe.transaction(engine) as conn:
                dbe.check_schema_current(conn)
                row = conn.execute(q("dataset_get"), {"name": dataset}).first()
        except DatabaseError:
            return None  # no store yet, or behind: opening it says what to do
        finally:
            engine.dispose()
        return spec_for_name(row.embedder) if row is not None else None

    # -- lifecycle ------------------------------------------------------------------------------
    def close(self) -> None:
        self.reads.close()
        self.engine.dispose()

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Around every write: afterwards later reads wait for replicas to replay it. After a
        failure part way (which may have committed some transactions) too, unless the primary
        cannot say where its WAL ends: then the write's own error is the one raised."""
        try:
            yield
        except BaseException:
            with suppress(MemflowError):
                self.reads.note_write()
            raise
        self.reads.note_write()

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
        validate_dataset_name(name)
        row = self.reads.run(lambda engine: dataset_row(engine, name))
        if row is None:  # perhaps made by another process that a replica has not replayed yet
            row = dataset_row(self.engine, name)
        if row is None:
            if not create:
                raise NotFound(f"no dataset named {name!r}: list them with `memflow datasets`")
            with self._writing(), dbe.transaction(self.engine) as conn:
                create_dataset(conn, name, self.embedder.name)
                row = conn.execute(q("dataset_get"), {"name": name}).first()
        if row is None:  # pragma: no cover - created above
            raise DatabaseError(f"dataset {name!r} could not be created")
        return Dataset(self, row.id, row.name, embedder_name=row.embedder)

    def datasets(self) -> list[DatasetInfo]:
        return self.reads.run(dataset_infos)

    def search(
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
        """One ranked list over several ``datasets`` (each result and context unit carries its
        ``dataset``); the other keywords as :meth:`Dataset.search`. The query is embedded once,
        so the datasets must share this store's embedder (else EmbedderMismatch). One read
        transaction, bound to one listed dataset at a time (:mod:`memflow.recall.multi`)."""
        names = multi.dataset_names(datasets)
        found = [self.dataset(name, create=False) for name in names]
        multi.check_one_embedder([(d.name, d._embedder_name) for d in found], self.embedder.name)
        targets = [multi.Target(d.name, d.id) for d in found]
        plan = plan_search(
            self.embedder, query, top_k=top_k, mode=mode, display=display,
            budget_tokens=budget_tokens, now=now, config=config, as_of=as_of,
            include_history=include_history, scope=scope, where=where, known_at=known_at,
        )  # fmt: skip
        fetched = self.reads.run(lambda engine: run_tx(engine, multi.fetch_tx(targets, plan)))
        return multi.finish(targets, plan, fetched, config)

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
        with self._writing():
            return run_op(self.engine, op)

    def drop_dataset(self, name: str, *, only_if_empty: bool = False) -> bool:
        """Delete a dataset and everything in it; returns False if it did not exist (or, with
        ``only_if_empty``, if it holds a document)."""
        with self._writing():
            return run_op(self.engine, drop_dataset_op(name, only_if_empty=only_if_empty))


class Dataset:
    """One tenant of a store. Every read and write is scoped to it."""

    def __init__(
        self, memory: Memory, id: uuid.UUID, name: str, *, embedder_name: str | None = None
    ) -> None:
        self.memory = memory
        self.id = id
        self.name = name
        self._embedder_name = embedder_name

    def check_embedder(self) -> None:
        """Refuse to mix models: the dataset keeps the embedder it was first written with.
        Only reads; a dataset that records none yet gets this store's with its first write."""
        mine = self.memory.embedder.name
        if self._embedder_name is not None:
            check_same_embedder(self.name, self._embedder_name, mine)

    def __repr__(self) -> str:
        return f"Dataset(name={self.name!r}, id={self.id})"

    def _claim_embedder(self) -> None:
        """Before a write: check the embedder, and record it if the dataset has none yet."""
        self.check_embedder()
        if self._embedder_name is None:
            mine = self.memory.embedder.name
            with self.memory._writing(), dbe.transaction(self.memory.engine, self.id) as conn:
                conn.execute(q("dataset_set_embedder"), {"dataset_id": self.id, "embedder": mine})
            self._embedder_name = mine

    @property
    def context(self) -> StoreContext:
        """What ingest, recall and store need of this dataset (the store's current fault hook):
        the primary, where writes go."""
        return self._context(self.memory.engine)

    def _context(self, engine: Engine) -> StoreContext:
        m = self.memory
        return StoreContext(engine, m.embedder, self.id, m.fault)

    def _read(self, fn: Callable[[Connection], T]) -> T:
        """``fn`` in one transaction bound to this dataset, on the server the store reads from."""

        def run(engine: Engine) -> T:
            with dbe.transaction(engine, self.id) as conn:
                return fn(conn)

        return self.memory.reads.run(run)

    def _writer(self) -> Writer:
        return Writer(self.memory.engine, self.memory.embedder, fault=self.memory.fault)

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
        self._claim_embedder()
        doc, plan = draft_document(self.id, drafts, scope, metadata)
        with self.memory._writing():
            return run_op(self.memory.engine, write_drafts_op(self.context, doc, plan))

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
        items = draft_documents(self.id, documents, scope, metadata)
        self._claim_embedder()
        with self.memory._writing():
            return self._writer().write_bulk(self.id, items, progress)

    # -- search ---------------------------------------------------------------------------------
    def search(
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
        """Episodes whose evidence chain is cheapest (``mode="episodic"``), or the ``vector`` /
        ``lexical`` baselines. No LLM is called. ``now`` anchors relative dates in the query.

        ``top_k``, ``mode``, ``display`` and ``budget_tokens`` left as None come from ``config``
        (default ``RecallConfig()``: 10 episodic results, ``summary`` display; ``budget_tokens``
        applies to ``highly_related`` only unless given).

        Two clocks. ``as_of``: what was true at that time by the sources' own dates (a
        message's time; a note's heading, front matter, e-mail ``Date:``, title or file name
        date; else its reference time). ``known_at``: what the store knew at that time (when
        each row was written). Facts replaced by then rank below current ones and are shown
        with their validity; ``include_history`` also shows what each current fact replaced.
        The ``vector`` and ``lexical`` modes honour all three without reranking;
        ``procedural`` raises InvalidInput.

        ``scope`` (e.g. ``{"user": "u1"}``) and ``where`` (a metadata filter, see
        :mod:`memflow.db.filters`): only what documents of that scope and metadata support."""
        self.check_embedder()
        resp = self.memory.reads.run(
            lambda engine: search(
                self._context(engine),
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
        )
        return honour_budget(resp, budget_tokens, config)

    # -- memorize and forget (memflow.ingest.pipeline, memflow.store.forget) --------------------
    def memorize(
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
        """Memorise files, directories, stdin ("-"), text, bytes or ParsedDocuments.

        Keywords left as None come from ``options`` (default ``MemorizeOptions()``, which
        documents them). See :mod:`memflow.ingest.pipeline` for what ``source`` may be and when
        it raises. ``progress`` hears of each finished document; ``on_progress`` receives
        :class:`~memflow.ingest.progress.ProgressEvent`s (documents, embedding batches, writes,
        with counts and an ETA). ``scope`` ({"user", "agent", "session"}, any subset) and
        ``metadata`` (a JSON object) are stored on each document for ``search(scope=, where=)``.
        """
        opts = (options or MemorizeOptions()).updated(
            content_type=content_type,
            extractor=extractor,
            reference_time=reference_time,
            routing=routing,
            raise_on_error=raise_on_error,
            scope=scope,
            metadata=metadata,
        )
        self._claim_embedder()
        with self.memory._writing():
            return memorize(
                self.context, source, opts, progress=progress, on_progress=on_progress, llm=llm
            )

    def forget(
        self,
        *,
        document_id: uuid.UUID | str | None = None,
        episode_id: uuid.UUID | str | None = None,
    ) -> ForgetReport:
        """Remove a document and what only it supported, or one episode with its facets."""
        with self.memory._writing():
            return forget(self.context, document_id=document_id, episode_id=episode_id)

    # -- facts that change (memflow.store.history) ----------------------------------------------
    def correct(
        self, point_id: uuid.UUID | str, text: str, *, actor: str | None = None
    ) -> uuid.UUID:
        """Write ``text`` as the new version of FacetPoint ``point_id`` and close the old one
        (logged with ``actor``, default the database login role). Returns the new point's id."""
        self.check_embedder()
        with self.memory._writing():
            return correct(self.context, _as_uuid(point_id), text, actor=actor)

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
        return history(self.context, _as_uuid(node_id), as_of=as_of, known_at=known_at)

    def reopen(self, point_id: uuid.UUID | str, *, actor: str | None = None) -> HistoryEntry:
        """Undo a wrong closure: the closed fact ``point_id`` holds again (what replaced it stays
        current too); logged as ``reopen`` with ``actor`` in its history."""
        with self.memory._writing():
            return reopen(self.context, _as_uuid(point_id), actor=actor)

    def documents(self) -> list[DocumentVersion]:
        """The documents of the dataset: id, source, version, status (current | replaced)."""
        return documents(self.context)

    def export(
        self,
        fp: DumpFile,
        *,
        with_vectors: bool = False,
        progress: DumpProgressFn | None = None,
    ) -> ExportReport:
        """Write the whole dataset to ``fp`` (a path or an open file) as a dump, one consistent
        snapshot, streamed (docs/export.md); :meth:`Memory.import_dump` reads it back."""
        op = export_op(self.id, self.name, fp, with_vectors=with_vectors, progress=progress)
        return run_op(self.memory.engine, op)

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
        params = entity_type_params(
            self.memory.embedder, self.id, label, max_distance=max_distance, limit=limit
        )
        return self._read(lambda c: reads.entities_of_type(c, params))

    def chunk(self, document_id: uuid.UUID | str, key: str) -> dict[str, Any]:
        """The message or section ``key`` of document ``document_id``: what a search's
        ``Citation`` points at (``document_id``, ``source``, ``key``, ``idx``, ``text``,
        ``speaker``, ``ts``)."""
        doc = _as_uuid(document_id)
        return self._read(lambda c: reads.chunk(c, self.id, self.name, doc, key))

    def episode_tree(self, episode_id: uuid.UUID | str) -> list[dict[str, Any]]:
        eid = _as_uuid(episode_id)
        return self._read(lambda c: reads.episode_tree(c, self.id, self.name, eid))
