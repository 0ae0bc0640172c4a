"""When recall should sort a dataset exactly instead of scanning the HNSW indexes (issue 28).

A dataset's share of a store decides what a filtered HNSW scan costs: the index holds every
dataset's rows, and an iterative scan skips the others' until it has ``k`` of this one, so the
smaller the share, the more it reads. An exact sort costs the same whatever the share (the
dataset's own rows, found by primary key), and grows with the dataset. This benchmark measures
both on synthetic stores (benchmarks/synth.py, seeded): one queried dataset of ``size``
embedding rows beside other datasets holding ``others`` times as many, for each pair of the
grid. Each query vector is searched episodic (``display=highly_related``) once with recall
forced exact and once forced to the indexes, alternately; reported per store: the p50 of the
recall stage (``timings_ms["recall_sql"]``: the bind and the recall statement) and of the
whole search (the embedding excluded: a lookup embedder), and how often both give the same
top results. RecallConfig's ``exact_recall_nodes`` and ``exact_recall_share`` are read off
this table (their ``chosen_on`` is "latency").

``--lme-home`` measures the same on real data instead: a LongMemEval_S store written by
benchmarks/longmemeval.py (one dataset per item, ~1,800 nodes each, sharing one store), each
item's question searched at its own date, both ways, twice. The synthetic stores' datasets
differ from each other more than real users' chats do, so there the indexes lose less.

    python -m benchmarks.exact_recall --out docs/benchmarks
    python -m benchmarks.exact_recall --sizes 4200 --others 0,3 --queries 10   # a smoke run
    python -m benchmarks.exact_recall --lme-home ~/.cache/memflow-lme --name exact-recall-lme
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from benchmarks import common, synth
from memflow.config import libpq_url
from memflow.memory import Memory
from memflow.recall.config import RecallConfig

NAME = "exact-recall"
SIZES = (4200, 12600)
OTHERS = (0, 3, 11, 23)
EXACT = RecallConfig(exact_recall_nodes=1_000_000, exact_recall_share=1.0)
INDEXED = RecallConfig(exact_recall_nodes=0)
QUESTION = "what did we agree about the rollout plan"
NODE_COUNTS = ("episodes", "facets", "facet_points", "entities")


class Lookup:
    """Returns the vector of the query being searched (the embedding is not measured)."""

    name, dim = "bench-lookup", synth.DIM
    current: Any = None

    def embed_query(self, text: str) -> Any:
        return self.current

    def embed_passages(self, texts: Sequence[str]) -> Any:
        return np.stack([self.current for _ in texts])


def build(url: str, size: int, others: int, queries: int) -> tuple[list[Any], dict[str, int]]:
    """The queried dataset (seed 28, as the search guard's) and ``others`` datasets of its size."""
    gen = synth.Generator(seed=28, topics=64)
    target = synth.DatasetPlan("target", uuid.uuid5(uuid.NAMESPACE_URL, "target"), size, "large")
    names = [f"other-{i:02d}" for i in range(others)]
    plans = [target] + [
        synth.DatasetPlan(n, uuid.uuid5(uuid.NAMESPACE_URL, n), size, "other") for n in names
    ]
    rep = synth.load_store(libpq_url(url), gen, plans, maintenance_work_mem="256MB")
    vectors = [qq.vector for qq in gen.queries(target, queries)]
    mine = next(d for d in rep.datasets if d["name"] == "target")
    return vectors, {"dataset_rows": mine["embedding_rows"], "store_rows": rep.embedding_rows}


def _top(resp: Any) -> list[str]:
    return [str(r.episode_id) for r in resp.results]


def measure(url: str, vectors: list[Any]) -> dict[str, Any]:
    emb = Lookup()
    ms: dict[str, list[float]] = {"exact": [], "indexed": []}
    recall: dict[str, list[float]] = {"exact": [], "indexed": []}
    same = 0
    with Memory.open(url, embedder=emb) as mem:
        ds = mem.dataset("target", create=False)
        with psycopg.connect(libpq_url(url)) as conn:  # the admin: no row-level security
            row = conn.execute(
                "SELECT count(*) FROM memflow.node WHERE dataset_id = %s", (ds.id,)
            ).fetchone()
            nodes = int(row[0]) if row else 0
        emb.current = vectors[0]
        for cfg in (EXACT, INDEXED):  # warm both plans
            ds.search(QUESTION, display="highly_related", config=cfg)
        for i, vec in enumerate(vectors):
            emb.current = vec
            tops = {}
            order = [("exact", EXACT), ("indexed", INDEXED)]
            for name, cfg in order if i % 2 == 0 else order[::-1]:
                t = time.perf_counter()
                resp = ds.search(QUESTION, display="highly_related", config=cfg)
                wall = (time.perf_counter() - t) * 1000
                ms[name].append(wall - resp.timings_ms.get("embed", 0.0))
                recall[name].append(resp.timings_ms["recall_sql"])
                tops[name] = _top(resp)
            same += tops["exact"] == tops["indexed"]
    return {
        "dataset_nodes": nodes,
        "search_p50": {k: round(statistics.median(v), 2) for k, v in ms.items()},
        "recall_p50": {k: round(statistics.median(v), 2) for k, v in recall.items()},
        "same_results": round(same / len(vectors), 3),
    }


def measure_lme(home: Path, per_type: int, rounds: int = 2) -> dict[str, Any]:
    """Both ways on each item of a LongMemEval_S store (the slice of ``per_type``)."""
    from benchmarks.embed_cache import DiskCachedEmbedder
    from benchmarks.lme_data import choose
    from benchmarks.longmemeval import default_data
    from memflow.embed.factory import make_embedder

    cache = DiskCachedEmbedder(make_embedder("local"), home / "embeddings.sqlite")
    ms: dict[str, list[float]] = {"exact": [], "indexed": []}
    recall: dict[str, list[float]] = {"exact": [], "indexed": []}
    same, items = 0, 0
    nodes: list[int] = []
    try:
        with Memory.open(None, home=home / "store", embedder=cache, auto_upgrade=False) as mem:
            known = {d.name for d in mem.datasets()}
            for half in choose(default_data(), per_type).values():
                for item in half:
                    if item.dataset not in known:
                        continue
                    ds = mem.dataset(item.dataset, create=False)
                    nodes.append(sum(ds.stats().get(k, 0) for k in NODE_COUNTS))
                    items += 1
                    for r in range(rounds):
                        tops = {}
                        order = [("exact", EXACT), ("indexed", INDEXED)]
                        for name, cfg in order if (items + r) % 2 == 0 else order[::-1]:
                            t = time.perf_counter()
                            resp = ds.search(item.question, display="highly_related",
                                             config=cfg, now=item.question_date)  # fmt: skip
                            wall = (time.perf_counter() - t) * 1000
                            ms[name].append(wall - resp.timings_ms.get("embed", 0.0))
                            recall[name].append(resp.timings_ms["recall_sql"])
                            tops[name] = _top(resp)
                        same += r == 0 and tops["exact"] == tops["indexed"]
    finally:
        cache.close()
    return {
        "items": items,
        "dataset_nodes_median": int(statistics.median(nodes)) if nodes else 0,
        "search_p50": {k: round(statistics.median(v), 2) for k, v in ms.items()},
        "recall_p50": {k: round(statistics.median(v), 2) for k, v in recall.items()},
        "same_results": round(same / max(items, 1), 3),
    }


def markdown(data: dict[str, Any]) -> str:
    lines = [
        "# Exact recall against the HNSW indexes, by a dataset's share of the store",
        "",
        common.stamp_markdown(data["stamp"], "benchmarks/exact_recall.py"),
        "",
        (__doc__ or "").split("\n\n")[1].replace("\n", " "),
        "",
        "| dataset rows | nodes | store rows | share | recall p50 exact / indexed (ms) "
        "| search p50 exact / indexed (ms) | same results |",
        "|---|---|---|---|---|---|---|",
    ]
    lme = data.get("lme")
    if lme:
        lines[-2:] = [
            "| store | items | nodes per dataset (median) | recall p50 exact / indexed (ms) "
            "| search p50 exact / indexed (ms) | same results |",
            "|---|---|---|---|---|---|",
            f"| {lme['store']} | {lme['items']} | {lme['dataset_nodes_median']:,} "
            f"| {lme['recall_p50']['exact']} / {lme['recall_p50']['indexed']} "
            f"| {lme['search_p50']['exact']} / {lme['search_p50']['indexed']} "
            f"| {lme['same_results']} |",
        ]
    for r in data.get("runs", []):
        share = r["dataset_rows"] / r["store_rows"]
        lines.append(
            f"| {r['dataset_rows']:,} | {r['dataset_nodes']:,} | {r['store_rows']:,} "
            f"| {share:.3f} | {r['recall_p50']['exact']} / {r['recall_p50']['indexed']} "
            f"| {r['search_p50']['exact']} / {r['search_p50']['indexed']} "
            f"| {r['same_results']} |"
        )
    lines += ["", *(f"- {n}" for n in data.get("notes", []))]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--home", type=Path, default=common.DEFAULT_HOME, help="embedded server home")
    ap.add_argument("--database-url", default=None, help="use this PostgreSQL server instead")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)),
                    help="embedding rows of the queried dataset (comma-separated)")  # fmt: skip
    ap.add_argument("--others", default=",".join(map(str, OTHERS)),
                    help="other datasets of the same size beside it (comma-separated)")  # fmt: skip
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--lme-home", type=Path, default=None,
                    help="measure on this LongMemEval_S store (benchmarks/longmemeval.py --home)")  # fmt: skip
    ap.add_argument("--per-type", type=int, default=3, help="with --lme-home: the slice")
    ap.add_argument("--out", type=Path, default=None, help="write NAME.json and NAME.md here")
    ap.add_argument("--name", default=NAME, help="result file stem under --out")
    ap.add_argument("--note", action="append", default=[], help="a note for the page")
    ap.add_argument("--render-only", action="store_true",
                    help="rewrite NAME.md from NAME.json under --out (with --note)")  # fmt: skip
    args = ap.parse_args(argv)
    if args.render_only:
        return common.render_only(args.out or common.DEFAULT_OUT, args.name, args.note, markdown)
    stamp = common.stamp({}, __file__, argv)
    if args.lme_home:
        lme = {"store": str(args.lme_home / "store"), **measure_lme(args.lme_home, args.per_type)}
        data = {"stamp": {**stamp, "settings": {"per_type": args.per_type}}, "lme": lme,
                "notes": list(args.note)}  # fmt: skip
        return _write(args, data)
    admin = common.server_url(args.database_url, args.home)
    runs = []
    for size in (int(s) for s in args.sizes.split(",")):
        for others in (int(o) for o in args.others.split(",")):
            t = time.perf_counter()
            with common.scratch_database(admin, "exact_recall") as url:
                vectors, shape = build(url, size, others, args.queries)
                runs.append({"size": size, "others": others, **shape, **measure(url, vectors)})
            r = runs[-1]
            print(f"[exact_recall] {size} rows + {others} others: recall exact "
                  f"{r['recall_p50']['exact']} ms / indexed {r['recall_p50']['indexed']} ms, "
                  f"same {r['same_results']} ({time.perf_counter() - t:.0f} s)",
                  file=sys.stderr, flush=True)  # fmt: skip
    settings = {"seed": 28, "queries": args.queries, "display": "highly_related"}
    data = {"stamp": {**stamp, "settings": settings}, "runs": runs, "notes": list(args.note)}
    return _write(args, data)


def _write(args: argparse.Namespace, data: dict[str, Any]) -> dict[str, Any]:
    if args.out:
        common.write_json(args.out / f"{args.name}.json", data)
        common.write_text(args.out / f"{args.name}.md", markdown(data))
    print(markdown(data))
    return data


if __name__ == "__main__":
    main(sys.argv[1:])
