"""memflow.AsyncMemory: the acceptance scenario run through both APIs, the same results as the
sync API, 100 concurrent searches on one event loop, and a cancelled memorize."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Future
from datetime import UTC, datetime
from typing import Any, TypeVar

import pytest

from memflow import (
    AsyncMemory,
    EmbedderMismatch,
    InvalidInput,
    MemorizeReport,
    Memory,
    NotFound,
    SearchResponse,
)
from memflow.embed.hash import HashEmbedder
from tests.integration.test_memorize import rows

T = TypeVar("T")

NOTE = """# Greenhouse sensors

## Decision
On 3 April the lab moved the greenhouse humidity sensors to the north wall. Tomasz Wick keeps the calibration log.

## 备注
温室的灌溉泵每周二由周晓岚检查。
"""

CHAT = {
    "title": "Ines and Koji",
    "sessions": [
        {
            "started_at": "2025-02-10T09:00:00Z",
            "messages": [
                {"id": "S1:1", "speaker": "Ines", "text": "Did the kiln for the pottery class arrive?"},
                {"id": "S1:2", "speaker": "Koji", "text": "Yes, the new kiln reaches 1260 degrees and sits in studio four."},
                {"id": "S1:3", "speaker": "Ines", "text": "Then the glaze workshop can start on March 8."},
            ],
        }
    ],
}  # fmt: skip


class Loop:
    """An event loop in a thread: the async door, driven from a plain test."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Awaitable[T]) -> T:
        async def wrapped() -> T:
            return await coro

        fut: Future[T] = asyncio.run_coroutine_threadsafe(wrapped(), self.loop)
        return fut.result(timeout=120)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


class AsyncDoor:
    """The sync API's shape over AsyncMemory: each awaited call run to completion on ``loop``."""

    def __init__(self, loop: Loop, mem: AsyncMemory) -> None:
        self.loop, self.mem = loop, mem

    def dataset(self, name: str, *, create: bool = True) -> Any:
        ds = self.mem.dataset(name, create=create)
        door = self

        class Proxy:
            def __getattr__(self, attr: str) -> Callable[..., Any]:
                fn = getattr(ds, attr)
                return lambda *a, **k: door.loop.run(fn(*a, **k))

        return Proxy()

    def datasets(self) -> Any:
        return self.loop.run(self.mem.datasets())

    def __getattr__(self, attr: str) -> Callable[..., Any]:
        fn = getattr(self.mem, attr)  # drop_dataset, recorded_embedder: coroutine functions
        return lambda *a, **k: self.loop.run(fn(*a, **k))


@pytest.fixture(params=["sync", "async"])
def door(request: pytest.FixtureRequest, db_url: str) -> Iterator[Any]:
    if request.param == "sync":
        with Memory.open(db_url, embedder=HashEmbedder(384)) as mem:
            yield mem
        return
    loop = Loop()
    amem = loop.run(AsyncMemory.open(db_url, embedder=HashEmbedder(384)))
    try:
        yield AsyncDoor(loop, amem)
    finally:
        loop.run(amem.aclose())
        loop.stop()


def _found(resp: SearchResponse, needle: str) -> bool:
    return any(needle in r.context for r in resp.results) or needle in resp.context


