"""The entry object: ``Memory.open()`` -> ``mem.dataset(name)`` -> add, memorize, search, forget."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine

from memflow import config as mfconfig
from memflow.context import FaultHook, StoreContext
from memflow.db import engine as dbe
from memflow.db.queries import q
from memflow.drafts import EpisodeDraft
from memflow.embed.base import CheckedEmbedder, Embedder
from memflow.errors import DatabaseError, EmbedderMismatch, InvalidInput, NotFound
from memflow.ids import content_hash
from memflow.ingest.options import ExtractorChoice, MemorizeOptions
from memflow.ingest.pipeline import ProgressFn, Source, memorize
from memflow.ingest.progress import ProgressCallback
from memflow.ingest.report import MemorizeReport
from memflow.ingest.route import RouteSettings
from memflow.recall.budget import honour_budget
from memflow.recall.config import DisplayMode, RecallConfig, SearchMode
from memflow.recall.search import search
from memflow.recall.types import SearchResponse
from memflow.store.forget import ForgetReport, forget
from memflow.store.history import DocumentVersion, HistoryEntry, correct, documents, history
from memflow.store.plan import WritePlan, plan_drafts
from memflow.store.writer import DocumentInfo, Writer, WriteResult, document_id

if TYPE_CHECKING:
    from memflow.db.embedded import EmbeddedServer
    from memflow.llm.client import LlmClient

_DATASET_NS = uuid.UUID("2b0f3a4e-8d1c-4f57-9a55-6d656d666c6f")
STAT_KEYS = ("episodes", "facets", "facet_points", "entities", "edges", "documents")


def dataset_uuid(name: str) -> uuid.UUID:
    return uuid.uuid5(_DATASET_NS, name)


def validate_dataset_name(name: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput("dataset name is empty: pass a non-empty name such as --dataset notes")
    if "\x00" in name:
        raise InvalidInput("dataset name contains a NUL character: remove it")
    if len(name) > 200:
        raise InvalidInput(f"dataset name is {len(name)} characters long: use at most 200")
    return name


@dataclass(frozen=True)
class DatasetInfo:
    id: uuid.UUID
    name: str
    created_at: datetime
    episodes: int
    documents: int
    embedder: str | None = None  # the embedder its vectors come from (None: nothing written)


class Memory:
    """A memflow store: one PostgreSQL database (external or embedded) and one embedder."""

    def __init__(
        self, engine: Engine, embedder: Embedder, *, url: str, server: EmbeddedServer | None = None
    ) -> None:
        self.engine = engine
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
    ) -> Memory:
        """Open a store.

        The database is ``database_url``, else ``MEMFLOW_DATABASE_URL``, else the embedded server
        under ``home`` / ``MEMFLOW_HOME`` (started if needed). The embedded store upgrades its
        schema itself; an external one must be upgraded with ``memflow db upgrade`` unless
        ``auto_upgrade=True``.
        """
        from memflow.embed.factory import make_embedder

        emb = make_embedder(embedder)
        url, server = _locate(database_url, home)
        upgrade = bool(auto_upgrade) if auto_upgrade is not None or server is None else True
        admin = dbe.make_engine(url, pool_size=1)
        try:
            with dbe.transaction(admin) as conn:
                dbe.check_server(conn)
                dbe.check_schema(conn, auto_upgrade=upgrade, embedding_dim=emb.dim)
        finally:
            admin.dispose()
        return cls(dbe.make_engine(url, app_role=True), emb, url=url, server=server)

    @staticmethod
    def recorded_embedder(
        database_url: str | None, dataset: str, *, home: str | Path | None = None
    ) -> str | None:
        """The embedder spec dataset ``dataset`` was written with (None: no such dataset, or a
        name that does not say how to rebuild it): what the CLI uses when given none."""
        from memflow.embed.factory import spec_for_name

        url, _ = _locate(database_url, home)
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
        """The dataset ``name``; created unless ``create=False`` (then NotFound if absent)."""
        validate_dataset_name(name)
        with dbe.transaction(self.engine) as conn:
            row = conn.execute(q("dataset_get"), {"name": name}).first()
            if row is None:
                if not create:
                    raise NotFound(f"no dataset named {name!r}: list them with `memflow datasets`")
                conn.execute(
                    q("dataset_create"),
                    {"id": dataset_uuid(name), "name": name, "embedder": self.embedder.name},
                )
                row = conn.execute(q("dataset_get"), {"name": name}).first()
        if row is None:  # pragma: no cover - created above
            raise DatabaseError(f"dataset {name!r} could not be created")
        return Dataset(self, row.id, row.name, embedder_name=row.embedder)

    def datasets(self) -> list[DatasetInfo]:
        out = []
        with dbe.transaction(self.engine) as conn:
            for r in conn.execute(q("dataset_list")).all():
                # Row-level security: counts are visible only with the transaction bound to r.id.
                conn.execute(q("bind_dataset"), {"dataset_id": str(r.id)})
                c = conn.execute(q("dataset_counts"), {"dataset_id": r.id}).one()
                out.append(
                    DatasetInfo(
                        r.id, r.name, r.created_at, int(c.episodes), int(c.documents), r.embedder
                    )
                )
        return out

    def drop_dataset(self, name: str, *, only_if_empty: bool = False) -> bool:
        """Delete a dataset and everything in it; returns False if it did not exist (or, with
        ``only_if_empty``, if it holds a document)."""
        validate_dataset_name(name)
        with dbe.transaction(self.engine) as conn:
            row = conn.execute(q("dataset_get"), {"name": name}).first()
        if row is None:
            return False
        with dbe.transaction(self.engine, row.id) as conn:
            if only_if_empty:
                counts = conn.execute(q("dataset_counts"), {"dataset_id": row.id}).one()
                if counts.documents or counts.episodes:
                    return False
            conn.execute(q("dataset_drop"), {"dataset_id": row.id})
        return True


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
        """Refuse to mix models: the dataset keeps the embedder it was first written with."""
        mine = self.memory.embedder.name
        if self._embedder_name is None:
            with dbe.transaction(self.memory.engine, self.id) as conn:
                conn.execute(q("dataset_set_embedder"), {"dataset_id": self.id, "embedder": mine})
            self._embedder_name = mine
        elif self._embedder_name != mine:
            raise EmbedderMismatch(
                f"dataset {self.name!r} holds vectors of {self._embedder_name}, but this store was "
                f"opened with {mine}: open it with that embedder (--embedder / MEMFLOW_EMBEDDER) "
                "or use another dataset"
            )

    def __repr__(self) -> str:
        return f"Dataset(name={self.name!r}, id={self.id})"

    @property
    def context(self) -> StoreContext:
        """What ingest, recall and store need of this dataset (the store's current fault hook)."""
        m = self.memory
        return StoreContext(m.engine, m.embedder, self.id, m.fault)

    def _writer(self) -> Writer:
        return Writer(self.memory.engine, self.memory.embedder, fault=self.memory.fault)

    # -- structured memory in -------------------------------------------------------------------
    def add_episode(self, draft: EpisodeDraft | dict[str, Any]) -> WriteResult:
        return self.add_episodes([draft])

    def add_episodes(self, drafts: Sequence[EpisodeDraft | dict[str, Any]]) -> WriteResult:
        """Store structured drafts in one transaction; adding the same drafts again is a no-op."""
        self.check_embedder()
        doc, plan = self._draft_document(drafts)
        return self._writer().write(self.id, doc, plan)

    def import_episodes(
        self,
        documents: Sequence[Sequence[EpisodeDraft | dict[str, Any]]],
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[WriteResult]:
        """Bulk import: each inner sequence is one document (as for :meth:`add_episodes`), all
        written in one transaction with the vector indexes rebuilt and the foreign keys checked
        once at the end -- all documents or none.

        Several times faster than :meth:`add_episodes` per document for initial loads, but other
        sessions wait until it commits and the index rebuild covers the whole store: use it when
        the batch is large next to what is stored. Needs the login role that owns the schema."""
        self.check_embedder()
        if not documents:
            raise InvalidInput("no documents given: pass at least one list of EpisodeDrafts")
        items = [self._draft_document(d) for d in documents]
        return self._writer().write_bulk(self.id, items, progress)

    def _draft_document(
        self, drafts: Sequence[EpisodeDraft | dict[str, Any]]
    ) -> tuple[DocumentInfo, WritePlan]:
        parsed = [_as_draft(d) for d in drafts]
        if not parsed:
            raise InvalidInput("no episode drafts given: pass at least one EpisodeDraft")
        # A point's ``replaces`` (revision 0004) counts only when given: drafts written before it
        # keep their document ids.
        dumped = [d.model_dump(mode="json") for d in parsed]
        for d in dumped:
            for f in d.get("facets", []):
                for p in f.get("points", []):
                    if p.get("replaces") is None:
                        p.pop("replaces", None)
        payload = json.dumps(dumped, sort_keys=True, ensure_ascii=False)
        chash = content_hash(payload)
        doc = DocumentInfo(
            id=document_id(self.id, chash),
            source="add_episode",
            title=parsed[0].name,
            content_type="draft",
            content_hash=chash,
            reference_time=None,
        )
        return doc, plan_drafts(self.id, parsed)

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
    ) -> SearchResponse:
        """Episodes whose evidence chain is cheapest (``mode="episodic"``), or the ``vector`` /
        ``lexical`` baselines. No LLM is called. ``now`` anchors relative dates in the query.

        ``top_k``, ``mode``, ``display`` and ``budget_tokens`` left as None come from ``config``
        (default ``RecallConfig()``: 10 episodic results, ``summary`` display; ``budget_tokens``
        applies to ``highly_related`` only unless given).

        ``as_of``: what held at that time, as far as it had been learned by then. Facts replaced
        since rank below current ones and are shown with their validity; ``include_history``
        also shows what each current fact replaced."""
        self.check_embedder()
        resp = search(
            self.context,
            query,
            top_k=top_k,
            mode=mode,
            display=display,
            budget_tokens=budget_tokens,
            now=now,
            config=config,
            as_of=as_of,
            include_history=include_history,
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
    ) -> MemorizeReport:
        """Memorise files, directories, stdin ("-"), text, bytes or ParsedDocuments.

        Keywords left as None come from ``options`` (default ``MemorizeOptions()``, which
        documents them). See :mod:`memflow.ingest.pipeline` for what ``source`` may be and when
        it raises. ``progress`` hears of each finished document; ``on_progress`` receives
        :class:`~memflow.ingest.progress.ProgressEvent`s (documents, embedding batches, writes,
        with counts and an ETA).
        """
        opts = (options or MemorizeOptions()).updated(
            content_type=content_type,
            extractor=extractor,
            reference_time=reference_time,
            routing=routing,
            raise_on_error=raise_on_error,
        )
        self.check_embedder()
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
        return forget(self.context, document_id=document_id, episode_id=episode_id)

    # -- facts that change (memflow.store.history) ----------------------------------------------
    def correct(
        self, point_id: uuid.UUID | str, text: str, *, actor: str | None = None
    ) -> uuid.UUID:
        """Write ``text`` as the new version of FacetPoint ``point_id`` and close the old one
        (logged with ``actor``, default the database login role). Returns the new point's id."""
        self.check_embedder()
        return correct(self.context, _as_uuid(point_id), text, actor=actor)

    def history(self, node_id: uuid.UUID | str) -> list[HistoryEntry]:
        """Every version of the fact ``node_id`` belongs to, oldest first, with both times and
        what closed each (document, rule, model, correction)."""
        return history(self.context, _as_uuid(node_id))

    def documents(self) -> list[DocumentVersion]:
        """The documents of the dataset: id, source, version, status (current | replaced)."""
        return documents(self.context)

    # -- inspection ------------------------------------------------------------------------------
    def stats(self) -> dict[str, int]:
        with dbe.transaction(self.memory.engine, self.id) as conn:
            row = conn.execute(q("dataset_stats"), {"dataset_id": self.id}).one()
        return {k: int(v) for k, v in row._mapping.items()}

    def episodes(self, limit: int = 1000) -> list[dict[str, Any]]:
        with dbe.transaction(self.memory.engine, self.id) as conn:
            rows = conn.execute(q("episode_list"), {"dataset_id": self.id, "limit": limit}).all()
        return [dict(r._mapping) for r in rows]

    def chunk(self, document_id: uuid.UUID | str, key: str) -> dict[str, Any]:
        """The message or section ``key`` of document ``document_id``: what a search's
        ``Citation`` points at (``document_id``, ``source``, ``key``, ``idx``, ``text``,
        ``speaker``, ``ts``)."""
        doc = _as_uuid(document_id)
        with dbe.transaction(self.memory.engine, self.id) as conn:
            row = conn.execute(
                q("chunk_get"), {"dataset_id": self.id, "document_id": doc, "key": key}
            ).first()
        if row is None:
            raise NotFound(
                f"no chunk {key!r} of document {doc} in dataset {self.name!r}: use the "
                "document_id and key of a search's citations"
            )
        return dict(row._mapping)

    def episode_tree(self, episode_id: uuid.UUID | str) -> list[dict[str, Any]]:
        eid = _as_uuid(episode_id)
        with dbe.transaction(self.memory.engine, self.id) as conn:
            rows = conn.execute(q("episode_tree"), {"dataset_id": self.id, "episode_id": eid}).all()
        if not rows:
            raise NotFound(
                f"no episode {eid} in dataset {self.name!r}: list them with "
                f"`memflow show --dataset {self.name}`"
            )
        return [dict(r._mapping) for r in rows]


def _locate(database_url: str | None, home: str | Path | None) -> tuple[str, EmbeddedServer | None]:
    """The SQLAlchemy URL of the store, and the embedded server (started) when it is the store."""
    url = mfconfig.database_url(database_url)
    if url is not None:
        return mfconfig.sqlalchemy_url(url), None
    from memflow.db.embedded import EmbeddedServer

    server = EmbeddedServer(mfconfig.memflow_home(home))
    server.start()
    return server.url(), server


def _as_uuid(value: uuid.UUID | str) -> uuid.UUID:
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise InvalidInput(f"{value!r} is not an id: pass the UUID printed by memflow") from None


def _as_draft(d: EpisodeDraft | dict[str, Any]) -> EpisodeDraft:
    if isinstance(d, EpisodeDraft):
        return d
    from pydantic import ValidationError

    try:
        return EpisodeDraft.model_validate(d)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InvalidInput(
            f"invalid episode draft at {where or 'top level'}: {first['msg']}"
        ) from exc
