"""LangGraph: a ``BaseStore`` whose items live in a memflow dataset, so a graph's long-term
memory is memflow's (searched by meaning, with facts that change, visible to every door).

``pip install 'memflow[langgraph]'``; docs/integrations/langgraph.md.

>>> store = MemflowStore(mem.dataset("agent-memory"), scopes={"user": 1})
>>> store.put(("memories", "u1"), "food", {"text": "Lena is vegetarian."})
>>> store.search(("memories", "u1"), query="what does Lena eat?")

The mapping (:mod:`memflow.integrations.items` has the details):

- the store is one **dataset** (one tenant for row-level security; a store per dataset);
- a **namespace** is metadata of the item's document (``langgraph:namespace``, one
  ``langgraph:ns<i>`` per label); ``scopes`` maps label positions to memflow **scopes**;
- an **item** is one document: its value is the document's metadata (top-level fields, so
  ``filter`` is memflow's ``where``), its text at the index ``fields`` (default ``["$"]``: every
  string in the value) is memorised into episodes;
- ``put`` of an existing key memorises the new value, then forgets the old document (its episodes
  with it); ``delete`` forgets it; ``get`` reads the document's metadata;
- ``search`` without ``query`` lists the items newest first; with ``query`` it ranks them as
  :meth:`memflow.Dataset.search` ranks their episodes (an item is placed at its best episode;
  items with nothing indexed follow, unscored). ``SearchItem.score`` is minus memflow's score (a
  cost) so that higher is better, as LangGraph expects;
- ``list_namespaces`` reads the distinct namespaces. TTLs are not supported.

``batch`` runs on a :class:`memflow.Dataset`, ``abatch`` on a :class:`memflow.AsyncDataset`
(``async_dataset=``), the operations in order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from memflow.aio import AsyncDataset
from memflow.db.filters import check_scope
from memflow.errors import InvalidInput
from memflow.integrations import items as it
from memflow.integrations.common import missing_extra, require, search_keywords, text_document
from memflow.memory import Dataset
from memflow.recall.types import SearchResponse

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        get_text_at_path,
        validate_op_namespace,
    )
except ImportError as exc:  # pragma: no cover - the extra is part of the test install
    raise missing_extra("langgraph", "langgraph") from exc

# The keywords the store sets on each search itself.
OWN_KEYWORDS = ("top_k", "scope", "where")
MAX_TOP_K = 1000  # a query search widens its episode search up to this many to fill a page


def _strings(value: Any) -> list[str]:
    """The non-empty strings in ``value``, depth first."""
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def value_text(value: Mapping[str, Any], fields: Sequence[str]) -> str:
    """What is memorised of ``value``: its text at each of ``fields`` (LangGraph's path syntax;
    ``"$"``: every string in the value, or its JSON when it has none), one paragraph each."""
    texts: list[str] = []
    for path in fields:
        if path == "$":
            texts += _strings(value) or [json.dumps(value, sort_keys=True, ensure_ascii=False)]
        else:
            texts += [t for t in get_text_at_path(value, path) if t.strip()]
    return "\n\n".join(texts).strip()


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(p in ("*", n) for p, n in zip(path, part, strict=True)) if path else True


def _item(stored: it.StoredItem) -> Item:
    return Item(
        value=stored.value,
        key=stored.key,
        namespace=stored.namespace,
        created_at=stored.created_at,
        updated_at=stored.updated_at,
    )


def _search_item(stored: it.StoredItem, score: float | None) -> SearchItem:
    return SearchItem(
        stored.namespace, stored.key, stored.value, stored.created_at, stored.updated_at, score
    )


class MemflowStore(BaseStore):
    """A LangGraph store over one memflow dataset (see the module's docstring for the mapping).

    ``fields``: the value paths memorised when a put gives no ``index`` (LangGraph's
    ``IndexConfig.fields``; default ``["$"]``). ``scopes``: memflow scope keys (``user``,
    ``agent``, ``session``) -> the position of the namespace label that fills them.
    ``search``: keywords of :meth:`memflow.Dataset.search` for every query search (``as_of``,
    ``include_history``, ``config``, ``now``, ``mode``, ...; not ``top_k``, ``scope``, ``where``,
    which the store sets)."""

    def __init__(
        self,
        dataset: Dataset | None = None,
        *,
        async_dataset: AsyncDataset | None = None,
        fields: Sequence[str] = ("$",),
        scopes: Mapping[str, int] | None = None,
        search: Mapping[str, Any] | None = None,
    ) -> None:
        self.dataset = dataset
        self.async_dataset = async_dataset
        self.fields = list(fields)
        self.scopes = dict(scopes or {})
        if any(not isinstance(i, int) or i < 0 for i in self.scopes.values()):
            raise InvalidInput("scopes maps a scope key to a namespace position (an int >= 0)")
        check_scope({k: "label" for k in self.scopes})  # known scope keys
        self.search_defaults = search_keywords(search or {})
        if set(self.search_defaults) & set(OWN_KEYWORDS):
            raise InvalidInput(f"the store sets {', '.join(OWN_KEYWORDS)} itself")

    # -- the two drivers --------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ds = require(self.dataset, "MemflowStore needs a memflow.Dataset for its sync methods")
        return [it.run_sync(self._flow(op), ds) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ads = require(
            self.async_dataset,
            "MemflowStore needs async_dataset=amem.dataset(NAME) for its async methods (a "
            "memflow.AsyncDataset of an open AsyncMemory)",
        )
        return [await it.run_async(self._flow(op), ads) for op in ops]

    def _flow(self, op: Op) -> it.Flow[Any]:
        validate_op_namespace(op)
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            return self._put(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list(op)
        raise InvalidInput(f"unknown store operation {type(op).__name__}")

    # -- operations ---------------------------------------------------------------------------------
    def _scope_under(self, prefix: Sequence[str]) -> dict[str, str]:
        return {k: prefix[i] for k, i in self.scopes.items() if i < len(prefix)}

    def _stored(self, namespace: Sequence[str], key: str) -> it.Flow[list[it.StoredItem]]:
        where = it.where_of([*it.prefix_where(namespace, exact=True), {it.KEY: key}])
        scope = self._scope_under(namespace)
        found: list[it.StoredItem] = yield it.Read(it.documents_where, (where, scope))
        return found

    def _get(self, op: GetOp) -> it.Flow[Item | None]:
        found = yield from self._stored(op.namespace, op.key)
        return _item(found[0]) if found else None

    def _put(self, op: PutOp) -> it.Flow[None]:
        if op.ttl is not None:
            raise NotImplementedError("TTL is not supported by MemflowStore: pass ttl=None")
        ns, key = tuple(op.namespace), op.key
        old = yield from self._stored(ns, key)
        new_id = None
        if op.value is not None:
            if not ns or ns[0] == "langgraph":
                raise InvalidNamespaceError(f"cannot put into the namespace {ns}")
            new_id = yield from self._write(ns, key, op, old[0].created_at if old else None)
        for stored in old:
            if stored.document_id != new_id:
                yield it.Call("forget", kwargs={"document_id": stored.document_id})

    def _write(
        self, ns: tuple[str, ...], key: str, op: PutOp, created: datetime | None
    ) -> it.Flow[Any]:
        assert op.value is not None
        now = datetime.now(UTC)
        fields = self.fields if op.index is None else (op.index or [])
        text = value_text(op.value, fields)
        meta = it.item_metadata(
            ns, key, op.value, created=created or now, updated=now, indexed=bool(text)
        )
        scope = it.item_scope(ns, self.scopes)
        source = "langgraph/" + "/".join([*ns, key])
        if not text:
            return (
                yield it.WriteBare(lambda ds: it.bare_document(ds, source, key, scope, meta, now))
            )
        doc = text_document(text, source=source, when=now)
        options = {"scope": scope, "metadata": meta, "routing": False, "raise_on_error": True}
        report = yield it.Call("memorize", (doc,), options)
        return report.documents[0].id

    def _search(self, op: SearchOp) -> it.Flow[list[SearchItem]]:
        conditions = [*it.prefix_where(op.namespace_prefix), *it.filter_where(op.filter)]
        where, scope = it.where_of(conditions), self._scope_under(op.namespace_prefix)
        end = op.offset + op.limit
        if not op.query:
            window = {"limit": op.limit, "offset": op.offset}
            found = yield it.Read(it.documents_where, (where, scope), window)
            return [_search_item(s, None) for s in found]
        ranked: dict[tuple[tuple[str, ...], str], tuple[it.StoredItem, float | None]] = {}
        top_k = max(end, 1)
        while True:
            keywords = {**self.search_defaults, "top_k": top_k, "where": where, "scope": scope}
            resp: SearchResponse = yield it.Call("search", (op.query,), keywords)
            episodes = [r.episode_id for r in resp.results]
            by_episode = yield it.Read(it.episode_items, (episodes, where, scope))
            ranked.clear()
            for r in resp.results:
                for s in by_episode.get(r.episode_id, []):
                    ranked.setdefault((s.namespace, s.key), (s, -r.score))
            if len(ranked) >= end or len(resp.results) < top_k or top_k >= MAX_TOP_K:
                break
            top_k = min(top_k * 2, MAX_TOP_K)
        if len(ranked) < end:  # items with nothing indexed follow, unscored
            bare = it.where_of([*conditions, {it.INDEXED: False}])
            rest = yield it.Read(it.documents_where, (bare, scope), {"limit": end - len(ranked)})
            for s in rest:
                ranked.setdefault((s.namespace, s.key), (s, None))
        page = list(ranked.values())[op.offset : end]
        return [_search_item(s, score) for s, score in page]

    def _list(self, op: ListNamespacesOp) -> it.Flow[list[tuple[str, ...]]]:
        found: list[tuple[str, ...]] = yield it.Read(it.namespaces)
        kept = [ns for ns in found if all(_matches(c, ns) for c in op.match_conditions or ())]
        if op.max_depth is not None:
            kept = [ns[: op.max_depth] for ns in kept]
        return sorted(set(kept))[op.offset : op.offset + op.limit]


__all__ = ["MemflowStore", "value_text"]