def test_the_acceptance_scenario_through_both_apis(door: Any, db_url: str) -> None:
    ds = door.dataset("lab")
    report: MemorizeReport = ds.memorize(NOTE)
    chat = ds.memorize(json.dumps(CHAT), content_type="conversation")
    assert [d.status for d in report.documents + chat.documents] == ["written", "written"]
    assert chat.documents[0].content_type == "conversation"
    again = ds.memorize(NOTE)
    assert again.documents[0].status == "skipped"

    hit = ds.search("where are the greenhouse humidity sensors?", top_k=3)
    assert _found(hit, "north wall")
    kiln = ds.search("how hot does the kiln get?", top_k=3, display="detail")
    assert _found(kiln, "1260")
    zh = ds.search("谁检查温室的灌溉泵?", top_k=3)
    assert _found(ds.search("calibration log", mode="lexical"), "Tomasz Wick")
    assert _found(zh, "周晓岚")
    assert ds.stats()["documents"] == 2
    assert [d.name for d in door.datasets()] == ["lab"]
    assert not door.dataset("other").search("humidity sensors north wall").results  # scoped

    gone = ds.forget(document_id=chat.documents[0].id)
    assert gone.documents == 1 and gone.episodes >= 1
    assert not _found(ds.search("how hot does the kiln get?", top_k=5), "1260")
    assert _found(ds.search("where are the greenhouse humidity sensors?"), "north wall")
    assert rows(db_url, "SELECT count(*) FROM memflow.document")[0][0] == 1

    # The same error classes for the same mistakes.
    with pytest.raises(InvalidInput):
        door.dataset("")
    with pytest.raises(InvalidInput):
        ds.search("anything", top_k=0)
    with pytest.raises(InvalidInput):
        ds.search("anything", mode="fuzzy")
    with pytest.raises(InvalidInput):
        ds.memorize("missing-notes.md")
    with pytest.raises(InvalidInput):
        ds.forget(document_id="not-a-uuid")
    with pytest.raises(InvalidInput):
        ds.forget()
    with pytest.raises(NotFound):
        ds.forget(document_id=chat.documents[0].id)
    with pytest.raises(NotFound):
        door.dataset("nowhere", create=False).search("anything")
    with pytest.raises(InvalidInput):
        ds.add_episode({"summary": "no name"})
    added = ds.add_episode(
        {"name": "Seed order", "summary": "Koji ordered tomato seeds for the greenhouse."}
    )
    assert added.status == "written"
    assert (
        ds.add_episode(
            {"name": "Seed order", "summary": "Koji ordered tomato seeds for the greenhouse."}
        ).status
        == "skipped"
    )


def test_async_results_equal_the_sync_ones(db_url: str) -> None:
    with Memory.open(db_url, embedder=HashEmbedder(384)) as mem:
        ds = mem.dataset("lab")
        ds.memorize([NOTE, json.dumps(CHAT)])
        queries = ["who keeps the calibration log?", "kiln temperature", "灌溉泵 周二"]
        kinds = [
            {"mode": m, "display": d, "budget_tokens": b}
            for m in ("episodic", "vector", "lexical")
            for d in ("summary", "detail", "highly_related")
            for b in (None, 40)
        ]
        expected = [ds.search(q, **k) for q in queries for k in kinds]

    async def main() -> list[SearchResponse]:
        async with AsyncMemory.open(db_url, embedder=HashEmbedder(384)) as amem:
            ads = amem.dataset("lab")
            return [await ads.search(q, **k) for q in queries for k in kinds]

    got = asyncio.run(main())
    for a, b in zip(got, expected, strict=True):
        assert a.model_dump(exclude={"timings_ms"}) == b.model_dump(exclude={"timings_ms"})

    other = HashEmbedder(384)
    other.name = "hash-384-other"

    async def mismatch() -> None:
        async with AsyncMemory.open(db_url, embedder=other) as amem:
            await amem.dataset("lab").search("kiln")

    with pytest.raises(EmbedderMismatch):
        asyncio.run(mismatch())


def test_a_hundred_concurrent_searches_on_one_loop(db_url: str) -> None:
    with Memory.open(db_url, embedder=HashEmbedder(384)) as mem:
        mem.dataset("lab").memorize([NOTE, json.dumps(CHAT)])
    queries = ["greenhouse sensors", "kiln", "glaze workshop date", "灌溉泵", "calibration log"]

    async def main() -> tuple[list[Any], list[SearchResponse], int]:
        async with AsyncMemory.open(db_url, embedder=HashEmbedder(384), cpu_workers=2) as amem:
            ds = amem.dataset("lab")
            alone = [await ds.search(q) for q in queries]
            peak = 0

            async def watch() -> None:
                nonlocal peak
                while True:
                    names = [t.name for t in threading.enumerate()]
                    peak = max(peak, sum(n.startswith("memflow-cpu") for n in names))
                    await asyncio.sleep(0.005)

            watcher = asyncio.create_task(watch())
            out = await asyncio.gather(
                *(ds.search(queries[i % len(queries)]) for i in range(100)),
                return_exceptions=True,
            )
            watcher.cancel()
            return out, alone, peak

    out, alone, peak = asyncio.run(main())
    errors = [r for r in out if isinstance(r, BaseException)]
    assert errors == []
    for i, resp in enumerate(out):
        assert isinstance(resp, SearchResponse)
        assert [r.episode_id for r in resp.results] == [
            r.episode_id for r in alone[i % len(queries)].results
        ]
    assert 1 <= peak <= 2  # CPU work ran in the bounded pool, not a thread per call


