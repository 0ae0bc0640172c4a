"""Datasets: names and ids, rows read by name or listed with their counts (on whichever server
the caller picked: the primary, or a read replica for the reads), creation, the embedder check,
and the document of structured drafts. Shared by the sync and async APIs."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, Row

from memflow.bounds import MAX_NAME_CHARS, check_dataset_name, check_text, check_time
from memflow.context import StoreContext
from memflow.db import engine as dbe
from memflow.db.filters import check_metadata, check_scope
from memflow.db.queries import q
from memflow.db.steps import Op, sql_tx
from memflow.drafts import EpisodeDraft
from memflow.errors import DatabaseError, EmbedderMismatch, InvalidInput, NotFound
from memflow.ids import content_hash
from memflow.store.plan import WritePlan, plan_drafts
from memflow.store.versions import version_procedures
from memflow.store.writer import DocumentInfo, Writer, WriteResult, document_id

_DATASET_NS = uuid.UUID("2b0f3a4e-8d1c-4f57-9a55-6d656d666c6f")


@dataclass(frozen=True)
class DatasetInfo:
    id: uuid.UUID
    name: str
    created_at: datetime
    episodes: int
    documents: int
    embedder: str | None = None  # the embedder its vectors come from (None: nothing written)


def dataset_row(engine: Engine, name: str) -> Row[Any] | None:
    with dbe.transaction(engine) as conn:
        return conn.execute(q("dataset_get"), {"name": name}).first()


def dataset_infos(engine: Engine) -> list[DatasetInfo]:
    with dbe.transaction(engine) as conn:
        return list_datasets(conn)


def dataset_uuid(name: str) -> uuid.UUID:
    return uuid.uuid5(_DATASET_NS, name)


def validate_dataset_name(name: str) -> str:
    """A name to look a dataset up by: any name a store may hold, also one stored before the
    rules for new names (:func:`create_dataset`), so it can still be used and dropped."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput("dataset name is empty: pass a non-empty name such as --dataset notes")
    if "\x00" in name:
        raise InvalidInput("dataset name contains a NUL character: remove it")
    if len(name) > MAX_NAME_CHARS:
        raise InvalidInput(
            f"dataset name is {len(name)} characters long: use at most {MAX_NAME_CHARS}"
        )
    return check_text(name, "dataset name")


def create_dataset(conn: Connection, name: str, embedder_name: str) -> None:
    """Create dataset ``name`` (nothing if it exists) recording its embedder. A new name must be
    printable and usable in a URL path (memflow.bounds.check_dataset_name)."""
    check_dataset_name(name)
    conn.execute(
        q("dataset_create"), {"id": dataset_uuid(name), "name": name, "embedder": embedder_name}
    )


def resolve_dataset(conn: Connection, name: str, embedder_name: str, *, create: bool) -> Row[Any]:
    """The row of dataset ``name`` (id, name, embedder), created unless ``create`` is false
    (then NotFound)."""
    row = conn.execute(q("dataset_get"), {"name": name}).first()
    if row is None:
        if not create:
            raise NotFound(f"no dataset named {name!r}: list them with `memflow datasets`")
        create_dataset(conn, name, embedder_name)
        row = conn.execute(q("dataset_get"), {"name": name}).first()
    if row is None:  # pragma: no cover - created above
        raise DatabaseError(f"dataset {name!r} could not be created")
    return row


def list_datasets(conn: Connection) -> list[DatasetInfo]:
    out = []
    for r in conn.execute(q("dataset_list")).all():
        # Row-level security: counts are visible only with the transaction bound to r.id.
        conn.execute(q("bind_dataset"), {"dataset_id": str(r.id)})
        c = conn.execute(q("dataset_counts"), {"dataset_id": r.id}).one()
        out.append(
            DatasetInfo(r.id, r.name, r.created_at, int(c.episodes), int(c.documents), r.embedder)
        )
    return out


