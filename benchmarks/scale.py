"""Search latency as the store grows (benchmarks.md §2).

For each size (embedding rows in the whole store, spread over many datasets), in one run: load a
synthetic store (benchmarks/synth.py), then measure on the largest dataset
- the bare lower bound: one filtered ANN query (k = wide_search_top_k) on the FacetPoint table;
- memflow's search (memflow.recall.search.search_op, display summary) split by stage, with the
  query embedding excluded (queries are precomputed vectors served by a lookup embedder);
- the m_flow-style baseline: the same pipeline with every recall branch exact (no ANN index);
- the episode top-10 overlap between the two, and how often the query's source episode is found;
- p50/p95/p99 and errors under 1, 4 and 16 concurrent clients (threads, one connection each);
and the same ANN/exact comparison on a small dataset (1 % of the rows) of the same tables.

Exact baseline: the recall statement of sql/recall.sql with ``exact`` set, the form memflow
itself uses for small datasets (RecallConfig.exact_recall_nodes / exact_recall_share): every
branch ordered by ``(embedding <=> q) + 0``. An expression is not the indexed operator, so the
HNSW index cannot serve the order: PostgreSQL reads the dataset's rows (dataset B-tree or
sequential scan) and sorts them by exact distance. Projection, scoring and rendering are shared.
memflow's own search of the small dataset (1 % of the rows) takes that exact form too.

Run: ``python -m benchmarks.scale [--sizes 10k,100k,1M] [--quick] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import Engine, text

from benchmarks import common, synth
from memflow.config import libpq_url
from memflow.context import StoreContext
from memflow.db import engine as dbe
from memflow.db.filters import SearchFilter, search_filter
from memflow.db.queries import raw
from memflow.db.steps import run_op
from memflow.embed.base import Matrix, Vector
from memflow.recall import sqlrecall, visibility
from memflow.recall.config import RecallConfig
from memflow.recall.options import DEFAULTS, SearchOptions
from memflow.recall.pipeline import episode_hits, hit_ids_for_projection, respond, score_hits
from memflow.recall.preprocess import preprocess
from memflow.recall.search import search_op
from memflow.recall.types import SearchResponse
from memflow.store.datasets import DatasetRef

_LOWER_BOUND = (
    "SELECT node_id FROM memflow.facetpoint_search_text WHERE dataset_id = :dataset_id "
    "ORDER BY embedding <=> CAST(:q AS vector) LIMIT :k"
)
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
TARGETS = {"p50_ms": 50.0, "speedup_vs_exact": 20.0, "overlap@10": 0.95,
           "projection_scoring_share": 0.5, "errors_16": 0}  # fmt: skip


def search(ctx: StoreContext, query: str, **options: Any) -> SearchResponse:
    """One search as ``Dataset.search`` runs it (:func:`memflow.recall.search.search_op`)."""
    ref = DatasetRef(ctx.dataset_id, "bench")
    return run_op(ctx.engine, search_op(ctx, ref, query, SearchOptions(**options)))


class LookupEmbedder:
    """Serves precomputed query vectors by query text: the benchmark excludes embedding."""

    name = "bench-lookup"
    dim = synth.DIM

    def __init__(self) -> None:
        self.vectors: dict[str, Vector] = {}

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        return np.stack([self.vectors[t] for t in texts])

    def embed_query(self, text: str) -> Vector:
        return self.vectors[text]


def query_text(i: int) -> str:
    code = _LETTERS[i % 26] + _LETTERS[(i // 26) % 26] + _LETTERS[(i // 676) % 26]
    return f"what did we agree about the rollout plan {code}x"


def _ms(t: float) -> float:
    return (time.perf_counter() - t) * 1000


def search_exact(
    engine: Engine, ds: uuid.UUID, qvec: Vector, query: str, cfg: RecallConfig,
    flt: SearchFilter | None = None,
) -> tuple[SearchResponse, dict[str, int]]:  # fmt: skip
    """memflow's pipeline with exact recall (the baseline); same stages as search(), with the
    same scope / where filter when ``flt`` is given (the exact filtered scan).
    Also returns the size of the projected subgraph (nodes per kind, edges)."""
    timings: dict[str, float] = {}
    pq = preprocess(query, None, DEFAULTS.timezone)
    k = cfg.recall_k(None)
    with dbe.transaction(engine) as conn:
        t = time.perf_counter()
        sqlrecall.bind(conn, ds, max(cfg.ef_search, k))
        visible = visibility.resolve(conn, ds, flt)
        hits = sqlrecall.recall(conn, ds, qvec, k, visible, exact=True).hits
        timings["recall_sql"] = _ms(t)
        t = time.perf_counter()
        scored = score_hits(hits, pq, cfg)
        seeds = hit_ids_for_projection(scored, cfg, pq, top_k=DEFAULTS.top_k)
        graph = sqlrecall.project(
            conn, ds, seeds, cfg, leaves=episode_hits(scored), with_sources=False, visible=visible
        )
        timings["projection_sql"] = _ms(t)
    resp = respond(hits, graph, pq, cfg, DEFAULTS, timings_ms=timings)
    resp.timings_ms["total"] = sum(v for key, v in resp.timings_ms.items() if key != "total")
    shape = {k: 0 for k in ("Episode", "Facet", "FacetPoint", "Entity")}
    for node in graph.nodes.values():
        shape[node.kind] += 1
    shape["edges"] = len(graph.edges)
    return resp, shape


def latency(resp: SearchResponse) -> float:
    """Total search time without the query embedding."""
    t = resp.timings_ms
    return float(t.get("total", 0.0)) - float(t.get("embed", 0.0))


def _episodes(resp: SearchResponse) -> list[uuid.UUID]:
    return [r.episode_id for r in resp.results[:10]]


def recall_plan(
    engine: Engine, ds: uuid.UUID, qvec: Vector, cfg: RecallConfig, flt: SearchFilter | None = None
) -> list[str]:
    """How the planner reads each recall branch (index or scan lines of EXPLAIN; filtered: with
    the filter lines, the bound id arrays cut short)."""
    with dbe.transaction(engine) as conn:
        exact = sqlrecall.bind(
            conn,
            ds,
            max(cfg.ef_search, cfg.wide_search_top_k),
            cfg.exact_recall_nodes,
            cfg.exact_recall_share,
        )
        visible = visibility.resolve(conn, ds, flt)
        lines = conn.execute(
            text("EXPLAIN (COSTS OFF) " + raw("recall")),
            {
                "dataset_id": ds,
                "q": qvec,
                "k": cfg.wide_search_top_k,
                "exact": exact,
                "point_distances": False,
                **visibility.params(visible),
            },
        ).scalars()
        keep = ("Scan", "Filter", "Index Cond") if flt else ("Scan",)
        return [
            re.sub(r"'\{[^}]{60,}\}'", "'{...}'", re.sub(r"\s+", " ", ln.strip().lstrip("-> ")))[
                :240
            ]
            for ln in lines
            if any(w in ln for w in keep) and "Subquery" not in ln and "One-Time" not in ln
        ]


def compare(engine: Engine, emb: LookupEmbedder, queries: list[tuple[str, synth.Query]],
            cfg: RecallConfig) -> dict[str, Any]:  # fmt: skip
    """ANN search and exact baseline, side by side per query; lower bound; overlap."""
    ann: list[float] = []
    exact: list[float] = []
    lower: list[float] = []
    stages: dict[str, list[float]] = {}
    exact_recall: list[float] = []
    projected: dict[str, list[float]] = {}
    overlaps, ann_found, exact_found = [], 0, 0
    for qtext, qry in queries:
        with dbe.transaction(engine) as conn:
            sqlrecall.bind(conn, qry.dataset_id, max(cfg.ef_search, cfg.wide_search_top_k))
            t = time.perf_counter()
            conn.execute(text(_LOWER_BOUND),
                         {"dataset_id": qry.dataset_id, "q": qry.vector, "k": cfg.wide_search_top_k}).all()  # fmt: skip
            lower.append(_ms(t))
        a = search(StoreContext(engine, emb, qry.dataset_id), qtext, config=cfg)
        e, shape = search_exact(engine, qry.dataset_id, qry.vector, qtext, cfg)
        for key, n in shape.items():
            projected.setdefault(key, []).append(float(n))
        ann.append(latency(a))
        exact.append(latency(e))
        exact_recall.append(float(e.timings_ms["recall_sql"]))
        for key, v in a.timings_ms.items():
            stages.setdefault(key, []).append(float(v))
        top_a, top_e = _episodes(a), _episodes(e)
        overlaps.append(len(set(top_a) & set(top_e)) / max(1, len(top_e)))
        ann_found += qry.source_episode in top_a
        exact_found += qry.source_episode in top_e
    stage_p50 = {
        k: common.percentiles(v)["p50"] for k, v in stages.items() if k not in ("embed", "total")
    }
    scoring = sum(stage_p50.get(k, 0.0) for k in ("bonus", "index", "score"))
    pa, pe = common.percentiles(ann), common.percentiles(exact)
    n = max(1, len(queries))
    return {
        "queries": len(queries),
        "p50_ms": pa["p50"], "p95_ms": pa["p95"], "p99_ms": pa["p99"],
        "exact_p50_ms": pe["p50"], "exact_p95_ms": pe["p95"],
        "speedup_vs_exact": round(pe["p50"] / pa["p50"], 2) if pa["p50"] else None,
        "lower_bound_p50_ms": common.percentiles(lower)["p50"],
        "overlap@10": round(float(np.mean(overlaps)), 4) if overlaps else None,
        "source_episode@10": {"ann": round(ann_found / n, 4), "exact": round(exact_found / n, 4)},
        "stage_ms": stage_p50,
        "projection_scoring_share": round((stage_p50.get("projection_sql", 0.0) + scoring)
                                          / sum(stage_p50.values()), 3) if stage_p50 else None,
        "exact_recall_sql_p50_ms": common.percentiles(exact_recall)["p50"],
        "projected_mean": {k: round(float(np.mean(v)), 1) for k, v in projected.items()},
    }  # fmt: skip


def compare_filtered(engine: Engine, emb: LookupEmbedder, gen: synth.Generator,
                     queries: list[tuple[str, synth.Query]], cfg: RecallConfig) -> dict[str, Any]:  # fmt: skip
    """Filtered search (each filter keeps ~1 % of the dataset) against the exact filtered scan:
    ``own_user``: scope = the user of the query's source episode (a user searching their own
    memories); ``bucket``: where = {"bucket": 7} for every query (a metadata filter unrelated to
    the query, the hard case for an index scan). Every result must carry the filter's value."""
    out: dict[str, Any] = {}
    variants: dict[str, Any] = {
        "own_user": lambda q: ({"user": gen.episode_user[q.source_episode]}, None),
        "bucket": lambda q: (None, {"bucket": 7}),
    }
    for name, make in variants.items():
        ann: list[float] = []
        exact: list[float] = []
        filter_sql: list[float] = []
        overlaps: list[float] = []
        leaks = found = 0
        for qtext, qry in queries:
            scope, where = make(qry)
            flt = search_filter(scope, where)
            a = search(StoreContext(engine, emb, qry.dataset_id), qtext, config=cfg,
                       scope=scope, where=where)  # fmt: skip
            e, _ = search_exact(engine, qry.dataset_id, qry.vector, qtext, cfg, flt)
            ann.append(latency(a))
            exact.append(latency(e))
            filter_sql.append(float(a.timings_ms.get("filter_sql", 0.0)))
            top_a, top_e = _episodes(a), _episodes(e)
            overlaps.append(len(set(top_a) & set(top_e)) / max(1, len(top_e)))
            found += qry.source_episode in top_a
            for r in a.results:
                tags = r.scope if scope else r.metadata
                leaks += any(tags.get(k) != v for k, v in (scope or where).items())
        pa, pe = common.percentiles(ann), common.percentiles(exact)
        scope, where = make(queries[0][1])
        out[name] = {
            "queries": len(queries), "filter": {"scope": scope, "where": where},
            "p50_ms": pa["p50"], "p95_ms": pa["p95"], "exact_p50_ms": pe["p50"],
            "filter_sql_p50_ms": common.percentiles(filter_sql)["p50"],
            "overlap@10": round(float(np.mean(overlaps)), 4) if overlaps else None,
            "source_episode@10": round(found / max(1, len(queries)), 4),
            "results_outside_the_filter": leaks,
            "plan": recall_plan(engine, queries[0][1].dataset_id, queries[0][1].vector, cfg,
                                search_filter(scope, where)),
        }  # fmt: skip
    return out


