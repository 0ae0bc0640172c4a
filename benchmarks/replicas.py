"""Read replicas under load (docs/benchmarks/replicas.md): 16 search clients and 2 writers against
the primary alone, then against the primary plus one streaming standby.

Both servers are started here from the embedded server's binaries (tests/support/replication.py:
a primary listening on 127.0.0.1 and a ``pg_basebackup -R`` standby). Each client is a process of
its own with its own ``Memory`` (hash embedder: the searches cost the database, not a model). For
each setup: searches per second, latency p50/p95, failed searches, the writers' episodes per
second, the standby's replay lag seen on the primary (``pg_stat_replication``), and who served the
reads. Then read-your-writes: 1,000 write -> search pairs through the replica, each search must find
the episode just written.

Run: ``python -m benchmarks.replicas [--quick] [--out DIR] [--seconds 30]``
(``--quick``: 4 clients (threads), 1 writer, 3 s, at most 50 pairs; the test suite uses it as a smoke test).
"""

from __future__ import annotations

import argparse
import contextlib
import queue
import random
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from benchmarks import common
from tests.support.replication import StreamingPair, sql

DATASET = "bench-replicas"
WORDS = (
    "deploy rollback cluster staging invoice refund latency cache schema migration quota "
    "backup audit release canary 部署 回滚 发布 缓存 账单 延迟 迁移 备份 审计 配额"
).split()


def _draft(rng: random.Random, tag: str) -> dict[str, Any]:
    words = " ".join(rng.choice(WORDS) for _ in range(12))
    return {"name": f"episode {tag}", "summary": f"{tag}: {words}"}


def _open(primary: str, replicas: Sequence[str]) -> Any:
    from memflow.config import ReplicaSettings
    from memflow.embed.hash import HashEmbedder
    from memflow.memory import Memory

    settings = ReplicaSettings(urls=tuple(replicas), max_wait_s=1.0, retry_after_s=1.0)
    return Memory.open(primary, embedder=HashEmbedder(384), read_replicas=settings)


def client(
    kind: str, seed: int, primary: str, replicas: Sequence[str], seconds: float, ready: Any, go: Any
) -> dict[str, Any]:
    """One client: once every client is ready (``go``), searches (or writes) for ``seconds``."""
    rng = random.Random(seed)
    lat: list[float] = []
    errors: list[str] = []
    with _open(primary, replicas) as mem:
        ds = mem.dataset(DATASET)
        ready.put(seed)
        go.wait()
        end = time.monotonic() + seconds
        i = 0
        while time.monotonic() < end:
            t = time.perf_counter()
            try:
                if kind == "search":
                    ds.search(" ".join(rng.choice(WORDS) for _ in range(3)), top_k=5)
                else:
                    ds.add_episode(_draft(rng, f"w{seed}-{i}"))
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {str(exc)[:160]}")
            else:
                lat.append((time.perf_counter() - t) * 1000)
            i += 1
        return {"kind": kind, "latencies_ms": lat, "errors": errors, "reads": mem.reads.stats()}


def _lag_monitor(primary: str, stop: threading.Event, out: list[tuple[float, float]]) -> None:
    """Sample the standby's replay lag on the primary (bytes behind, seconds behind) every 100 ms."""
    query = (
        "SELECT coalesce(max(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)), 0)::float8, "
        "coalesce(extract(epoch FROM max(replay_lag)), 0)::float8 FROM pg_stat_replication"
    )
    import psycopg

    from memflow.config import libpq_url

    with psycopg.connect(libpq_url(primary), autocommit=True) as conn:
        while not stop.wait(0.1):
            row = conn.execute(query).fetchone()
            if row:
                out.append((float(row[0]), float(row[1])))


