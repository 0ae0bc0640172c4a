"""Search latency of two code trees on one store, in one run (issue 26: facts that change must not
slow search down).

Builds one dataset of about ``--rows`` embedding rows from the generated conversations of
:mod:`benchmarks.updates_data` (facts that change: closures, links, dated sessions) with the
current tree, then asks every conversation's questions through each tree in turn, in alternating
worker processes started in the tree (working directory and ``PYTHONPATH``; each worker checks
that it imported that tree's memflow), so both meet the same machine load. Each search's time is
its wall time less the query embedding (``timings_ms["embed"]``: the same model call in both).
Reports the median and p95 of each tree and the ratio of the medians (this / base).

    python -m benchmarks.latency_ab --base /tmp/base-tree            # base: a checkout
    python -m benchmarks.latency_ab --base /tmp/base-tree --rows 4000 --rounds 6 --out docs/benchmarks
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from sqlalchemy import text
from sqlalchemy.engine import make_url

from benchmarks import common
from benchmarks.updates_data import conversations
from memflow.config import libpq_url
from memflow.db import migrate
from memflow.db.engine import make_engine, transaction
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


# Run first in every worker: memflow must come from the worker's tree (a ``python -c`` puts its
# working directory before PYTHONPATH, so a worker started elsewhere runs that directory's code).
GUARD = r"""
import os, pathlib, memflow
_tree = pathlib.Path(os.environ["MEMFLOW_AB_TREE"]).resolve()
if not pathlib.Path(memflow.__file__).resolve().is_relative_to(_tree):
    raise SystemExit(f"memflow imported from {memflow.__file__}, not from {_tree}")