def check_same_embedder(dataset: str, stored: str, mine: str) -> None:
    """Refuse to mix models: the dataset keeps the embedder it was first written with."""
    if stored != mine:
        raise EmbedderMismatch(
            f"dataset {dataset!r} holds vectors of {stored}, but this store was "
            f"opened with {mine}: open it with that embedder (--embedder / MEMFLOW_EMBEDDER) "
            "or use another dataset"
        )


def draft_document(
    dataset_id: uuid.UUID,
    drafts: Sequence[EpisodeDraft | dict[str, Any]],
    scope: dict[str, str] | None = None,
    metadata: dict[str, Any] | None = None,
) -> tuple[DocumentInfo, WritePlan]:
    """The document and write plan of structured drafts (what ``add_episodes`` writes), with
    its scope and metadata (checked by memflow.db.filters)."""
    scope, metadata = check_scope(scope), check_metadata(metadata)
    parsed = [as_draft(d) for d in drafts]
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
        id=document_id(dataset_id, chash, scope, metadata),
        source="add_episode",
        title=parsed[0].name,
        content_type="draft",
        content_hash=chash,
        reference_time=None,
        scope=scope,
        metadata=metadata,
    )
    return doc, plan_drafts(dataset_id, parsed)


def draft_documents(
    dataset_id: uuid.UUID,
    documents: Sequence[Sequence[EpisodeDraft | dict[str, Any]]],
    scope: dict[str, str] | None = None,
    metadata: dict[str, Any] | None = None,
) -> list[tuple[DocumentInfo, WritePlan]]:
    """The documents and plans of a bulk import (``import_episodes``): one per inner sequence,
    each with ``scope`` and ``metadata``."""
    if not documents:
        raise InvalidInput("no documents given: pass at least one list of EpisodeDrafts")
    return [draft_document(dataset_id, d, scope, metadata) for d in documents]


def write_drafts_op(ctx: StoreContext, doc: DocumentInfo, plan: WritePlan) -> Op[WriteResult]:
    """Write the document of structured drafts (``add_episodes``): a procedure in it becomes
    the next version of its key (:mod:`memflow.store.versions`)."""
    ds = ctx.dataset_id
    settle = None
    if plan.procedure_ids:
        settle = yield sql_tx(lambda conn: version_procedures(conn, ds, plan), ds)
    writer = Writer(ctx.engine, ctx.embedder, fault=ctx.fault, after_rows=settle)
    return (yield from writer.write_op(ds, doc, plan))


def drop_dataset_op(name: str, *, only_if_empty: bool = False) -> Op[bool]:
    """Delete dataset ``name`` and everything in it: False if there is none (or, with
    ``only_if_empty``, if it holds a document or an episode)."""
    validate_dataset_name(name)
    row = yield sql_tx(lambda conn: conn.execute(q("dataset_get"), {"name": name}).first())
    if row is None:
        return False

    def drop(conn: Connection) -> bool:
        if only_if_empty:
            counts = conn.execute(q("dataset_counts"), {"dataset_id": row.id}).one()
            if counts.documents or counts.episodes:
                return False
        conn.execute(q("dataset_drop"), {"dataset_id": row.id})
        return True

    dropped: bool = yield sql_tx(drop, row.id)
    return dropped


def as_draft(d: EpisodeDraft | dict[str, Any], source: str = "") -> EpisodeDraft:
    """An episode draft, validated, with its time spans in memflow's time range
    (memflow.bounds); ``source`` (a file name) prefixes the errors."""
    from pydantic import ValidationError

    at = f"{source}: " if source else ""
    try:
        draft = d if isinstance(d, EpisodeDraft) else EpisodeDraft.model_validate(d)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InvalidInput(
            f"{at}invalid episode draft at {where or 'top level'}: {first['msg']}"
        ) from exc
    spans = [("time", draft.time)] + [
        (f"facets[{i}].time", f.time) for i, f in enumerate(draft.facets)
    ]
    for where, span in spans:
        if span is not None:
            check_time(span.start, f"{at}episode draft {where}.start")
            check_time(span.end, f"{at}episode draft {where}.end")
    return draft