def load_phase(
    primary: str,
    replicas: Sequence[str],
    searchers: int,
    writers: int,
    seconds: float,
    *,
    processes: bool = True,
) -> dict[str, Any]:
    """The clients as processes (each its own interpreter, as separate agents would be), or as
    threads of this process (``--quick``: no interpreter start-up on a loaded machine)."""
    lag: list[tuple[float, float]] = []
    stop = threading.Event()
    monitor = threading.Thread(target=_lag_monitor, args=(primary, stop, lag))
    kinds = ["search"] * searchers + ["write"] * writers
    with contextlib.ExitStack() as stack:
        pool: Executor
        if processes:
            ctx = get_context("spawn")
            manager = stack.enter_context(ctx.Manager())
            ready, go = manager.Queue(), manager.Event()
            pool = stack.enter_context(ProcessPoolExecutor(len(kinds), mp_context=ctx))
        else:
            ready, go = queue.Queue(), threading.Event()
            pool = stack.enter_context(ThreadPoolExecutor(len(kinds)))
        futures = [
            pool.submit(client, kind, i, primary, list(replicas), seconds, ready, go)
            for i, kind in enumerate(kinds)
        ]
        for _ in kinds:
            ready.get(timeout=600)
        monitor.start()
        go.set()
        results = [f.result() for f in futures]
    stop.set()
    monitor.join()
    searches = [r for r in results if r["kind"] == "search"]
    writes = [r for r in results if r["kind"] == "write"]
    s_lat = [x for r in searches for x in r["latencies_ms"]]
    reads: dict[str, int] = {}
    for r in searches:
        for k, v in r["reads"].items():
            reads[k] = max(reads.get(k, 0), v) if k == "max_lag_bytes" else reads.get(k, 0) + v
    lag_bytes = [b for b, _ in lag]
    lag_s = [s for _, s in lag]
    return {
        "replicas": len(replicas),
        "search_clients": searchers,
        "writers": writers,
        "seconds": seconds,
        "searches": len(s_lat),
        "searches_per_s": round(len(s_lat) / seconds, 1),
        "search_latency_ms": common.percentiles(s_lat),
        "failed_searches": sum(len(r["errors"]) for r in searches),
        "episodes_written": sum(len(r["latencies_ms"]) for r in writes),
        "writes_per_s": round(sum(len(r["latencies_ms"]) for r in writes) / seconds, 1),
        "failed_writes": sum(len(r["errors"]) for r in writes),
        "error_samples": [e for r in results for e in r["errors"]][:5],
        "reads_served": reads,
        "replay_lag": {
            "samples": len(lag),
            "max_bytes": max(lag_bytes, default=0.0),
            "p95_bytes": common.percentiles(lag_bytes)["p95"] if lag_bytes else 0.0,
            "max_ms": round(1000 * max(lag_s, default=0.0), 1),
        },
    }


def read_your_writes(primary: str, replica: str, pairs: int) -> dict[str, Any]:
    """``pairs`` times: write an episode, then search its summary; count the searches that find it."""
    rng = random.Random(99)
    found = 0
    with _open(primary, [replica]) as mem:
        ds = mem.dataset(DATASET)
        for i in range(pairs):
            draft = _draft(rng, f"ryw-{i}")
            ds.add_episode(draft)
            names = [r.name for r in ds.search(draft["summary"], top_k=5).results]
            found += draft["name"] in names
        reads = mem.reads.stats()
    return {"pairs": pairs, "found": found, "share": round(found / pairs, 4), "reads": reads}


