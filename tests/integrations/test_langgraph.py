"""memflow.integrations.langgraph against langgraph: BaseStore semantics (items keyed by
namespace and key, put replaces, delete removes, filters, limit/offset, list_namespaces) checked
against LangGraph's own InMemoryStore, query search ranked as Dataset.search ranks, and what a
put and a delete leave in memflow, through the sync and the async API.

langgraph ships no store conformance suite, so the reference here is its InMemoryStore."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from memflow import AsyncDataset, InvalidInput, Memory
from memflow.integrations.langgraph import MemflowStore, value_text

ITEMS: list[tuple[tuple[str, ...], str, dict[str, Any]]] = [
    (("memories", "lena"), "seat", {"text": "Lena prefers window seats.", "kind": "pref", "n": 3}),
    (("memories", "lena"), "tea", {"text": "Lena drinks green tea.", "kind": "pref", "n": 5}),
    (("memories", "lena"), "trip", {"text": "Lena flies to Lisbon in May.", "kind": "plan", "n": 8}),
    (("memories", "omar"), "food", {"text": "Omar is allergic to peanuts.", "kind": "pref", "n": 1}),
    (("memories", "omar", "work"), "desk", {"text": "Omar sits by the lab door.", "n": 2}),
    (("docs",), "rollback", {"text": "Roll back with the deploy script.", "kind": "howto"}),
    (("docs", "v1"), "legacy", {"text": "The old deploy used make release."}),
]  # fmt: skip


def fill(store: BaseStore) -> None:
    for ns, key, value in ITEMS:
        store.put(ns, key, value)


def keys(found: list[Any]) -> list[tuple[tuple[str, ...], str]]:
    return [(tuple(i.namespace), i.key) for i in found]


@pytest.fixture
def store(mem: Memory) -> MemflowStore:
    return MemflowStore(mem.dataset("graph"), fields=["text"], scopes={"user": 1})


def test_get_put_delete_as_in_memory_store(store: MemflowStore) -> None:
    ref = InMemoryStore()
    fill(store), fill(ref)
    for ns, key, value in ITEMS:
        got, want = store.get(ns, key), ref.get(ns, key)
        assert got is not None and want is not None
        assert (got.namespace, got.key, got.value) == (want.namespace, want.key, want.value)
        assert got.value == value
    assert store.get(("memories", "lena"), "nothing") is None
    assert store.get(("memories",), "seat") is None  # a namespace is exact, not a prefix
    assert store.get(("memories", "lena", "x"), "seat") is None
    store.delete(("memories", "lena"), "tea"), ref.delete(("memories", "lena"), "tea")
    assert store.get(("memories", "lena"), "tea") is None is ref.get(("memories", "lena"), "tea")
    store.delete(("memories", "lena"), "never-there")  # deleting nothing is fine


def test_put_replaces_the_document_and_keeps_created_at(store: MemflowStore) -> None:
    ds = store.dataset
    assert ds is not None
    store.put(("memories", "lena"), "home", {"text": "Lena lives in Boston."})
    first = store.get(("memories", "lena"), "home")
    store.put(("memories", "lena"), "home", {"text": "Lena lives in Seattle.", "since": 2024})
    second = store.get(("memories", "lena"), "home")
    assert first is not None and second is not None
    assert second.value == {"text": "Lena lives in Seattle.", "since": 2024}
    assert second.created_at == first.created_at < second.updated_at
    assert [d.source for d in ds.documents()] == ["langgraph/memories/lena/home"]  # one document
    found = store.search(("memories",), query="Where does Lena live?")
    assert [i.value["text"] for i in found] == ["Lena lives in Seattle."]
    context = ds.search("Where does Lena live? Boston", display="highly_related").context
    assert "Boston" not in context  # the old value's episodes were forgotten with it
    store.delete(("memories", "lena"), "home")
    assert ds.documents() == [] and ds.stats()["episodes"] == 0


def test_filters_limit_offset_and_prefixes_as_in_memory_store(store: MemflowStore) -> None:
    ref = InMemoryStore()
    fill(store), fill(ref)
    everywhere = [(), ("memories",), ("memories", "lena"), ("docs",), ("nothing",)]
    numbered = [("memories",), ("memories", "lena")]  # InMemoryStore's ranges need the field
    cases: list[tuple[list[tuple[str, ...]], dict[str, Any]]] = [
        (everywhere, {}),
        (everywhere, {"filter": {"kind": "pref"}}),
        (everywhere, {"filter": {"kind": {"$ne": "pref"}}}),
        (everywhere, {"filter": {"missing": "x"}}),
        (numbered, {"filter": {"kind": {"$eq": "pref"}, "n": {"$gte": 3}}}),
        (numbered, {"filter": {"n": {"$gt": 1, "$lt": 8}}}),
        (numbered, {"filter": {"n": {"$lte": 2}}}),
    ]
    for prefixes, case in cases:
        for prefix in prefixes:
            got = keys(store.search(prefix, limit=100, **case))
            want = keys(ref.search(prefix, limit=100, **case))
            assert sorted(got) == sorted(want), (prefix, case)
    newest_first = keys(store.search((), limit=100))
    assert newest_first == [(ns, k) for ns, k, _ in reversed(ITEMS)]
    assert keys(store.search((), limit=2, offset=3)) == newest_first[3:5]
    assert all(i.score is None for i in store.search(("memories",)))


def test_list_namespaces_as_in_memory_store(store: MemflowStore) -> None:
    ref = InMemoryStore()
    fill(store), fill(ref)
    cases: list[dict[str, Any]] = [
        {},
        {"prefix": ("memories",)},
        {"prefix": ("memories", "*")},
        {"suffix": ("work",)},
        {"suffix": ("*", "v1")},
        {"prefix": ("memories",), "max_depth": 2},
        {"max_depth": 1},
        {"limit": 2, "offset": 1},
        {"prefix": ("nothing",)},
    ]
    for case in cases:
        assert store.list_namespaces(**case) == ref.list_namespaces(**case), case


def test_query_search_ranks_as_dataset_search(store: MemflowStore) -> None:
    fill(store)
    ds = store.dataset
    assert ds is not None
    queries = ["What does Lena drink?", "peanut allergy", "how to roll back a deploy"]
    for query in queries:
        for prefix in [("memories",), ("memories", "lena"), ()]:
            found = store.search(prefix, query=query, limit=10)
            # the documented mapping: a prefix is one equality per label of the namespace
            where = {"and": [{"langgraph:key": {"exists": True}}] + [
                {f"langgraph:ns{i}": label} for i, label in enumerate(prefix)
            ]}  # fmt: skip
            resp = ds.search(query, top_k=10, where=where)
            expected = [
                (tuple(r.metadata["langgraph:namespace"]), r.metadata["langgraph:key"])
                for r in resp.results
            ]
            assert keys(found) == expected
            assert [i.score for i in found] == [-r.score for r in resp.results]
            assert len(found) > 1
    lena = store.search(("memories", "lena"), query="What does Lena drink?", limit=1)
    assert keys(lena) == [(("memories", "lena"), "tea")]
    page = store.search(("memories",), query="Lena", limit=2, offset=1)
    assert keys(page) == keys(store.search(("memories",), query="Lena", limit=3))[1:]
    prefs = store.search(("memories",), query="Lena", filter={"kind": "plan"})
    assert keys(prefs) == [(("memories", "lena"), "trip")]


def test_scopes_and_metadata_reach_memflow(store: MemflowStore) -> None:
    fill(store)
    ds = store.dataset
    assert ds is not None
    resp = ds.search("Omar", scope={"user": "omar"}, display="summary")
    assert {r.scope["user"] for r in resp.results} == {"omar"}
    assert {r.metadata["langgraph:key"] for r in resp.results} == {"food", "desk"}
    tagged = ds.search("window seats", where={"kind": "pref", "n": {"gte": 3}})
    assert {r.metadata["langgraph:key"] for r in tagged.results} <= {"seat", "tea"}


def test_unindexed_items_are_kept_and_listed_but_not_ranked(store: MemflowStore) -> None:
    ds = store.dataset
    assert ds is not None
    store.put(("memories", "lena"), "tea", {"text": "Lena drinks green tea."})
    store.put(("memories", "lena"), "raw", {"text": "Lena's raw note."}, index=False)
    store.put(("memories", "lena"), "count", {"visits": 3})  # no text at the index fields
    assert store.get(("memories", "lena"), "raw") is not None
    assert ds.stats()["episodes"] == 1  # only the indexed item became an episode
    found = store.search(("memories", "lena"), query="green tea", limit=10)
    assert keys(found)[0] == (("memories", "lena"), "tea") and found[0].score is not None
    assert sorted(keys(found)[1:]) == [
        (("memories", "lena"), "count"),
        (("memories", "lena"), "raw"),
    ]
    assert [i.score for i in found[1:]] == [None, None]
    store.put(("memories", "lena"), "raw", {"text": "Lena's raw note."}, index=["text"])
    assert ds.stats()["episodes"] == 2
    store.delete(("memories", "lena"), "count")
    assert {d.source for d in ds.documents()} == {
        "langgraph/memories/lena/tea",
        "langgraph/memories/lena/raw",
    }


def test_batch_runs_operations_in_order(store: MemflowStore) -> None:
    ns = ("memories", "lena")
    out = store.batch(
        [
            PutOp(ns, "a", {"text": "Lena likes plums."}),
            GetOp(ns, "a"),
            SearchOp(("memories",), query="plums"),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("memories",)),)),
            PutOp(ns, "a", None),
            GetOp(ns, "a"),
        ]
    )
    assert out[0] is None and out[1] is not None and out[1].value == {"text": "Lena likes plums."}
    assert keys(out[2]) == [(ns, "a")]
    assert out[3] == [ns] and out[4] is None and out[5] is None


def test_bad_input_gets_clear_errors(store: MemflowStore, mem: Memory) -> None:
    with pytest.raises(InvalidNamespaceError):
        store.put((), "k", {"text": "x"})
    with pytest.raises(InvalidNamespaceError):
        store.put(("a.b",), "k", {"text": "x"})
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp(("langgraph",), "k", {"text": "x"})])
    with pytest.raises(NotImplementedError, match="TTL"):
        store.put(("memories",), "k", {"text": "x"}, ttl=5)
    with pytest.raises(InvalidInput, match="store's own"):
        store.put(("memories",), "k", {"langgraph:key": "x"})
    with pytest.raises(InvalidInput, match="objects or lists"):
        store.search(("memories",), filter={"tags": ["a"]})
    with pytest.raises(InvalidInput, match="operator"):
        store.search(("memories",), filter={"n": {"$in": [1]}})
    with pytest.raises(InvalidInput, match="sets top_k"):
        MemflowStore(mem.dataset("graph"), search={"top_k": 3})
    with pytest.raises(InvalidInput, match="scope"):
        MemflowStore(mem.dataset("graph"), scopes={"tenant": 0})
    assert store.dataset is not None and store.dataset.documents() == []  # nothing half-written


def test_value_text_follows_langgraph_paths() -> None:
    value = {"text": "Tea at five.", "tags": ["a", "b"], "meta": {"by": "Lena"}, "n": 2}
    assert value_text(value, ["$"]) == "Tea at five.\n\na\n\nb\n\nLena"
    assert value_text(value, ["text", "meta.by"]) == "Tea at five.\n\nLena"
    assert value_text(value, ["tags[*]"]) == "a\n\nb"
    assert value_text({"n": 2}, ["$"]) == '{"n": 2}'
    assert value_text(value, []) == ""


@pytest.mark.asyncio
async def test_the_async_store_runs_on_the_async_api(mem: Memory, ads: AsyncDataset) -> None:
    sync = MemflowStore(mem.dataset("agent"), fields=["text"])
    astore = MemflowStore(async_dataset=ads, fields=["text"])
    for ns, key, value in ITEMS:
        await astore.aput(ns, key, value)
    for ns, key, value in ITEMS:
        item = await astore.aget(ns, key)
        assert item is not None and item.value == value
        assert sync.get(ns, key) == item  # one store, two APIs
    query = "What does Lena drink?"
    found = await astore.asearch(("memories",), query=query)
    assert keys(found) == keys(sync.search(("memories",), query=query))
    assert keys(found)[0] == (("memories", "lena"), "tea")
    assert await astore.alist_namespaces(max_depth=1) == [("docs",), ("memories",)]
    await astore.aput(("memories", "lena"), "tea", {"text": "Lena drinks black coffee."})
    await astore.adelete(("docs",), "rollback")
    assert (await astore.aget(("docs",), "rollback")) is None
    item = await astore.aget(("memories", "lena"), "tea")
    assert item is not None and item.value["text"] == "Lena drinks black coffee."
    assert len(await ads.documents()) == len(ITEMS) - 1
    with pytest.raises(Exception, match="async_dataset="):
        await sync.aget(("docs",), "legacy")
