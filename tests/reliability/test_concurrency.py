"""Concurrency: processes writing documents that share entities at once, real deadlocks and
serialization failures retried with backoff, and (marker ``load``) searchers with writers."""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
import time
from collections import Counter
from typing import Any

import psycopg
import pytest
from psycopg import sql
from sqlalchemy import text

from memflow.config import libpq_url
from memflow.db import engine as dbe
from memflow.db.queries import q
from memflow.drafts import EntityDraft
from memflow.errors import ConnectionFailed, DatabaseError
from memflow.memory import Memory
from memflow.store.plan import Planner

from ._support import assert_intact, doc_drafts, expected_stats, percentile, record
from ._workers import load_searcher, load_writer, memorize_writer

PROCESSES = 8
COMMON_DOC = 99


def meeting_text(i: int) -> str:
    return (
        f"Ines Lopez met the PostgreSQL team in the Beijing office on May {1 + i % 27}, 2024. "
        f"They agreed to move ticket T-{i} to Kubernetes before the Q3 roadmap review. "
        f"Latency of /chat/completions grew by {10 + i} ms after release {i}.\n\n"
        f"王小明 will follow up on ticket T-{i} next week."
    )


def _run_processes(
    targets: list[tuple[Any, tuple[Any, ...]]], timeout: float
) -> list[dict[str, Any]]:
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    barrier = ctx.Barrier(len(targets))
    procs = [ctx.Process(target=fn, args=(*args, barrier, out)) for fn, args in targets]
    for p in procs:
        p.start()
    reports = []
    deadline = time.monotonic() + timeout
    try:
        for _ in procs:
            reports.append(out.get(timeout=max(1.0, deadline - time.monotonic())))
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
                p.join()
    assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
    return reports


def test_eight_processes_memorizing_shared_entities(mem: Memory, db_url: str) -> None:
    ds = mem.dataset("concurrent")
    docs = {p: [2 * p, 2 * p + 1, 2 * p + 2, COMMON_DOC] for p in range(PROCESSES)}
    texts = {
        p: [meeting_text(2 * p), meeting_text(2 * p + 1), meeting_text(COMMON_DOC)] for p in docs
    }
    started = time.perf_counter()
    reports = _run_processes(
        [(memorize_writer, (db_url, "concurrent", docs[p], texts[p])) for p in docs], timeout=240
    )
    seconds = time.perf_counter() - started
    errors = [e for r in reports for e in r["errors"]]
    assert errors == []
    # Every distinct document was written exactly once; every other attempt saw it and skipped.
    written = Counter(i for r in reports for i, s in r["statuses"].items() if s == "written")
    distinct = sorted({i for d in docs.values() for i in d})
    assert sorted(written) == distinct and set(written.values()) == {1}
    text_status = Counter(s for r in reports for s in r["text_statuses"])
    assert text_status == {"written": 2 * PROCESSES + 1, "skipped": PROCESSES - 1}
    # Exact counts: the drafts documents alone are predictable from their plans, and the text
    # documents give what one process writing them one after the other gives.
    ref = mem.dataset("sequential")
    for i in distinct:
        ref.add_episodes(doc_drafts(i))
    assert ref.stats() == expected_stats(ref.id, [doc_drafts(i) for i in distinct])
    seq = sorted({t for ts in texts.values() for t in ts})
    ref.memorize(seq, content_type="text", extractor="rules", routing=False)
    assert ds.stats() == ref.stats()
    with psycopg.connect(libpq_url(db_url)) as conn:
        dup = conn.execute(
            "SELECT canonical_name, count(*) FROM memflow.node WHERE kind = 'Entity' "
            "AND dataset_id = %s GROUP BY 1 HAVING count(*) > 1",
            (ds.id,),
        ).fetchall()
        ines = conn.execute(
            "SELECT count(*) FROM memflow.node WHERE kind = 'Entity' AND dataset_id = %s "
            "AND canonical_name = 'ines lopez'",
            (ds.id,),
        ).fetchone()
    assert dup == [] and ines == (1,)
    assert_intact(db_url)
    record(
        "concurrent_writers",
        processes=PROCESSES,
        documents=len(distinct) + len(seq),
        attempts=sum(len(d) + len(t) for d, t in zip(docs.values(), texts.values(), strict=True)),
        retries=sum(r["retries"] for r in reports),
        errors=len(errors),
        duplicate_entities=len(dup),
        entities=int(ds.stats()["entities"]),
        equal_to_sequential=ds.stats() == ref.stats(),
        seconds=round(seconds, 1),
    )