def markdown(data: dict[str, Any]) -> str:
    rows = []
    for name, p in data["phases"].items():
        lat = p["search_latency_ms"]
        served = p["reads_served"]
        rows.append(
            [
                name,
                p["search_clients"],
                p["writers"],
                p["searches_per_s"],
                lat["p50"],
                lat["p95"],
                p["failed_searches"],
                p["writes_per_s"],
                f"{served.get('replica', 0)} / {served.get('primary', 0)}",
                f"{p['replay_lag']['max_bytes']:,.0f} B, {p['replay_lag']['max_ms']} ms",
            ]
        )
    ryw = data["read_your_writes"]
    notes = "\n".join(f"- {n}" for n in data.get("notes", []))
    return f"""# Read replicas under load

`python -m benchmarks.replicas` (benchmarks/replicas.py): each setup runs {data["phases"]["primary only"]["search_clients"]} search
clients and {data["phases"]["primary only"]["writers"]} writers ({data["stamp"]["settings"].get("clients_are", "processes")}, each with its own `Memory`, hash embedder) for
{data["phases"]["primary only"]["seconds"]} s on a store of {data["seed_episodes"]} seed episodes.

**Both servers run on this one machine and share its {data["stamp"]["machine"]["cores"]} cores with the clients.** A
replica here adds no CPU: the figures show that routing, read-your-writes and the fallback work
under load and what they cost, not the throughput a replica on its own machine would add.

{common.md_table(["setup", "search clients", "writers", "searches/s", "p50 ms", "p95 ms", "failed searches", "writes/s", "reads by replica / primary", "max replay lag"], rows)}

Read-your-writes: **{ryw["found"]} of {ryw["pairs"]}** write → search pairs found the episode just written
({100 * ryw["share"]:.1f} %); reads served: `{ryw["reads"]}`.

Replay lag is sampled every 100 ms on the primary (`pg_stat_replication`: bytes between the
primary's WAL and the standby's replay position, and `replay_lag`). "reads by replica / primary"
counts the reads each served (`Memory.reads.stats()`: the searches plus each client's one
dataset lookup). With a replica, every search first asks the standby how far it has replayed (one
short query); a search would go to the primary only if the standby had not replayed the client's
own last write within the bound (1 s here), and the search clients never write. Other work on the
machine changes between the two runs (see the load average): compare them as orders of
magnitude, not to the percent.

{notes}

{common.stamp_markdown(data["stamp"])}
"""


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description="memflow read replica benchmark")
    ap.add_argument("--quick", action="store_true", help="tiny smoke run (the test suite uses it)")
    ap.add_argument("--out", type=Path, default=common.DEFAULT_OUT)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--searchers", type=int, default=16)
    ap.add_argument("--writers", type=int, default=2)
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--seed-episodes", type=int, default=300)
    ap.add_argument("--note", action="append", default=[], help="a note for the Markdown")
    ap.add_argument(
        "--render-only",
        action="store_true",
        help="rewrite replicas.md from replicas.json (with --note)",
    )
    args = ap.parse_args(argv)
    if args.render_only:
        return common.render_only(args.out, "replicas", args.note, markdown)
    if args.quick:
        args.seconds, args.searchers, args.writers, args.seed_episodes = 3, 4, 1, 30
        args.pairs = min(args.pairs, 50)
    settings = {k: getattr(args, k) for k in ("quick", "seconds", "searchers", "writers", "pairs")}
    settings["clients_are"] = "threads" if args.quick else "processes"
    settings["embedder"] = "hash:384"
    pair = StreamingPair().start()
    try:
        from memflow.embed.hash import HashEmbedder
        from memflow.memory import Memory

        Memory.open(pair.primary_url, embedder=HashEmbedder(384), auto_upgrade=True).close()
        rng = random.Random(7)
        with _open(pair.primary_url, []) as mem:
            ds = mem.dataset(DATASET)
            for start in range(0, args.seed_episodes, 50):
                n = min(50, args.seed_episodes - start)
                ds.import_episodes([[_draft(rng, f"s{start + j}")] for j in range(n)])
        standby = pair.add_standby()
        pair.wait_replayed(standby)
        phases = {
            "primary only": load_phase(
                pair.primary_url, [], args.searchers, args.writers, args.seconds
            ),
            "primary + 1 replica": load_phase(
                pair.primary_url, [standby.tcp_url()], args.searchers, args.writers, args.seconds
            ),
        }
        ryw = read_your_writes(pair.primary_url, standby.tcp_url(), args.pairs)
        facts = {"standby_in_recovery": sql(standby.tcp_url(), "SELECT pg_is_in_recovery()")}
    finally:
        pair.destroy()
    data = {
        "stamp": common.stamp(settings),
        "seed_episodes": args.seed_episodes,
        "phases": phases,
        "read_your_writes": ryw,
        "facts": facts,
        "notes": args.note,
    }
    common.write_json(args.out / "replicas.json", data)
    common.write_text(args.out / "replicas.md", markdown(data))
    return data


if __name__ == "__main__":
    main()