def concurrency(engine: Engine, emb: LookupEmbedder, queries: list[tuple[str, synth.Query]],
                cfg: RecallConfig, clients: Sequence[int], per_client: int) -> dict[str, Any]:  # fmt: skip
    out: dict[str, Any] = {}
    for n in clients:
        lat: list[float] = []
        errors: list[str] = []
        lock = threading.Lock()

        def worker(
            offset: int, lat: list[float] = lat, errors: list[str] = errors, lock: Any = lock
        ) -> None:
            for j in range(per_client):
                qtext, qry = queries[(offset * per_client + j) % len(queries)]
                try:
                    ms = latency(
                        search(
                            StoreContext(engine, emb, qry.dataset_id),
                            qtext,
                            config=cfg,
                        )
                    )
                except Exception as exc:  # every failure is counted, none may happen
                    with lock:
                        errors.append(f"{type(exc).__name__}: {exc}"[:200])
                    continue
                with lock:
                    lat.append(ms)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
        t = time.perf_counter()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        wall = time.perf_counter() - t
        p = common.percentiles(lat)
        out[str(n)] = {"searches": len(lat) + len(errors), "p50_ms": p["p50"], "p95_ms": p["p95"],
                       "p99_ms": p["p99"], "errors": len(errors), "error_samples": errors[:3],
                       "throughput_qps": round(len(lat) / wall, 2)}  # fmt: skip
    return out


