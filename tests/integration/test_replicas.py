"""Read replicas for real: a primary and streaming standbys started from the embedded server's
binaries on 127.0.0.1 (tests/support/replication.py). Searches and reads go to a standby, writes
to the primary, in the sync and the async API; read-your-writes holds; a standby that is paused,
killed or promoted is set aside and searches keep succeeding through the primary; a read a
replica breaks off runs again on the primary, and only that read (the query is embedded once)."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import event, text

from memflow import AsyncMemory, Memory
from memflow.config import ReplicaSettings, libpq_url
from memflow.db.embedded import EmbeddedServer
from memflow.embed.hash import HashEmbedder
from memflow.errors import ConnectionFailed, DatabaseError

from ..support.replication import StreamingPair, sql, wait_until

SCANS = (
    "SELECT coalesce(sum(seq_scan + coalesce(idx_scan, 0)), 0) FROM pg_stat_user_tables "
    "WHERE relname = 'episode_summary'"
)


@pytest.fixture(scope="module")
def pair() -> Iterator[StreamingPair]:
    p = StreamingPair().start()
    Memory.open(p.primary_url, embedder=HashEmbedder(384), auto_upgrade=True).close()
    try:
        yield p
    finally:
        p.destroy()


@pytest.fixture(scope="module")
def standby(pair: StreamingPair) -> EmbeddedServer:
    """A standby the tests of this module share; none of them stops it."""
    return pair.add_standby()


def _open(pair: StreamingPair, *standbys: EmbeddedServer, **kw: Any) -> Memory:
    settings = ReplicaSettings(
        urls=tuple(s.tcp_url() for s in standbys),
        consistency=kw.pop("consistency", "read_your_writes"),
        max_wait_s=kw.pop("max_wait_s", 10.0),
        retry_after_s=kw.pop("retry_after_s", 0.2),
    )
    return Memory.open(pair.primary_url, embedder=HashEmbedder(384), read_replicas=settings)


def _draft(tag: str) -> dict[str, Any]:
    return {
        "name": f"发布记录 {tag}",
        "summary": f"release {tag}: the staging cluster was upgraded and the rollback plan {tag} "
        f"was checked by the on-call engineer",
    }


def _finds(ds: Any, tag: str) -> bool:
    resp = ds.search(_draft(tag)["summary"], top_k=5)
    return any(r.name == _draft(tag)["name"] for r in resp.results)


def test_searches_and_reads_go_to_the_replica_writes_to_the_primary(
    pair: StreamingPair, standby: EmbeddedServer
) -> None:
    with _open(pair, standby) as mem:
        ds = mem.dataset("routing")
        ds.add_episode(_draft("r1"))
        assert _finds(ds, "r1")
        port = ds._read(lambda c: c.execute(text("SELECT inet_server_port()")).scalar())
        assert port == standby.port != pair.primary.port
        assert ds.stats()["episodes"] == 1
        stats = mem.reads.stats()
        assert stats["replica"] >= 3 and stats.get("primary", 0) == 0, stats

    # What the servers counted: the recall statement scans episode_summary on the standby only
    # (each server keeps its own statistics; they are published within about a second).
    def scans(url: str) -> int:
        return int(sql(url, SCANS) or 0)  # type: ignore[call-overload]

    before = {url: scans(url) for url in (pair.primary_url, standby.tcp_url())}
    with _open(pair, standby) as mem:
        for _ in range(5):
            mem.dataset("routing").search("rollback plan")
    wait_until(
        lambda: scans(standby.tcp_url()) >= before[standby.tcp_url()] + 5, 30, "standby scans"
    )
    assert scans(pair.primary_url) == before[pair.primary_url]


def test_the_replicas_of_the_environment_are_used(
    pair: StreamingPair, standby: EmbeddedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMFLOW_READ_REPLICA_URLS", f" {libpq_url(standby.tcp_url())} ,")
    monkeypatch.setenv("MEMFLOW_REPLICA_MAX_WAIT", "10")
    with Memory.open(pair.primary_url, embedder=HashEmbedder(384)) as mem:
        ds = mem.dataset("from-env")
        port = ds._read(lambda c: c.execute(text("SELECT inet_server_port()")).scalar())
    assert port == standby.port


def test_a_standby_given_as_the_store_serves_opening_checking_and_searching(
    pair: StreamingPair, standby: EmbeddedServer
) -> None:
    # A dataset written before memflow recorded embedders (no 'embedder' in meta): checking it
    # used to write; on a standby any write fails.
    legacy = uuid.uuid4()
    sql(pair.primary_url, "INSERT INTO memflow.dataset (id, name) VALUES (%s, 'legacy')", legacy)
    with _open(pair) as mem:
        mem.dataset("written").add_episode(_draft("w1"))
    pair.wait_replayed(standby)
    with Memory.open(standby.tcp_url(), embedder=HashEmbedder(384)) as ro:
        assert ro.dataset("legacy", create=False).search("rollback plan").results == []
        ds = ro.dataset("written")
        assert _finds(ds, "w1") and ds.stats()["episodes"] == 1
        assert {d.name for d in ro.datasets()} >= {"legacy", "written"}
        with pytest.raises(DatabaseError, match="only accepts reads"):
            ds.add_episode(_draft("w2"))
        with pytest.raises(DatabaseError, match="only accepts reads"):
            ro.dataset("brand-new")


def test_read_your_writes_in_a_write_search_loop(
    pair: StreamingPair, standby: EmbeddedServer
) -> None:
    with _open(pair, standby) as mem:
        ds = mem.dataset("loop")
        missed = [
            i for i in range(60) if not (ds.add_episode(_draft(f"L{i}")) and _finds(ds, f"L{i}"))
        ]
        stats = mem.reads.stats()
    assert missed == []
    assert stats["replica"] >= 30, stats  # the replica served (it did not all fall to the primary)


def test_a_replica_behind_the_bound_is_skipped_and_eventual_reads_do_not_wait(
    pair: StreamingPair, standby: EmbeddedServer
) -> None:
    with (
        _open(pair, standby, max_wait_s=0.2, retry_after_s=60) as mem,
        _open(pair, standby, consistency="eventual") as eventual,
    ):
        ds, ev = mem.dataset("paused"), eventual.dataset("paused")
        ds.add_episode(_draft("p0"))
        pair.wait_replayed(standby)
        sql(standby.tcp_url(), "SELECT pg_wal_replay_pause()")
        try:
            ds.add_episode(_draft("p1"))
            assert _finds(ds, "p1")  # read-your-writes: served by the primary after the bound
            assert mem.reads.stats()["set_aside_lagging"] == 1
            assert not _finds(ev, "p1")  # eventual: the paused replica answered, without p1
            assert _finds(ev, "p0") and eventual.reads.stats().get("primary", 0) == 0
        finally:
            sql(standby.tcp_url(), "SELECT pg_wal_replay_resume()")


def test_a_standby_killed_mid_load_fails_no_search_and_is_used_again_later(
    pair: StreamingPair,
) -> None:
    victim = pair.add_standby()
    errors: list[BaseException] = []
    searches = [0]
    stop = threading.Event()
    with _open(pair, victim, retry_after_s=0.3) as mem:
        ds = mem.dataset("killed")
        ds.add_episode(_draft("k0"))

        def searcher() -> None:
            while not stop.is_set():
                try:
                    assert _finds(ds, "k0")
                    searches[0] += 1
                except BaseException as exc:
                    errors.append(exc)

        def writer() -> None:
            for i in range(1, 1000):
                if stop.is_set():
                    return
                ds.add_episode(_draft(f"k{i}"))

        threads = [threading.Thread(target=searcher) for _ in range(3)]
        threads.append(threading.Thread(target=writer))
        for t in threads:
            t.start()
        try:
            wait_until(lambda: mem.reads.stats().get("replica", 0) >= 10, 60, "replica reads")
            pair.kill(victim)
            served = mem.reads.stats().get("primary", 0)
            wait_until(lambda: mem.reads.stats().get("primary", 0) >= served + 10, 60, "primary")
        finally:
            stop.set()
            for t in threads:
                t.join(60)
        assert errors == [] and searches[0] >= 20
        # Found dead either by the health check before a read ("down") or by a read it broke
        # off ("failed", then run on the primary): which one comes first is a matter of timing.
        stats = mem.reads.stats()
        assert stats.get("set_aside_down", 0) + stats.get("set_aside_failed", 0) >= 1
        # Restarted, it is tried again after retry_after_s and serves reads again.
        victim.start()
        before = mem.reads.stats()["replica"]
        wait_until(
            lambda: _finds(ds, "k0") and mem.reads.stats()["replica"] > before,
            60,
            "the restarted replica to serve a search",
        )


def test_a_promoted_standby_is_left_out(pair: StreamingPair) -> None:
    promoted = pair.add_standby()
    with _open(pair, promoted, consistency="eventual") as mem:
        ds = mem.dataset("promoted")
        ds.add_episode(_draft("m0"))
        pair.wait_replayed(promoted)
        assert _finds(ds, "m0") and mem.reads.stats()["replica"] >= 1
        pair.promote(promoted)
        ds.add_episode(_draft("m1"))
        assert _finds(ds, "m1")  # from the primary: the promoted server left its timeline
        stats = mem.reads.stats()
        assert stats["set_aside_promoted"] >= 1 and stats["primary"] >= 1


class _Counting(HashEmbedder):
    """Counts the queries it embeds."""

    def __init__(self) -> None:
        super().__init__(384)
        self.queries = 0

    def embed_query(self, text: str) -> Any:
        self.queries += 1
        return super().embed_query(text)


def _break_recall_once(engine: Any) -> list[int]:
    """Make ``engine``'s next recall statement fail as a replica breaking off a read would."""
    broke: list[int] = []

    def fail(_c: Any, _cur: Any, statement: str, *_args: Any) -> None:
        if not broke and "<=>" in statement:
            broke.append(1)
            raise ConnectionFailed("the replica closed the connection (injected)")

    event.listen(engine, "before_cursor_execute", fail)
    return broke