def test_a_memorize_cancelled_mid_write_leaves_nothing(db_url: str) -> None:
    def counts() -> tuple[int, ...]:
        return tuple(
            rows(db_url, f"SELECT count(*) FROM memflow.{t}")[0][0]
            for t in ("document", "chunk", "node", "edge", "node_source")
        )

    async def main() -> MemorizeReport:
        async with AsyncMemory.open(db_url, embedder=HashEmbedder(384)) as amem:
            ds = amem.dataset("lab")
            await ds.memorize(NOTE)
            before = counts()
            loop = asyncio.get_running_loop()
            reached = asyncio.Event()
            release = threading.Event()

            def fault(stage: str) -> None:
                # Every row of the document is written, not yet committed: hold it there.
                if stage == "before_commit":
                    loop.call_soon_threadsafe(reached.set)
                    release.wait(10)

            amem.fault = fault
            task = asyncio.create_task(ds.memorize(json.dumps(CHAT), content_type="conversation"))
            await asyncio.wait_for(reached.wait(), 30)
            task.cancel()
            release.set()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert counts() == before
            amem.fault = None
            # The pool is usable after the cancellation, and the document is written whole.
            report = await ds.memorize(json.dumps(CHAT), content_type="conversation")
            assert counts() != before
            return report

    report = asyncio.run(main())
    assert report.documents[0].status == "written"


def _runbook(steps: list[str]) -> dict[str, Any]:
    return {
        "name": "Kiln firing day",
        "summary": "Koji wrote down how the studio fires the kiln.",
        "facets": [
            {
                "search_text": "The kiln cools for twelve hours before anyone opens it.",
                "points": [{"search_text": "The kiln cools for twelve hours before opening."}],
                "entities": [{"name": "Clayworks Supply", "types": ["supplier"]}],
            }
        ],
        "procedures": [{"name": "Firing the kiln", "steps": [{"text": t} for t in steps]}],
    }