def run_size(
    admin_url: str, size: int, args: argparse.Namespace, cfg: RecallConfig
) -> dict[str, Any]:
    started = time.perf_counter()
    small_count = 5 if size < 20_000 else 25
    plans = synth.plan_datasets(size, small_count=small_count)
    with common.scratch_database(admin_url, f"mfbench_scale_{size}", keep=args.keep) as url:
        gen = synth.Generator(seed=size)
        rep = synth.load_store(libpq_url(url), gen, plans, maintenance_work_mem=args.maintenance_work_mem,
                               workers=args.maintenance_workers)  # fmt: skip
        print(f"[{size}] loaded {rep.embedding_rows} embedding rows in {rep.load_s}s, "
              f"indexes {sum(rep.index_s.values()):.1f}s", flush=True)  # fmt: skip
        facts = common.server_facts(url)
        engine = dbe.make_engine(url, pool_size=max(args.clients) + 2, app_role=True)
        emb = LookupEmbedder()
        try:
            by_role: dict[str, list[tuple[str, synth.Query]]] = {}
            counter = 0
            for plan in plans:
                if plan.role == "other":
                    continue
                nq = args.queries if plan.role == "large" else max(2, args.queries // 2)
                for qry in gen.queries(plan, nq):
                    qtext = query_text(counter)
                    counter += 1
                    emb.vectors[preprocess(qtext).vector_query] = qry.vector
                    by_role.setdefault(plan.role, []).append((qtext, qry))
            large, small = by_role["large"], by_role.get("small", [])
            for qtext, qry in large + small:  # warm the caches of both paths
                search(StoreContext(engine, emb, qry.dataset_id), qtext, config=cfg)
            for qtext, qry in (large + small)[: max(2, args.queries // 4)]:
                search_exact(engine, qry.dataset_id, qry.vector, qtext, cfg)
            result = compare(engine, emb, large, cfg)
            result["plan"] = recall_plan(engine, large[0][1].dataset_id, large[0][1].vector, cfg)
            if not args.no_filtered:
                result["filtered"] = compare_filtered(engine, emb, gen, large, cfg)
                for f in result["filtered"].values():
                    f["p50_vs_unfiltered"] = round(f["p50_ms"] / result["p50_ms"], 2)
            if small:
                s = compare(engine, emb, small, cfg)
                s["plan"] = recall_plan(engine, small[0][1].dataset_id, small[0][1].vector, cfg)
                result["small_dataset"] = {k: s[k] for k in (
                    "queries", "p50_ms", "p95_ms", "exact_p50_ms", "speedup_vs_exact",
                    "lower_bound_p50_ms", "overlap@10", "source_episode@10", "plan",
                    "projected_mean")}  # fmt: skip
            result["concurrency"] = concurrency(
                engine, emb, large, cfg, args.clients, args.per_client
            )
        finally:
            engine.dispose()
    result["server"] = facts
    result["store"] = {
        "embedding_rows": rep.embedding_rows, "rows": rep.rows, "datasets": len(plans),
        "large_dataset_rows": next(d["embedding_rows"] for d in rep.datasets if d["role"] == "large"),
        "small_dataset_rows": next((d["embedding_rows"] for d in rep.datasets if d["role"] == "small"), 0),
        "load_s": rep.load_s, "index_build_s": rep.index_s, "vacuum_analyze_s": rep.vacuum_s,
    }  # fmt: skip
    result["run_s"] = round(time.perf_counter() - started, 1)
    print(f"[{size}] p50 {result['p50_ms']} ms, exact {result['exact_p50_ms']} ms, "
          f"overlap {result['overlap@10']}, {result['run_s']} s", flush=True)  # fmt: skip
    return result


def check_targets(res: dict[str, Any]) -> dict[str, bool]:
    c16 = res.get("concurrency", {}).get("16", {})
    share = res.get("projection_scoring_share")
    return {
        "p50_ms <= 50": res["p50_ms"] <= TARGETS["p50_ms"],
        "speedup_vs_exact >= 20": (res["speedup_vs_exact"] or 0) >= TARGETS["speedup_vs_exact"],
        "overlap@10 >= 0.95": (res["overlap@10"] or 0) >= TARGETS["overlap@10"],
        "projection + scoring <= half": share is not None
        and share <= TARGETS["projection_scoring_share"],
        "0 errors under 16 clients": bool(c16) and c16.get("errors", 1) == 0,
        **{
            f"filtered ({name}): p50 <= 2x unfiltered, overlap@10 >= 0.95, no result outside": (
                f["p50_vs_unfiltered"] <= 2.0
                and (f["overlap@10"] or 0) >= TARGETS["overlap@10"]
                and f["results_outside_the_filter"] == 0
            )
            for name, f in res.get("filtered", {}).items()
        },
    }


def plot(results: dict[str, Any], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    sizes = sorted(int(s) for s in results)
    series = {
        "memflow search p50 (HNSW)": [results[str(s)]["p50_ms"] for s in sizes],
        "memflow search p95 (HNSW)": [results[str(s)]["p95_ms"] for s in sizes],
        "exact-scan baseline p50": [results[str(s)]["exact_p50_ms"] for s in sizes],
        "lower bound: one ANN query p50": [results[str(s)]["lower_bound_p50_ms"] for s in sizes],
        "small dataset, memflow p50": [results[str(s)].get("small_dataset", {}).get("p50_ms") for s in sizes],
    }  # fmt: skip
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, ys in series.items():
        ax.plot(sizes, ys, marker="o", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("embedding rows in the store")
    ax.set_ylabel("latency (ms, query embedding excluded)")
    ax.set_title("memflow search latency vs store size")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def markdown(data: dict[str, Any]) -> str:
    sizes = sorted(data["sizes"], key=int)
    out = ["# Search latency and scale", "", common.stamp_markdown(data["stamp"]), ""]
    out += [data["method"], "", "## Results (largest dataset of each store)", ""]
    rows = []
    for s in sizes:
        r = data["sizes"][s]
        rows.append([f"{int(s):,}", f"{r['store']['large_dataset_rows']:,}", r["lower_bound_p50_ms"],
                     r["p50_ms"], r["p95_ms"], r["p99_ms"], r["exact_p50_ms"], r["speedup_vs_exact"],
                     r["overlap@10"], r["source_episode@10"]["ann"], r["source_episode@10"]["exact"]])  # fmt: skip
    out.append(common.md_table(
        ["store rows", "dataset rows", "1 ANN query p50", "search p50", "p95", "p99", "exact p50",
         "speedup", "overlap@10", "source@10 ANN", "source@10 exact"], rows))  # fmt: skip
    out += [
        "",
        "Latencies in ms, query embedding excluded.",
        "",
        "## Projected subgraph (mean per search)",
        "",
    ]
    kinds = ("Episode", "Facet", "FacetPoint", "Entity", "edges")
    out.append(common.md_table(["store rows", *kinds], [
        [f"{int(s):,}", *[data["sizes"][s].get("projected_mean", {}).get(k, "n/a") for k in kinds]]
        for s in sizes]))  # fmt: skip
    out += ["", "## Stages (p50 ms, memflow search)", ""]
    stage_names = sorted({k for s in sizes for k in data["sizes"][s]["stage_ms"]})
    out.append(common.md_table(["store rows", *stage_names, "projection+scoring share"], [
        [f"{int(s):,}", *[data["sizes"][s]["stage_ms"].get(k, "") for k in stage_names],
         data["sizes"][s]["projection_scoring_share"]] for s in sizes]))  # fmt: skip
    out += ["", "## Small dataset (1 % of the rows) in the same tables", ""]
    out.append(common.md_table(["store rows", "dataset rows", "search p50", "exact p50", "overlap@10", "plan"], [
        [f"{int(s):,}", data["sizes"][s]["store"]["small_dataset_rows"],
         data["sizes"][s].get("small_dataset", {}).get("p50_ms"),
         data["sizes"][s].get("small_dataset", {}).get("exact_p50_ms"),
         data["sizes"][s].get("small_dataset", {}).get("overlap@10"),
         "; ".join(data["sizes"][s].get("small_dataset", {}).get("plan", [])[:2])] for s in sizes]))  # fmt: skip
    filtered = [(s, n, f) for s in sizes for n, f in data["sizes"][s].get("filtered", {}).items()]
    if filtered:
        out += [
            "",
            "## Filtered search (~1 % of the largest dataset) vs the exact filtered scan",
            "",
        ]
        out.append(common.md_table(
            ["store rows", "filter", "search p50", "p95", "vs unfiltered p50", "filter_sql p50",
             "exact filtered p50", "overlap@10", "source@10", "results outside the filter"],
            [[f"{int(s):,}", f"{n}: {json.dumps(f['filter'], ensure_ascii=False)}", f["p50_ms"],
              f["p95_ms"], f["p50_vs_unfiltered"], f["filter_sql_p50_ms"], f["exact_p50_ms"],
              f["overlap@10"], f["source_episode@10"], f["results_outside_the_filter"]]
             for s, n, f in filtered]))  # fmt: skip
        for s, n, f in filtered:
            out += ["", f"Plan of the recall statement, {n} ({int(s):,} rows):", "", "```"]
            out += [*f["plan"], "```"]
    out += ["", "## Concurrent clients (memflow search, largest dataset)", ""]
    crow = []
    for s in sizes:
        for n, c in data["sizes"][s]["concurrency"].items():
            crow.append([f"{int(s):,}", n, c["searches"], c["p50_ms"], c["p95_ms"], c["p99_ms"],
                         c["errors"], c["throughput_qps"]])  # fmt: skip
    out.append(
        common.md_table(
            ["store rows", "clients", "searches", "p50", "p95", "p99", "errors", "qps"], crow
        )
    )
    out += ["", "## Load", ""]
    out.append(common.md_table(["store rows", "datasets", "COPY s", "index build s", "VACUUM ANALYZE s", "run s"], [
        [f"{data['sizes'][s]['store']['embedding_rows']:,}", data["sizes"][s]["store"]["datasets"],
         data["sizes"][s]["store"]["load_s"], round(sum(data["sizes"][s]["store"]["index_build_s"].values()), 1),
         data["sizes"][s]["store"]["vacuum_analyze_s"], data["sizes"][s]["run_s"]] for s in sizes]))  # fmt: skip
    big = sizes[-1]
    out += ["", f"## Targets at {int(big):,} rows", ""]
    out += [f"- {'PASS' if ok else 'MISS'}: {name}" for name, ok in data["targets"][big].items()]
    if data.get("notes"):
        out += ["", "## Notes", "", *[f"- {n}" for n in data["notes"]]]
    if data.get("plot"):
        out += ["", f"![latency vs size]({data['plot']})"]
    return "\n".join(out)


METHOD = (
    "Synthetic stores (benchmarks/synth.py): clustered random unit vectors (384 dims), ~5 facets x "
    "~4 points per episode, ~5 entities per episode drawn with a Zipf degree, 3 + N datasets per "
    "store (50 %, 15 %, 10 % of the rows and N of 1 %), bulk-loaded with binary COPY, HNSW "
    "(m 16, ef_construction 64) built after the load. Queries are stored FacetPoint vectors plus "
    "noise. Each query runs the bare lower bound (one filtered ANN query, k = 100, FacetPoint table), "
    "memflow's search (`memflow.recall.search.search_op`, ANN recall through HNSW with iterative scan) "
    "and the exact baseline (same pipeline; recall branches ordered by `(embedding <=> q) + 0`, which "
    "the HNSW index cannot serve) side by side. overlap@10 = shared episodes in the two top-10 lists; "
    "source@10 = the query's source episode is in the top 10."
)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument(
        "--database-url", help="server to create scratch databases on (default: embedded)"
    )
    ap.add_argument(
        "--home", type=Path, help="embedded server home (default ~/.cache/memflow-bench)"
    )
    ap.add_argument("--sizes", help="embedding rows per store, e.g. 10k,100k,1M")
    ap.add_argument("--quick", action="store_true", help="tiny smoke run (the test suite uses it)")
    ap.add_argument("--out", type=Path, default=common.DEFAULT_OUT)
    ap.add_argument("--queries", type=int, help="queries on the largest dataset")
    ap.add_argument("--per-client", type=int, help="searches per client in the concurrency runs")
    ap.add_argument("--clients", default="1,4,16")
    ap.add_argument("--maintenance-work-mem", default="4GB")
    ap.add_argument("--maintenance-workers", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the scratch databases")
    ap.add_argument("--no-filtered", action="store_true", help="skip the filtered searches")
    ap.add_argument("--name", default="scale", help="results file stem (default scale)")
    ap.add_argument("--note", action="append", default=[], help="a note for the Markdown")
    ap.add_argument(
        "--render-only", action="store_true", help="rewrite scale.md from scale.json (with --note)"
    )
    args = ap.parse_args(argv)
    if args.render_only:
        return common.render_only(args.out, args.name, args.note, markdown)
    args.clients = [int(c) for c in args.clients.split(",")]
    sizes = common.parse_sizes(args.sizes or ("3000" if args.quick else "10k,100k,1M"))
    args.queries = args.queries or (4 if args.quick else 40)
    args.per_client = args.per_client or (1 if args.quick else 12)
    if args.quick:
        args.maintenance_work_mem = "256MB"
    cfg = RecallConfig()
    admin = common.server_url(args.database_url, args.home)
    settings = {"sizes": sizes, "quick": args.quick, "queries": args.queries, "clients": args.clients,
                "per_client": args.per_client, "wide_search_top_k": cfg.wide_search_top_k,
                "ef_search": cfg.ef_search, "iterative_scan": "relaxed_order",
                "hnsw": {"m": 16, "ef_construction": 64}, "dim": synth.DIM,
                "maintenance_work_mem": args.maintenance_work_mem}  # fmt: skip
    results = {str(s): run_size(admin, s, args, cfg) for s in sizes}
    args.out.mkdir(parents=True, exist_ok=True)
    settings["server"] = next(iter(results.values()))["server"] if results else {}
    data: dict[str, Any] = {"sizes": results, "stamp": common.stamp(settings), "method": METHOD,
                            "targets": {s: check_targets(r) for s, r in results.items()},
                            "notes": list(args.note)}  # fmt: skip
    if plot(results, args.out / f"{args.name}.png"):
        data["plot"] = f"{args.name}.png"
    common.write_json(args.out / f"{args.name}.json", data)
    common.write_text(args.out / f"{args.name}.md", markdown(data))
    return data


if __name__ == "__main__":
    main()
