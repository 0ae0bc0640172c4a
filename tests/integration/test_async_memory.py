"""memflow.AsyncMemory: the acceptance scenario run through both APIs, the same results as the
sync API, 100 concurrent searches on one event loop, and a cancelled memorize."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Future
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
