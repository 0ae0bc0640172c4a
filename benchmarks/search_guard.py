"""The cost of the graph, held (issue 28): episodic search against vector mode on one fixed
synthetic dataset, per stage, with the statements each search sends.

One dataset of a LongMemEval-sized store by default (``--rows 4200`` embedding rows: ~68
episodes, ~1,300 points; benchmarks/synth.py, seeded, so every run builds the same rows), one
scratch database. Queries are stored point vectors plus noise, served by a lookup embedder: the
query embedding is left out. Each query is searched episodic (``display=highly_related``, as the
LongMemEval benchmark asks) and in vector mode, alternately, in a worker process started in a
code tree (this one, and with ``--base`` another checkout, on a copy of the database with its
schema taken down to that tree's head), so trees meet the same machine load; rounds alternate.
Reported per tree: p50 and p95 of each mode (wall time, the embedding excluded), the p50 of each
stage (``timings_ms``), the statements one search sends (``before_cursor_execute``), and the
ratio episodic / vector of the p50s.

The guard (``--check``): a small run (``--rows 1200``) in this tree that fails (exit 1) when an
episodic or vector search sends more statements than the committed result records, or when
episodic / vector exceeds the recorded ratio by more than 50 %. ``.ci/run`` runs it.

    python -m benchmarks.search_guard --out docs/benchmarks              # the recorded result
    python -m benchmarks.search_guard --base /tmp/base-tree --rounds 4   # before / after
    python -m benchmarks.search_guard --check                            # the CI guard
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import common, synth
from benchmarks.latency_ab import head_of, run_in_tree, schema_copy
from memflow.config import libpq_url
from memflow.db import migrate

NAME = "search-guard"
FULL_ROWS, QUICK_ROWS = 4200, 1200
TOLERANCE = 1.5  # --check: episodic / vector may grow by 50 % over the recorded ratio

# Run in a worker in its tree: both modes for each query, alternately; wall time, stages and the
# statements sent. The lookup embedder returns the vector of the query being searched.
WORKER = r"""
import gc, json, sys, time
import numpy as np
from sqlalchemy import event
from memflow.memory import Memory
cfg = json.loads(sys.stdin.read())

# The time the cyclic collector's full passes (generation 2) took during each search.
full = {"ms": 0.0, "start": 0.0}
def on_gc(phase, info):
    if info["generation"] == 2:
        if phase == "start":
            full["start"] = time.perf_counter()
        else:
            full["ms"] += (time.perf_counter() - full["start"]) * 1000
gc.callbacks.append(on_gc)

class Lookup:
    name, dim = "bench-lookup", 384
    current = None
    def embed_query(self, text):
        return self.current
    def embed_passages(self, texts):
        return np.stack([self.current for _ in texts])

emb = Lookup()
out = {"episodic": [], "vector": []}
with Memory.open(cfg["url"], embedder=emb) as mem:
    ds = mem.dataset(cfg["dataset"], create=False)
    sent = []
    event.listen(mem.engine, "before_cursor_execute", lambda *a: sent.append(1))
    modes = {"episodic": {"display": "highly_related"}, "vector": {"mode": "vector"}}
    for warm in cfg["vectors"][:3]:
        emb.current = np.asarray(warm, dtype=np.float32)
        for opts in modes.values():
            ds.search("what did we agree about the rollout plan", **opts)
    for i, vec in enumerate(cfg["vectors"]):
        emb.current = np.asarray(vec, dtype=np.float32)
        order = list(modes) if i % 2 == 0 else list(modes)[::-1]
        for mode in order:
            sent.clear()
            full["ms"] = 0.0
            t, cpu = time.perf_counter(), time.thread_time()
            resp = ds.search("what did we agree about the rollout plan", **modes[mode])
            wall = (time.perf_counter() - t) * 1000
            cpu = (time.thread_time() - cpu) * 1000
            stages = {k: float(v) for k, v in resp.timings_ms.items()}
            out[mode].append({"ms": wall - stages.get("embed", 0.0), "stages": stages,
                              "statements": len(sent), "results": len(resp.results),
                              "full_gc_ms": full["ms"], "cpu_ms": cpu})