"""


def run_in_tree(tree: Path, code: str, payload: dict[str, Any]) -> Any:
    """Run ``code`` with this interpreter in ``tree`` (its memflow and benchmarks), ``payload``
    as JSON on its standard input; returns the JSON its last output line holds. Its standard
    error (progress) passes through."""
    tree = tree.resolve()
    env = {**os.environ, "PYTHONPATH": str(tree), "MEMFLOW_AB_TREE": str(tree),
           "OMP_WAIT_POLICY": "PASSIVE"}  # fmt: skip
    done = subprocess.run([sys.executable, "-c", GUARD + code], input=json.dumps(payload),
                          cwd=tree, env=env, stdout=subprocess.PIPE, text=True)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"the worker in {tree} failed (exit {done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


HEAD_REVISION = (
    "import json\nfrom memflow.db import migrate\nprint(json.dumps(migrate.head_revision()))\n"
)


@contextmanager
def schema_copy(admin_url: str, url: str, revision: str) -> Iterator[str]:
    """A copy of the database of ``url`` (same rows) with its schema taken down to ``revision``
    (the base tree's head: older code refuses a newer schema); dropped afterwards."""
    if revision == migrate.head_revision():
        yield url
        return
    source = make_url(url).database
    name = f"{source}_base"
    with psycopg.connect(libpq_url(admin_url), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {source}")
    copy = common.with_database(admin_url, name)
    try:
        eng = make_engine(copy, pool_size=1)
        try:
            with eng.begin() as conn:
                migrate.downgrade(conn, revision)
        finally:
            eng.dispose()
        yield copy
    finally:
        with psycopg.connect(libpq_url(admin_url), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def run_worker(tree: Path, url: str, embedder: str, queries: list[str]) -> list[float]:
    cfg = {"url": url, "embedder": embedder, "dataset": DATASET, "queries": queries}
    times: list[float] = run_in_tree(tree, WORKER, cfg)
    return times


def markdown(res: dict[str, Any]) -> str:
    st, ms = res["stamp"], res["ms"]
    settings = st["settings"]
    rows = [
        [name, settings["trees"][name], res["searches"][name], ms[name]["p50"], ms[name]["p95"],
         ms[name]["mean"]]
        for name in ("base", "this")
    ]  # fmt: skip
    lines = [
        "# Search latency, two code trees on one store (benchmarks/latency_ab.py)",
        "",
        common.stamp_markdown(st),
        "",
        f"One dataset of {settings['rows']:,} embedding rows (generated conversations of facts "
        "that change, memorised by this tree), "
        f"{settings['queries']} questions asked by each tree in {settings['rounds']} alternating "
        "rounds of worker processes (each started in its tree). Per search: wall time less the "
        "query embedding, in ms (`display=highly_related`, default budget).",
        "",
        common.md_table(["tree", "commit", "searches", "p50 ms", "p95 ms", "mean ms"], rows),
        "",
        f"- ratio of the medians (this / base): {res['ratio_p50']}",
        f"- ratio of the p95s (this / base): {res['ratio_p95']}",
    ]
    if "round_ratios" in res:  # each round: this tree's median over the base's, in one pair
        lines.append(
            f"- per round (the two trees' medians in the same pair of runs, this / base): "
            f"{', '.join(str(r) for r in res['round_ratios'])}; their median "
            f"{res['ratio_p50_rounds']}"
        )
    lines += [f"- {note}" for note in res.get("notes", [])]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--base", type=Path, help="the other tree (a checkout; required to run)")
    ap.add_argument("--home", type=Path, default=common.DEFAULT_HOME, help="embedded server home")
    ap.add_argument("--database-url", default=None, help="use this PostgreSQL server instead")
    ap.add_argument("--embedder", default="local")
    ap.add_argument("--rows", type=int, default=4000, help="embedding rows of the dataset")
    ap.add_argument("--rounds", type=int, default=6, help="alternating worker runs per tree")
    common.page_args(ap, "latency-ab")
    args = ap.parse_args(argv)
    if args.render_only:
        return common.render_only(args.out or common.DEFAULT_OUT, args.name, args.note, markdown)
    if args.base is None:
        ap.error("--base is required (a checkout of the tree to compare with)")
    from memflow.embed.factory import make_embedder

    this = common.REPO
    stamp = common.stamp({}, __file__, argv)  # the commit the run starts on
    trees = {"base": head_of(args.base), "this": stamp["commit"][:12]}
    admin = common.server_url(args.database_url, args.home)
    base_revision = run_in_tree(args.base, HEAD_REVISION, {})
    with common.scratch_database(admin, "latency_ab") as url:
        with Memory.open(url, embedder=make_embedder(args.embedder)) as mem:
            queries = build(mem, args.rows)
            rows = embedding_rows(mem, DATASET)
        with schema_copy(admin, url, base_revision) as base_url:
            times: dict[str, list[list[float]]] = {"base": [], "this": []}
            trees = (("base", args.base, base_url), ("this", this, url))
            for i in range(args.rounds):
                for name, tree, db in trees[:: 1 if i % 2 == 0 else -1]:
                    t = time.perf_counter()
                    times[name].append(run_worker(tree, db, args.embedder, queries))
                    print(f"  round {i + 1} {name}: {time.perf_counter() - t:.0f} s", flush=True)
    stats = {name: common.percentiles([t for r in v for t in r]) for name, v in times.items()}
    rounds = [
        round(float(np.median(t)) / float(np.median(b)), 3)
        for b, t in zip(times["base"], times["this"], strict=True)
    ]
    settings = {
        "rows": rows,
        "queries": len(queries),
        "rounds": args.rounds,
        "trees": trees,
        "schema": {"base": base_revision, "this": migrate.head_revision()},
        "embedder": args.embedder,
    }
    res = {
        "stamp": {**stamp, "settings": settings},
        "searches": {name: sum(len(r) for r in v) for name, v in times.items()},
        "ms": stats,
        "ratio_p50": round(stats["this"]["p50"] / stats["base"]["p50"], 3),
        "ratio_p95": round(stats["this"]["p95"] / stats["base"]["p95"], 3),
        "round_ratios": rounds,
        "ratio_p50_rounds": round(float(np.median(rounds)), 3),
        "ms_by_round": times,
        "notes": list(args.note),
    }
    return publish(res, args.out, args.name, markdown)


def publish(
    res: dict[str, Any], out: Path | None, name: str, markdown: Callable[[dict[str, Any]], str]
) -> dict[str, Any]:
    """Print the page of ``res``; with ``out``, write ``<name>.json`` and ``<name>.md`` there."""
    if out:
        common.write_json(out / f"{name}.json", res)
        common.write_text(out / f"{name}.md", markdown(res))
    print(markdown(res))
    return res


def head_of(tree: Path) -> str:
    """The short commit a tree is checked out at."""
    got = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short=12", "HEAD"],
                         capture_output=True, text=True)  # fmt: skip
    return got.stdout.strip()


if __name__ == "__main__":
    main(sys.argv[1:])