def test_a_replica_that_breaks_off_a_search_costs_no_second_embedding(
    pair: StreamingPair, standby: EmbeddedServer
) -> None:
    emb = _Counting()
    settings = ReplicaSettings(urls=(standby.tcp_url(),), max_wait_s=10.0, retry_after_s=60)
    with Memory.open(pair.primary_url, embedder=emb, read_replicas=settings) as mem:
        ds = mem.dataset("broken-off")
        ds.add_episode(_draft("b0"))
        broke = _break_recall_once(mem.reads.replicas[0].engine)
        before = emb.queries
        assert _finds(ds, "b0")  # the search ran again on the primary, not from the start
        assert broke and emb.queries == before + 1
        stats = mem.reads.stats()
        assert stats["set_aside_failed"] == 1 and stats["primary_after_failure"] == 1, stats


def test_the_async_api_reads_from_replicas_and_reruns_only_the_broken_read(
    pair: StreamingPair, standby: EmbeddedServer
) -> None:
    emb = _Counting()
    settings = ReplicaSettings(urls=(standby.tcp_url(),), max_wait_s=10.0, retry_after_s=60)

    async def main() -> tuple[Any, ...]:
        async with AsyncMemory.open(pair.primary_url, embedder=emb, read_replicas=settings) as m:
            ds = m.dataset("async-routing")
            await ds.add_episode(_draft("a1"))  # read-your-writes: the search sees it
            found = await ds.search(_draft("a1")["summary"], top_k=5)
            port = await ds._read(lambda c: c.execute(text("SELECT inet_server_port()")).scalar())
            served = dict(m.reads.stats()) if m.reads else {}
            broke = _break_recall_once(m._replicas[standby.tcp_url()].sync_engine)
            before = emb.queries
            again = await ds.search(_draft("a1")["summary"], top_k=5)
            return found, port, served, broke, emb.queries - before, again, m.reads.stats()

    found, port, served, broke, embedded, again, stats = asyncio.run(main())
    assert [r.name for r in found.results][:1] == [_draft("a1")["name"]]
    assert port == standby.port != pair.primary.port
    assert served["replica"] >= 3 and served.get("primary", 0) == 0, served
    assert (
        broke
        and embedded == 1
        and [r.name for r in again.results] == [r.name for r in found.results]
    )
    assert stats["set_aside_failed"] == 1 and stats["primary_after_failure"] == 1, stats