@pytest.fixture
def accounts(db_url: str) -> str:
    with psycopg.connect(libpq_url(db_url), autocommit=True) as conn:
        conn.execute("CREATE TABLE public.accounts (id int PRIMARY KEY, v int NOT NULL)")
        conn.execute("INSERT INTO public.accounts VALUES (1, 0), (2, 0)")
        conn.execute(
            sql.SQL("ALTER DATABASE {} SET deadlock_timeout = '200ms'").format(
                sql.Identifier(conn.info.dbname)
            )
        )
    return db_url


def _run_pair(url: str, body: Any) -> tuple[Counter[str], list[BaseException]]:
    """Two threads each running ``body(conn, name, first_attempt)`` under run_with_retry, with a
    barrier inside the first attempt so their transactions overlap."""
    eng = dbe.make_engine(url)
    barrier = threading.Barrier(2)
    attempts: Counter[str] = Counter()
    errors: list[BaseException] = []

    def worker(name: str) -> None:
        def attempt() -> None:
            attempts[name] += 1
            with dbe.transaction(eng) as conn:
                body(conn, name, attempts[name] == 1, barrier)

        try:
            dbe.run_with_retry(attempt)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in ("one", "two")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    eng.dispose()
    return attempts, errors


def test_a_real_deadlock_is_retried_and_never_surfaced(accounts: str) -> None:
    order = {"one": (1, 2), "two": (2, 1)}

    def body(conn: Any, name: str, first: bool, barrier: threading.Barrier) -> None:
        a, b = order[name]
        conn.execute(text("UPDATE public.accounts SET v = v + 1 WHERE id = :i"), {"i": a})
        if first:
            barrier.wait(timeout=10)
        conn.execute(text("UPDATE public.accounts SET v = v + 1 WHERE id = :i"), {"i": b})

    attempts, errors = _run_pair(accounts, body)
    assert errors == []
    assert sorted(attempts.values()) == [1, 2]  # exactly one victim, retried once
    with psycopg.connect(libpq_url(accounts)) as conn:
        rows: dict[int, int] = dict(conn.execute("SELECT id, v FROM public.accounts").fetchall())
    assert rows == {1: 2, 2: 2}
    record("deadlock_retry", attempts=sorted(attempts.values()), errors=len(errors))


def test_a_serialization_failure_is_retried_and_never_surfaced(accounts: str) -> None:
    def body(conn: Any, name: str, first: bool, barrier: threading.Barrier) -> None:
        conn.execute(text("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE"))
        total = conn.execute(text("SELECT sum(v) FROM public.accounts")).scalar()
        if first:
            barrier.wait(timeout=10)
        row = 1 if name == "one" else 2
        conn.execute(
            text("UPDATE public.accounts SET v = :t + 1 WHERE id = :i"), {"t": total, "i": row}
        )

    attempts, errors = _run_pair(accounts, body)
    assert errors == []
    assert sorted(attempts.values()) == [1, 2]
    # Serial order: the survivor saw 0 and wrote 1; the retried one saw 1 and wrote 2.
    with psycopg.connect(libpq_url(accounts)) as conn:
        rows = conn.execute("SELECT v FROM public.accounts").fetchall()
    assert sorted(r[0] for r in rows) == [1, 2]
    record("serialization_retry", attempts=sorted(attempts.values()), errors=len(errors))