def _timeless(value: Any) -> Any:
    """``value`` without times (the two runs write at different moments)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if not isinstance(v, datetime)}
    if isinstance(value, list | tuple):
        return [_timeless(v) for v in value]
    if hasattr(value, "model_dump"):
        return _timeless(value.model_dump())
    if hasattr(value, "__dataclass_fields__"):
        return _timeless({k: getattr(value, k) for k in value.__dataclass_fields__})
    return value


def _tour(door: Any, db_url: str) -> list[Any]:
    """Every method of the Dataset and Memory APIs, checked; returns what each call gave."""
    seen: list[Any] = []
    ds = door.dataset("tour")
    ds.check_embedder()
    assert door.recorded_embedder(db_url, "tour") == "hash:384"

    first = ds.add_episodes([_runbook(["Load the shelves", "Heat to 1000 degrees"])])
    second = ds.add_episode(_runbook(["Load the shelves", "Heat to 1260 degrees", "Cool"]))
    assert (first.status, second.status) == ("written", "written")
    versions = {(p["version"], p["status"]) for p in ds.procedures(all_versions=True)}
    assert versions == {(1, "superseded"), (2, "current")}  # the second supersedes the first
    assert [p["version"] for p in ds.procedures()] == [2]
    seen += [first.counts, second.counts, ds.procedures(all_versions=True)]

    bulk = ds.import_episodes(
        [
            [{"name": "Glaze order", "summary": "Ines ordered celadon glaze."}],
            [{"name": "库存", "summary": "周晓岚清点了釉料库存。"}],
            [{"name": "Glaze order", "summary": "Ines ordered celadon glaze."}],
        ]
    )
    assert [r.status for r in bulk] == ["written", "written", "skipped"]
    with pytest.raises(InvalidInput):
        ds.import_episodes([])
    seen += [[(r.document_id, r.status, r.counts) for r in bulk]]

    chat = ds.memorize(json.dumps(CHAT), content_type="conversation").documents[0]
    resp = ds.search("how hot does the new kiln get?", display="highly_related")
    cite = next(c for u in resp.context_units for c in u.citations if c.document_id == chat.id)
    piece = ds.chunk(str(cite.document_id), cite.key)
    assert piece["text"] in resp.context and piece["document_id"] == chat.id
    with pytest.raises(NotFound):
        ds.chunk(chat.id, "no-such-key")
    seen += [resp.model_dump(exclude={"timings_ms"}), piece]

    episodes = ds.episodes()
    assert {"Kiln firing day", "Glaze order", "库存"} <= {e["name"] for e in episodes}
    assert len(ds.episodes(limit=2)) == 2
    kiln = next(e for e in episodes if e["name"] == "Kiln firing day")
    tree = ds.episode_tree(str(kiln["id"]))
    assert tree[0]["kind"] == "Episode" and any("twelve hours" in r["tree"] for r in tree)
    with pytest.raises(NotFound):
        ds.episode_tree(uuid.uuid4())
    with pytest.raises(InvalidInput):
        ds.episode_tree("not-an-id")
    seen += [episodes, tree]

    assert [e["name"] for e in ds.entities_of_type("supplier")] == ["Clayworks Supply"]
    assert ds.entities_of_type("weather") == []

    found = ds.search("the kiln cools for twelve hours before opening", top_k=5).results
    points = [r.best_point_id for r in found if r.best_point_id is not None]
    point = next(p for p in points if "twelve hours" in ds.history(p)[-1].text)
    new = ds.correct(point, "The kiln cools for sixteen hours before opening.", actor="koji")
    old, current = ds.history(new)
    assert (old.node_id, old.reason, old.actor, current.node_id) == (
        point,
        "correction",
        "koji",
        new,
    )
    assert current.current and not old.current
    with pytest.raises(InvalidInput):
        ds.correct(point, "   ")
    with pytest.raises(NotFound):
        ds.history(uuid.uuid4())
    seen += [old, current]

    fixed = "the kiln cools for sixteen hours before opening"
    now = ds.search(fixed, display="highly_related", include_history=True)
    assert "sixteen hours" in now.context and "[replaces: The kiln cools for twelve" in now.context
    before = ds.search(fixed, as_of=datetime(2000, 1, 1, tzinfo=UTC))
    assert "sixteen" not in before.context  # nothing had been learned by then
    seen += [now.model_dump(exclude={"timings_ms"}), before.model_dump(exclude={"timings_ms"})]

    docs = ds.documents()
    assert sorted(d.source for d in docs).count("add_episode") == 4 and len(docs) == 6
    stats = ds.stats()
    assert stats["documents"] == 6 and stats["episodes"] >= 4
    correction = {"id", "created_at"}  # a correction's document id includes its time
    seen += [[d.model_dump(exclude=correction if d.source == "correct" else set()) for d in docs]]
    seen += [stats, door.datasets()]

    assert door.drop_dataset("tour", only_if_empty=True) is False  # it holds documents
    assert door.drop_dataset("tour") is True
    assert door.drop_dataset("tour") is False
    assert door.recorded_embedder(db_url, "tour") is None
    with pytest.raises(InvalidInput):
        door.drop_dataset("")
    with pytest.raises(NotFound):
        door.dataset("tour", create=False).episodes()
    return seen


def test_every_method_gives_the_same_results_through_both_apis(db_url: str) -> None:
    """The whole API (every method of Dataset and Memory, and its async twin) on the same
    inputs: the same results, ids included (ids follow content), the same errors."""
    with Memory.open(db_url, embedder=HashEmbedder(384)) as mem:
        expected = _timeless(_tour(mem, db_url))
    loop = Loop()
    amem = loop.run(AsyncMemory.open(db_url, embedder=HashEmbedder(384)))
    try:
        got = _timeless(_tour(AsyncDoor(loop, amem), db_url))
    finally:
        loop.run(amem.aclose())
        loop.stop()
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        assert a == b
