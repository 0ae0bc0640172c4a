"""Keyed items as memflow documents (what :mod:`memflow.integrations.langgraph`'s store keeps),
with no framework imported: the mapping, the filters, the reads, and the flows' two drivers.

An item ``(namespace, key) -> value`` (a JSON object) is one document of the store's dataset:

- its **metadata** is the value's own top-level fields, plus reserved keys that start with
  ``langgraph:``: ``namespace`` (the labels, a JSON list), ``ns0``, ``ns1``, ... (one label
  each, so a namespace prefix is a few equalities of memflow's ``where``), ``depth``, ``key``,
  ``created_at`` and ``updated_at`` (ISO, UTC) and ``indexed``;
- its **scope** takes the labels at the positions the store maps (``scopes={"user": 1}``: the
  second label of every namespace is the document's user), so memflow's other doors see an
  item under that scope too;
- its **text** (what memflow memorises into episodes) is the value's text at the indexed
  fields; an item with nothing to index is a document without episodes (kept, never searched
  by meaning).

A flow (the work of one store operation) is a generator that yields effects -- a read, a call of
a Dataset method, a document written bare -- and receives their results; ``run_sync`` performs
them on a :class:`memflow.Dataset`, ``run_async`` on a :class:`memflow.AsyncDataset` (awaited,
on the event loop), so both APIs share one code path.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import Connection, Row

from memflow.aio import AsyncDataset
from memflow.db import aio
from memflow.db.engine import transaction
from memflow.db.filters import check_metadata, check_scope, compile_where
from memflow.db.queries import with_condition
from memflow.db.steps import run_op
from memflow.errors import InvalidInput
from memflow.ids import content_hash
from memflow.memory import Dataset
from memflow.store.plan import WritePlan
from memflow.store.writer import DocumentInfo, Writer, document_id

T = TypeVar("T")

PREFIX = "langgraph:"
NAMESPACE, DEPTH, KEY = f"{PREFIX}namespace", f"{PREFIX}depth", f"{PREFIX}key"
CREATED, UPDATED, INDEXED = f"{PREFIX}created_at", f"{PREFIX}updated_at", f"{PREFIX}indexed"


def level(i: int) -> str:
    """The metadata key of a namespace's ``i``-th label."""
    return f"{PREFIX}ns{i}"


def stamp(when: datetime) -> str:
    """A timestamp as fixed-width ISO text in UTC (sorts as text in time order)."""
    return when.astimezone(UTC).isoformat(timespec="microseconds")


# ---------------------------------------------------------------- items <-> metadata


@dataclass(frozen=True)
class StoredItem:
    """An item as read back from its document."""

    document_id: uuid.UUID
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime


def item_metadata(
    namespace: Sequence[str],
    key: str,
    value: Mapping[str, Any],
    *,
    created: datetime,
    updated: datetime,
    indexed: bool,
) -> dict[str, Any]:
    """The metadata of an item's document (checked as memflow checks metadata)."""
    if not isinstance(value, Mapping):
        raise InvalidInput(f"an item's value must be a JSON object, got {type(value).__name__}")
    reserved = sorted(k for k in value if isinstance(k, str) and k.startswith(PREFIX))
    if reserved:
        raise InvalidInput(
            f"value field(s) {', '.join(reserved)}: names starting with {PREFIX!r} are the "
            "store's own; rename them"
        )
    tags: dict[str, Any] = {
        NAMESPACE: list(namespace),
        DEPTH: len(namespace),
        KEY: key,
        CREATED: stamp(created),
        UPDATED: stamp(updated),
        INDEXED: indexed,
    }
    tags.update({level(i): label for i, label in enumerate(namespace)})
    return check_metadata({**value, **tags})