def test_retries_back_off_and_give_up_with_a_memflow_error(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    delays: list[float] = []
    monkeypatch.setattr("memflow.db.engine.time.sleep", delays.append)
    eng = dbe.make_engine(db_url)
    calls = Counter[str]()

    def always_deadlocks() -> None:
        calls["n"] += 1
        with dbe.transaction(eng) as conn:
            conn.execute(
                text(
                    "DO $$ BEGIN RAISE EXCEPTION 'forced' USING ERRCODE = 'deadlock_detected'; END $$"
                )
            )

    with pytest.raises(DatabaseError, match=r"40P01.*retry") as info:
        dbe.run_with_retry(always_deadlocks, attempts=5, base_delay=0.01)
    eng.dispose()
    assert not isinstance(info.value, ConnectionFailed)
    assert calls["n"] == 5 and len(delays) == 4
    # Exponential backoff with jitter in [0.5, 1.5) of base * 2^k.
    for k, d in enumerate(delays):
        assert 0.005 * 2**k <= d < 0.015 * 2**k
    record(
        "retry_give_up",
        attempts=calls["n"],
        raised=type(info.value).__name__,
        delays_ms=[round(1000 * d, 2) for d in delays],
    )


@pytest.mark.load
def test_sixteen_searchers_and_two_writers_for_sixty_seconds(mem: Memory, db_url: str) -> None:
    seconds = float(os.environ.get("MEMFLOW_LOAD_SECONDS", "60"))
    ds = mem.dataset("load")
    for i in range(40):
        ds.add_episodes(doc_drafts(i))
    ds.memorize([meeting_text(i) for i in range(20)], content_type="text", extractor="rules")
    queries = [
        "who leads the meeting about ticket T-3-1",
        "what did Ines Lopez decide",
        "latency of /chat/completions",
        "Kubernetes move",
        "王小明 follow up",
        "Beijing office in May 2024",
        "risk 12.1",
        "'; DROP TABLE memflow.node; --",
    ]
    before = int(ds.stats()["documents"])
    searcher_procs, threads_each = 4, 4
    targets: list[tuple[Any, tuple[Any, ...]]] = [
        (load_searcher, (db_url, "load", queries, threads_each, seconds))
        for _ in range(searcher_procs)
    ] + [(load_writer, (db_url, "load", 1000 + 100_000 * w, seconds)) for w in range(2)]
    reports = _run_processes(targets, timeout=seconds + 240)
    search = [r for r in reports if r["kind"] == "search"]
    writes = [r for r in reports if r["kind"] == "write"]
    errors = [e for r in reports for e in r["errors"]]
    lat = [x for r in search for x in r["latencies"]]
    wlat = [x for r in writes for x in r["latencies"]]
    written = [i for r in writes for i in r["written"]]
    assert errors == [], errors[:5]
    assert all(r["calls"] >= threads_each for r in search), [r["calls"] for r in search]
    assert int(ds.stats()["documents"]) == before + len(written)  # no write lost
    assert_intact(db_url)
    figures = {
        "clients": searcher_procs * threads_each,
        "writers": len(writes),
        "seconds": seconds,
        "searches": len(lat),
        "search_p50_ms": round(1000 * percentile(lat, 50), 1),
        "search_p95_ms": round(1000 * percentile(lat, 95), 1),
        "search_p99_ms": round(1000 * percentile(lat, 99), 1),
        "documents_written": len(written),
        "write_p95_ms": round(1000 * percentile(wlat, 95), 1),
        "retries": sum(r["retries"] for r in writes),
        "errors": len(errors),
    }
    print(figures)
    record("load", **figures)


def test_racing_inserts_of_one_entity_or_edge_never_raise(mem: Memory, db_url: str) -> None:
    """Writers that insert the same entity (or edge) at the same instant: the row has a second
    unique key (canonical name; source, relationship, target), and a conflict on it must end in
    "already there", not a unique violation. Many rounds, so the race window is hit."""
    ds = mem.dataset("race")
    threads, rounds = 6, 150
    eng = dbe.make_engine(db_url)
    barrier = threading.Barrier(threads)
    errors: list[BaseException] = []

    def worker() -> None:
        for r in range(rounds):
            planner = Planner(ds.id)
            ent = planner._entity(EntityDraft(name=f"Racer {r}"), [])
            other = planner._entity(EntityDraft(name=f"Rival {r}"), [])
            planner._edge(ent, "same_entity_as", other, f"Racer {r} = Rival {r}")
            nodes = [n.params(ds.id) for n in planner.plan.nodes.values()]
            edges = [e.params(ds.id) for e in planner.plan.edges.values()]
            try:
                barrier.wait(timeout=30)
                with dbe.transaction(eng, ds.id) as conn:
                    conn.execute(q("node_upsert"), nodes)
                    conn.execute(q("edge_upsert"), edges)
            except BaseException as exc:
                errors.append(exc)

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(timeout=120)
    eng.dispose()
    assert [repr(e) for e in errors] == []
    with psycopg.connect(libpq_url(db_url)) as conn:
        counts = conn.execute(
            "SELECT (SELECT count(*) FROM memflow.node WHERE dataset_id = %s AND kind = 'Entity'),"
            " (SELECT count(*) FROM memflow.edge WHERE dataset_id = %s)",
            (ds.id, ds.id),
        ).fetchone()
    assert counts == (2 * rounds, rounds)