print(json.dumps(out))
"""


def build(url: str, rows: int, queries: int) -> tuple[list[list[float]], dict[str, int]]:
    """The fixed dataset loaded into the database of ``url``; the query vectors and its shape."""
    gen = synth.Generator(seed=28, topics=64)
    plan = synth.DatasetPlan(DATASET, uuid.uuid5(uuid.NAMESPACE_URL, DATASET), rows, "large")
    rep = synth.load_store(libpq_url(url), gen, [plan], maintenance_work_mem="256MB")
    vectors = [q.vector.tolist() for q in gen.queries(plan, queries)]
    shape = {
        "embedding_rows": rep.embedding_rows,
        "episodes": rep.rows.get("episode_summary", 0),
        "points": rep.rows.get("facetpoint_search_text", 0),
        "edges": rep.rows.get("edge", 0),
    }
    return vectors, shape


def summarise(runs: list[dict[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    """One tree's rounds: each mode's percentiles, stage medians and statements per search."""
    out: dict[str, Any] = {}
    for mode in ("episodic", "vector"):
        searches = [s for r in runs for s in r[mode]]
        stages: dict[str, list[float]] = {}
        for s in searches:
            for k, v in s["stages"].items():
                stages.setdefault(k, []).append(v)
        out[mode] = {
            "searches": len(searches),
            "ms": common.percentiles([s["ms"] for s in searches]),
            "stages_p50": {k: round(float(np.median(v)), 2) for k, v in sorted(stages.items())},
            "statements": max(s["statements"] for s in searches),
            "statements_min": min(s["statements"] for s in searches),
            # The searches during which the cyclic collector made a full pass, the time those
            # passes took, and the percentiles of the other searches.
            "full_gc": sum(1 for s in searches if s.get("full_gc_ms")),
            "full_gc_ms": round(sum(s.get("full_gc_ms", 0.0) for s in searches), 1),
            # The worker's own CPU time (the SQL runs in the server): what a machine busy with
            # other work leaves nearly as it is, where wall time is not.
            "cpu_ms": common.percentiles([s["cpu_ms"] for s in searches if "cpu_ms" in s]),
            "ms_without_full_gc": common.percentiles(
                [s["ms"] for s in searches if not s.get("full_gc_ms")]
            ),
        }
    out["ratio"] = round(out["episodic"]["ms"]["p50"] / out["vector"]["ms"]["p50"], 3)
    return out


def measure(
    admin: str, rows: int, queries: int, rounds: int, base: Path | None
) -> tuple[dict[str, Any], dict[str, int]]:
    """Each tree's summary (``this``, and ``base`` with ``--base``) and the dataset's shape."""
    trees: list[tuple[str, Path]] = [("this", common.REPO)]
    if base is not None:
        trees.insert(0, ("base", base))
    runs: dict[str, list[Any]] = {name: [] for name, _ in trees}
    with common.scratch_database(admin, "search_guard") as url:
        vectors, shape = build(url, rows, queries)
        revision = run_in_tree(base, HEAD_REVISION, {}) if base else migrate.head_revision()
        with schema_copy(admin, url, revision) as base_url:
            urls = {"this": url, "base": base_url}
            for i in range(rounds):
                for name, tree in trees[:: 1 if i % 2 == 0 else -1]:
                    payload = {"url": urls[name], "dataset": DATASET, "vectors": vectors}
                    t = time.perf_counter()
                    runs[name].append(run_in_tree(tree, WORKER, payload))
                    print(f"  round {i + 1} {name}: {time.perf_counter() - t:.0f} s", flush=True)
    return {name: summarise(r) for name, r in runs.items()}, shape


def check(res: dict[str, Any], recorded: dict[str, Any]) -> list[str]:
    """Why the guard fails (nothing: it passes): more statements per search than recorded, or
    episodic / vector above the recorded ratio by more than the tolerance."""
    now, then = res["trees"]["this"], recorded["quick"]["trees"]["this"]
    failures = [
        f"{mode} search sends {now[mode]['statements']} statements, recorded "
        f"{then[mode]['statements']}"
        for mode in ("episodic", "vector")
        if now[mode]["statements"] > then[mode]["statements"]
    ]
    if now["ratio"] > then["ratio"] * TOLERANCE:
        failures.append(
            f"episodic / vector is {now['ratio']}, recorded {then['ratio']} "
            f"(limit {round(then['ratio'] * TOLERANCE, 3)})"
        )
    return failures


def _tree_rows(run: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for name, tree in run["trees"].items():
        for mode in ("episodic", "vector"):
            m = tree[mode]
            calm = m.get("ms_without_full_gc", {})
            rows.append([name, mode, m["searches"], m["ms"]["p50"], m["ms"]["p95"],
                         m["statements"], tree["ratio"] if mode == "episodic" else "",
                         m.get("cpu_ms", {}).get("p50", ""),
                         m.get("full_gc", ""), m.get("full_gc_ms", ""),
                         calm.get("p95", "")])  # fmt: skip
    return rows


def _stage_rows(run: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    trees = list(run["trees"])
    keys = sorted({k for t in run["trees"].values() for k in t["episodic"]["stages_p50"]})
    header = ["stage", *(f"{t} episodic" for t in trees), *(f"{t} vector" for t in trees)]
    rows = [
        [k, *(run["trees"][t]["episodic"]["stages_p50"].get(k, "") for t in trees),
         *(run["trees"][t]["vector"]["stages_p50"].get(k, "") for t in trees)]
        for k in keys
    ]  # fmt: skip
    return header, rows


def markdown(data: dict[str, Any]) -> str:
    lines = [
        "# Episodic search against vector mode, per stage (benchmarks/search_guard.py)",
        "",
        common.stamp_markdown(data["stamp"]),
        "",
        "One fixed synthetic dataset (benchmarks/synth.py, seed 28) per run; each query searched "
        "episodic (`display=highly_related`) and in vector mode, alternately, in worker "
        "processes started in each tree. Times in ms, wall time less the query embedding "
        "(a lookup embedder); statements: the most one search sent; client CPU: the worker "
        "thread's CPU time a search (the SQL runs in the server). A full GC pass: the "
        "cyclic collector's generation-2 collection (its time is part of the search's).",
    ]
    for key in ("full", "quick"):
        run = data.get(key)
        if run is None:
            continue
        shape = run["shape"]
        lines += [
            "",
            f"## {key}: {shape['embedding_rows']:,} embedding rows, {shape['episodes']} episodes, "
            f"{shape['points']:,} points ({run['queries']} queries x {run['rounds']} rounds)",
            "",
            common.md_table(
                [
                    "tree",
                    "mode",
                    "searches",
                    "p50 ms",
                    "p95 ms",
                    "statements",
                    "episodic / vector (p50)",
                    "client CPU p50 ms",
                    "searches with a full GC pass",
                    "ms in those passes",
                    "p95 ms of the others",
                ],
                _tree_rows(run),
            ),
            "",
            "Stage medians (`timings_ms`, ms):",
            "",
            common.md_table(*_stage_rows(run)),
        ]
        if "base" in run["trees"]:
            this, base = run["trees"]["this"], run["trees"]["base"]
            ratio = round(this["episodic"]["ms"]["p50"] / base["episodic"]["ms"]["p50"], 3)
            lines += ["", f"- episodic p50, this / base: {ratio}"]
    lines += [""] + [f"- {note}" for note in data.get("notes", [])]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--base", type=Path, help="another tree (a checkout) to measure beside this")
    ap.add_argument("--home", type=Path, default=common.DEFAULT_HOME, help="embedded server home")
    ap.add_argument("--database-url", default=None, help="use this PostgreSQL server instead")
    ap.add_argument("--rows", type=int, default=FULL_ROWS, help="embedding rows of the dataset")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=2, help="alternating worker runs per tree")
    ap.add_argument("--check", action="store_true",
                    help="the CI guard: a small run compared with the recorded result")  # fmt: skip
    ap.add_argument("--out", type=Path, default=None, help="write NAME.json and NAME.md here")
    ap.add_argument("--name", default=NAME, help="result file stem under --out")
    ap.add_argument("--note", action="append", default=[], help="a note for the page")
    ap.add_argument("--render-only", action="store_true",
                    help="rewrite NAME.md from NAME.json under --out (with --note)")  # fmt: skip
    args = ap.parse_args(argv)
    if args.render_only:
        return common.render_only(args.out or common.DEFAULT_OUT, args.name, args.note, markdown)
    admin = common.server_url(args.database_url, args.home)
    stamp = common.stamp({}, __file__, argv)

    def run(rows: int, queries: int, rounds: int, base: Path | None) -> dict[str, Any]:
        trees, shape = measure(admin, rows, queries, rounds, base)
        return {"rows": rows, "queries": queries, "rounds": rounds, "shape": shape,
                "trees": trees, **({"base": head_of(base)} if base else {})}  # fmt: skip

    if args.check:
        recorded = json.loads((common.DEFAULT_OUT / f"{NAME}.json").read_text(encoding="utf-8"))
        quick = recorded["quick"]
        res = run(quick["rows"], quick["queries"], 1, None)
        failures = check(res, recorded)
        this = res["trees"]["this"]
        print(f"search guard: episodic {this['episodic']['ms']['p50']} ms, vector "
              f"{this['vector']['ms']['p50']} ms, ratio {this['ratio']} (recorded "
              f"{quick['trees']['this']['ratio']}), statements {this['episodic']['statements']}"
              f" / {this['vector']['statements']}")  # fmt: skip
        for f in failures:
            print(f"search guard FAILED: {f}", file=sys.stderr)
        if failures:
            raise SystemExit(1)
        return res
    full = run(args.rows, args.queries, args.rounds, args.base)
    quick = run(QUICK_ROWS, 30, 2, None)
    settings = {"seed": 28, "tolerance": TOLERANCE, "display": "highly_related",
                "schema": migrate.head_revision()}  # fmt: skip
    data = {"stamp": {**stamp, "settings": settings}, "full": full, "quick": quick,
            "notes": list(args.note)}  # fmt: skip
    if args.out:
        common.write_json(args.out / f"{args.name}.json", data)
        common.write_text(args.out / f"{args.name}.md", markdown(data))
    print(markdown(data))
    return data


DATASET = "guard"
HEAD_REVISION = (
    "import json\nfrom memflow.db import migrate\nprint(json.dumps(migrate.head_revision()))\n"
)

if __name__ == "__main__":
    main(sys.argv[1:])