def stored_item(row: Row[Any]) -> StoredItem:
    """The item a ``documents_where`` / ``episode_documents_where`` row holds."""
    meta = dict(row.metadata)
    return StoredItem(
        document_id=row.id,
        namespace=tuple(meta[NAMESPACE]),
        key=meta[KEY],
        value={k: v for k, v in meta.items() if not k.startswith(PREFIX)},
        created_at=datetime.fromisoformat(meta[CREATED]),
        updated_at=datetime.fromisoformat(meta[UPDATED]),
    )


def item_scope(namespace: Sequence[str], scopes: Mapping[str, int]) -> dict[str, str]:
    """The scope of an item's document: the labels at the mapped positions it has."""
    return check_scope({k: namespace[i] for k, i in scopes.items() if i < len(namespace)})


def prefix_where(prefix: Sequence[str], *, exact: bool = False) -> list[dict[str, Any]]:
    """memflow ``where`` conditions for the items under ``prefix`` (``exact``: in it)."""
    out: list[dict[str, Any]] = [{KEY: {"exists": True}}]
    out += [{level(i): label} for i, label in enumerate(prefix)]
    if exact:
        out.append({DEPTH: len(prefix)})
    return out


_OPERATORS = {"$ne": "not", "$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte"}


def filter_where(flt: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """A LangGraph filter (``{"field": value}``, ``{"field": {"$ne": v}}``, ``$eq``, ``$gt``,
    ``$gte``, ``$lt``, ``$lte``) as memflow ``where`` conditions on the value's top-level
    fields."""
    out: list[dict[str, Any]] = []
    for name, cond in (flt or {}).items():
        if name in ("and", "or") or name.startswith(PREFIX):
            raise InvalidInput(f"cannot filter on the field {name!r}: the name is reserved")
        if isinstance(cond, Mapping) and any(str(op).startswith("$") for op in cond):
            for op, value in cond.items():
                if op == "$eq":
                    out.append({name: value})
                elif op in _OPERATORS:
                    out.append({name: {_OPERATORS[op]: value}})
                else:
                    raise InvalidInput(
                        f"unknown filter operator {op!r} on {name!r}: use $eq, $ne, $gt, $gte, "
                        "$lt or $lte"
                    )
        elif isinstance(cond, Mapping | list | tuple):
            raise InvalidInput(
                f"filter on {name!r}: memflow's store compares top-level fields with strings, "
                "numbers, booleans or null, not with objects or lists"
            )
        else:
            out.append({name: cond})
    return out


def where_of(conditions: list[dict[str, Any]]) -> dict[str, Any]:
    return {"and": conditions}


# ---------------------------------------------------------------- reads (steps on a connection)


def documents_where(
    conn: Connection,
    dataset_id: uuid.UUID,
    where: Mapping[str, Any],
    scope: Mapping[str, str],
    *,
    limit: int | None = None,
    offset: int = 0,
) -> list[StoredItem]:
    """The items that pass ``where`` and ``scope``, newest first (``limit`` None: all)."""
    compiled = compile_where(where)
    rows = conn.execute(
        with_condition("documents_where", compiled.sql),
        {
            "dataset_id": dataset_id,
            "scope": json.dumps(dict(scope)),
            "order_key": UPDATED,
            "limit": limit,
            "offset": offset,
            **compiled.params,
        },
    ).all()
    return [stored_item(r) for r in rows]


def episode_items(
    conn: Connection,
    dataset_id: uuid.UUID,
    episodes: Sequence[uuid.UUID],
    where: Mapping[str, Any],
    scope: Mapping[str, str],
) -> dict[uuid.UUID, list[StoredItem]]:
    """For each of ``episodes``, the items whose documents support it (newest first)."""
    compiled = compile_where(where)
    rows = conn.execute(
        with_condition("episode_documents_where", compiled.sql),
        {
            "dataset_id": dataset_id,
            "episodes": list(episodes),
            "scope": json.dumps(dict(scope)),
            "order_key": UPDATED,
            **compiled.params,
        },
    ).all()
    out: dict[uuid.UUID, list[StoredItem]] = {}
    for r in rows:
        out.setdefault(r.episode_id, []).append(stored_item(r))
    return out


def namespaces(conn: Connection, dataset_id: uuid.UUID) -> list[tuple[str, ...]]:
    """Every namespace that holds an item."""
    compiled = compile_where({KEY: {"exists": True}})
    rows = conn.execute(
        with_condition("metadata_values", compiled.sql),
        {"dataset_id": dataset_id, "scope": "{}", "key": NAMESPACE, **compiled.params},
    ).all()
    return [tuple(r.value) for r in rows]


def bare_document(
    dataset_id: uuid.UUID,
    source: str,
    title: str,
    scope: dict[str, str],
    metadata: dict[str, Any],
    when: datetime,
) -> DocumentInfo:
    """A document with no text to memorise: it holds its metadata and supports no episode."""
    chash = content_hash(json.dumps(metadata, sort_keys=True, ensure_ascii=False))
    return DocumentInfo(
        id=document_id(dataset_id, chash, scope, metadata),
        source=source,
        title=title,
        content_type="item",
        content_hash=chash,
        reference_time=when,
        scope=scope,
        metadata=metadata,
    )


# ---------------------------------------------------------------- flows and their drivers


@dataclass(frozen=True)
class Read:
    """Run ``fn(conn, dataset_id, *args, **kwargs)`` in one transaction bound to the dataset, on
    the primary (a store reads its own writes); its result is sent back."""

    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __call__(self, conn: Connection, dataset_id: uuid.UUID) -> Any:
        return self.fn(conn, dataset_id, *self.args, **self.kwargs)


@dataclass(frozen=True)
class Call:
    """Call the Dataset (AsyncDataset) method ``method``; its result is sent back."""

    method: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class WriteBare:
    """Write the document ``make(dataset_id)`` builds, with no episodes; sends its id back."""

    make: Callable[[uuid.UUID], DocumentInfo]


Effect = Read | Call | WriteBare
Flow = Generator[Effect, Any, T]


def _step(flow: Flow[T], value: Any) -> tuple[Effect | None, Any]:
    """The flow's next effect (None, and its result, once it is done)."""
    try:
        return flow.send(value), None
    except StopIteration as done:
        return None, done.value


def run_sync(flow: Flow[T], ds: Dataset) -> T:
    """Perform ``flow``'s effects on ``ds``."""
    mem = ds.memory
    effect, value = _step(flow, None)
    while effect is not None:
        if isinstance(effect, Read):
            with transaction(mem.engine, ds.id) as conn:
                value = effect(conn, ds.id)
        elif isinstance(effect, Call):
            value = getattr(ds, effect.method)(*effect.args, **effect.kwargs)
        else:
            doc = effect.make(ds.id)
            writer = Writer(mem.engine, mem.embedder, fault=mem.fault)
            value = run_op(mem.engine, writer.write_op(ds.id, doc, WritePlan())).document_id
        effect, value = _step(flow, value)
    return value  # type: ignore[no-any-return]


async def run_async(flow: Flow[T], ads: AsyncDataset) -> T:
    """Perform ``flow``'s effects on ``ads``, awaited on the event loop."""
    ctx = await ads.context()
    mem = ads.memory
    effect, value = _step(flow, None)
    while effect is not None:
        if isinstance(effect, Read):
            async with aio.transaction(mem.engine, ctx.dataset_id) as conn:
                value = await conn.run_sync(effect, ctx.dataset_id)
        elif isinstance(effect, Call):
            value = await getattr(ads, effect.method)(*effect.args, **effect.kwargs)
        else:
            writer = Writer(ctx.engine, ctx.embedder, fault=ctx.fault)
            op = writer.write_op(ctx.dataset_id, effect.make(ctx.dataset_id), WritePlan())
            value = (await aio.run_op(mem.engine, op, mem.cpu)).document_id
        effect, value = _step(flow, value)
    return value  # type: ignore[no-any-return]
