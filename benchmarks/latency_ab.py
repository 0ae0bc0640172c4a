"""Search latency of two code trees on one store, in one run (issue 26: facts that change must not
slow search down).

Builds one dataset of about ``--rows`` embedding rows from the generated conversations of
:mod:`benchmarks.updates_data` (facts that change: closures, links, dated sessions) with the
current tree, then asks every conversation's questions through each tree in turn, in alternating
worker processes (``PYTHONPATH`` set to the tree), so both meet the same machine load. Each
search's time is its wall time less the query embedding (``timings_ms["embed"]``: the same model
call in both). Reports the median and p90 of each tree and their ratio.

    python -m benchmarks.latency_ab --base /tmp/base-tree            # base: a checkout of main
    python -m benchmarks.latency_ab --base /tmp/base-tree --rows 4000 --rounds 6
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import text

from benchmarks import common
from benchmarks.updates_data import conversations
from memflow.db.engine import transaction
from memflow.memory import Memory

DATASET = "latency"

# What a worker runs in its tree: open the store, search each query once, print the times.
WORKER = r"""
import json, sys, time
from memflow.embed.factory import make_embedder
from memflow.memory import Memory
cfg = json.loads(sys.stdin.read())
out = []
with Memory.open(cfg["url"], embedder=make_embedder(cfg["embedder"])) as mem:
    ds = mem.dataset(cfg["dataset"], create=False)
    ds.search("warm up", display="highly_related")
    for q in cfg["queries"]:
        t = time.perf_counter()
        resp = ds.search(q, display="highly_related")
        wall = (time.perf_counter() - t) * 1000
        out.append(wall - float(resp.timings_ms.get("embed", 0.0)))
print(json.dumps(out))
"""


def embedding_rows(mem: Memory, dataset: str) -> int:
    ds = mem.dataset(dataset)
    ctx = ds.context
    tables = ("episode_summary", "facet_search_text", "facet_anchor_text",
              "facetpoint_search_text", "entity_name", "edge_text")  # fmt: skip
    with transaction(ctx.engine, ctx.dataset_id) as conn:
        return sum(
            int(
                conn.execute(
                    text(f"SELECT count(*) FROM memflow.{t} WHERE dataset_id = :d"),
                    {"d": ctx.dataset_id},
                ).scalar_one()
            )
            for t in tables
        )


def build(mem: Memory, rows: int) -> list[str]:
    """The dataset, filled with generated conversations until it holds ``rows`` embedding rows;
    returns their questions."""
    ds = mem.dataset(DATASET)
    questions: list[str] = []
    for conv in conversations(200, 12):
        for session in conv.sessions:
            doc = {"title": conv.cid, "sessions": [session]}
            ds.memorize(json.dumps(doc, ensure_ascii=False), content_type="conversation",
                        extractor="rules",
                        reference_time=datetime.fromisoformat(session["started_at"]))  # fmt: skip
        questions += [q.text for q in conv.questions if q.as_of is None]
        if embedding_rows(mem, DATASET) >= rows:
            break
    return questions


def run_worker(tree: Path, url: str, embedder: str, queries: list[str]) -> list[float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cfg = {"url": url, "embedder": embedder, "dataset": DATASET, "queries": queries}
    done = subprocess.run([sys.executable, "-c", WORKER], input=json.dumps(cfg), env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    times: list[float] = json.loads(done.stdout.strip().splitlines()[-1])
    return times


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--base", type=Path, required=True, help="the other tree (a checkout)")
    ap.add_argument("--home", type=Path, default=common.DEFAULT_HOME, help="embedded server home")
    ap.add_argument("--embedder", default="local")
    ap.add_argument("--rows", type=int, default=4000, help="embedding rows of the dataset")
    ap.add_argument("--rounds", type=int, default=6, help="alternating worker runs per tree")
    ap.add_argument("--out", type=Path, default=None, help="write the JSON result here")
    args = ap.parse_args(argv)
    from memflow.embed.factory import make_embedder

    this = common.REPO
    admin = common.server_url(None, args.home)
    with common.scratch_database(admin, "latency_ab") as url:
        with Memory.open(url, embedder=make_embedder(args.embedder)) as mem:
            queries = build(mem, args.rows)
            rows = embedding_rows(mem, DATASET)
        times: dict[str, list[float]] = {"base": [], "this": []}
        for i in range(args.rounds):
            for name, tree in (("base", args.base), ("this", this))[:: 1 if i % 2 == 0 else -1]:
                t = time.perf_counter()
                times[name] += run_worker(tree, url, args.embedder, queries)
                print(f"  round {i + 1} {name}: {time.perf_counter() - t:.0f} s", flush=True)
    stats = {name: common.percentiles(v) for name, v in times.items()}
    res = {
        "stamp": common.stamp(
            {
                "rows": rows,
                "queries": len(queries),
                "rounds": args.rounds,
                "base": _head(args.base),
                "embedder": args.embedder,
            }
        ),
        "searches": {name: len(v) for name, v in times.items()},
        "ms": stats,
        "ratio_p50": round(stats["this"]["p50"] / stats["base"]["p50"], 3),
    }
    print(json.dumps(res, indent=1))
    if args.out:
        common.write_json(args.out, res)
    return res


def _head(tree: Path) -> str:
    got = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short=12", "HEAD"],
                         capture_output=True, text=True)  # fmt: skip
    return got.stdout.strip()


if __name__ == "__main__":
    main(sys.argv[1:])
