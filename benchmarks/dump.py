"""Export and import of a dataset (docs/export.md), measured.

1. **LoCoMo round trip.** The tune half's datasets (the first five conversations, as
   ``benchmarks.locomo`` memorises them) are exported with vectors by ``memflow export``, imported
   by ``memflow import-dump`` into a fresh database, and the LoCoMo replay (``benchmarks.
   locomo_replay``: the search's SQL per question, then the shipped ranking) runs on both stores:
   the figures must be the same, number for number.
2. **A dump over 100 MB.** A synthetic dataset (``benchmarks.synth``: clustered vectors, the
   shape of real episodes) is exported with vectors and imported under another name; the peak
   resident memory of the importing ``memflow import-dump`` process must stay under 500 MB.

Each export and import is a ``memflow`` process of its own, run by a wrapper that reports its
peak RSS (VmHWM of the Python process; PostgreSQL's own memory is the server's).

    nice -n 10 .venv/bin/python -m benchmarks.dump --data ../shared/data/locomo10.json
    .venv/bin/python -m benchmarks.dump --quick --database-url URL --out /tmp/x   # smoke

Without ``--database-url`` the source is the LoCoMo store in ``--home`` (memorised there first if
missing: ~5 min of CPU) and the other databases are made on its server. Writes
docs/benchmarks/dump.{json,md} (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import psycopg

from benchmarks import common, locomo, locomo_replay, synth
from memflow.config import libpq_url
from memflow.embed.factory import make_embedder
from memflow.memory import Memory
from memflow.recall.config import RecallConfig

RSS_LIMIT_MB = 500
LARGE_MB = 100
# Runs memflow's CLI in this process, then prints the process's peak RSS on stderr: VmHWM, the
# high-water mark of this program's own memory (ru_maxrss would not do: Linux carries the
# parent's peak over into a child it forks, exec or not).
_WRAPPER = (
    "import re, sys\n"
    "from memflow.cli.app import main\n"
    "rc = main(sys.argv[1:])\n"
    "hwm = re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1)\n"
    "sys.stderr.write('peak_rss_kb=%s\\n' % hwm)\n"
    "sys.exit(rc)\n"
)


@dataclass
class Run:
    """One memflow process: its wall time, its peak RSS and its --json report."""

    command: str
    wall_s: float
    peak_rss_mb: float
    report: dict[str, Any]


def memflow(url: str, *argv: str, embedder: str | None = None) -> Run:
    cmd = [*argv, "--database-url", url, "--json", "--progress", "none"]
    if embedder:
        cmd += ["--embedder", embedder]
    started = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *cmd], capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - started
    if res.returncode != 0:
        raise SystemExit(f"memflow {' '.join(argv)} failed:\n{res.stderr}")
    peak = [ln for ln in res.stderr.splitlines() if ln.startswith("peak_rss_kb=")][-1]
    return Run(
        " ".join(argv[:1]),
        round(wall, 2),
        round(int(peak.split("=")[1]) / 1024, 1),
        json.loads(res.stdout),
    )


def _figures(recorded: Sequence[locomo_replay.Recorded]) -> dict[str, Any]:
    return locomo_replay.evaluate(recorded, RecallConfig())


def _rows(r: locomo_replay.Recorded) -> list[tuple[Any, ...]]:
    return sorted(
        (h.collection, str(h.node_id), h.edge_text_hash or b"", h.distance, h.text) for h in r.hits
    )


def compare(
    a: Sequence[locomo_replay.Recorded], b: Sequence[locomo_replay.Recorded]
) -> dict[str, int]:
    """Per question, how the search's SQL results of two stores compare: identical (recall rows
    in the same order, the same projected graph), the same rows in another order (rows of equal
    distance, as an HNSW scan returns them), or other rows (an approximate scan's misses)."""
    out = {"identical": 0, "same_rows_other_order": 0, "other_rows": 0}
    for x, y in zip(a, b, strict=True):
        if x.hits == y.hits and x.graph == y.graph:
            out["identical"] += 1
        elif _rows(x) == _rows(y):
            out["same_rows_other_order"] += 1
        else:
            out["other_rows"] += 1
    return out


def reindex_hnsw(url: str) -> float:
    """Rebuild every HNSW index of the database at ``url`` (a control: a new index of the same
    rows is another graph, HNSW's levels being drawn at random)."""
    started = time.perf_counter()
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        names = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = 'memflow' "
            "AND indexdef LIKE '%USING hnsw%' ORDER BY 1"
        ).fetchall()
        for (name,) in names:
            conn.execute(f"REINDEX INDEX memflow.{name}")
    return time.perf_counter() - started


def locomo_round_trip(
    args: argparse.Namespace, admin_url: str, source_url: str, work: Path
) -> dict[str, Any]:
    convs, _ = locomo.load(args.data)
    tune = [c for c in convs if locomo.split_of(c) == "tune"][: args.conversations]
    embedder = locomo.CachedEmbedder(make_embedder(args.embedder))
    with Memory.open(source_url, embedder=embedder, auto_upgrade=True) as mem:
        ingest_s = locomo.ingest(mem, tune, args.sessions)
        before = locomo_replay.record(mem, tune, args.questions)
    names = [f"locomo-{c.sample_id}" for c in tune]
    exports = [
        memflow(source_url, "export", "-d", n, "--with-vectors", "-o", str(work / f"{n}.jsonl"))
        for n in names
    ]
    with common.scratch_database(admin_url, "dump_locomo") as target_url:
        imports = [memflow(target_url, "import-dump", str(work / f"{n}.jsonl")) for n in names]
        with Memory.open(target_url, embedder=embedder) as other:
            after = locomo_replay.record(other, tune, args.questions)
            reindex_s = reindex_hnsw(target_url)
            rebuilt = locomo_replay.record(other, tune, args.questions)
    source, imported = _figures(before), _figures(after)
    return {
        "conversations": [c.sample_id for c in tune],
        "ingest_s_if_missing": round(ingest_s, 1),
        "questions": len(before),
        "figures_source": source,
        "figures_imported": imported,
        "identical": source == imported,
        "sql_results_source_vs_imported": compare(before, after),
        "control_reindexed": {
            "reindex_s": round(reindex_s, 1),
            "figures_identical": _figures(rebuilt) == imported,
            "sql_results_imported_vs_reindexed": compare(after, rebuilt),
        },
        "export": [asdict(r) for r in exports],
        "import": [asdict(r) for r in imports],
        "dump_mb": round(sum(r.report["bytes"] for r in exports) / 2**20, 1),
        "export_s": round(sum(r.report["seconds"] for r in exports), 1),
        "import_s": round(sum(r.report["seconds"] for r in imports), 1),
        "export_peak_rss_mb": max(r.peak_rss_mb for r in exports),
        "import_peak_rss_mb": max(r.peak_rss_mb for r in imports),
    }


def large_dump(args: argparse.Namespace, admin_url: str, work: Path) -> dict[str, Any]:
    name = f"synthetic-{args.synthetic_rows}"
    plan = synth.DatasetPlan(
        name, uuid.uuid5(uuid.NAMESPACE_URL, name), args.synthetic_rows, "large"
    )
    path = work / "synthetic.jsonl"
    with common.scratch_database(admin_url, "dump_synth") as source_url:
        load = synth.load_store(libpq_url(source_url), synth.Generator(seed=30), [plan])
        exported = memflow(source_url, "export", "-d", name, "--with-vectors", "-o", str(path))
    with common.scratch_database(admin_url, "dump_synth_in") as target_url:
        imported = memflow(target_url, "import-dump", str(path), "-d", f"{name}-copy")
    size_mb = path.stat().st_size / 2**20
    return {
        "dataset_rows": load.rows,
        "dump_mb": round(size_mb, 1),
        "records": sum(exported.report["counts"].values()),
        "export": asdict(exported),
        "import": asdict(imported),
        "import_peak_rss_mb": imported.peak_rss_mb,
        "rss_limit_mb": RSS_LIMIT_MB,
        "met": imported.peak_rss_mb < RSS_LIMIT_MB and size_mb >= LARGE_MB,
    }


def _mb(n: int) -> float:
    return round(n / 2**20, 1)


def markdown(res: dict[str, Any]) -> str:
    lo, big = res["locomo"], res["large"]
    src, dst = lo["figures_source"]["overall"], lo["figures_imported"]["overall"]
    keys = [k for k in src if k != "questions"]
    figures = [["source", *(src[k] for k in keys)], ["imported", *(dst[k] for k in keys)]]
    per_dataset = [
        [
            e["report"]["dataset"],
            sum(e["report"]["counts"].values()),
            _mb(e["report"]["bytes"]),
            e["report"]["seconds"],
            e["peak_rss_mb"],
            i["report"]["seconds"],
            i["peak_rss_mb"],
        ]
        for e, i in zip(lo["export"], lo["import"], strict=True)
    ]
    dataset_head = ["dataset", "records", "dump MB", "export s", "export peak RSS MB"]
    dataset_head += ["import s", "import peak RSS MB"]
    large = [
        [op, big[op]["report"]["seconds"], big[op]["wall_s"], big[op]["peak_rss_mb"]]
        for op in ("export", "import")
    ]
    verdict = "**identical**" if lo["identical"] else "**DIFFERENT**"
    sql, control = lo["sql_results_source_vs_imported"], lo["control_reindexed"]
    again = control["sql_results_imported_vs_reindexed"]
    rebuilt = "identical" if control["figures_identical"] else "different"
    lines = [
        "# Export and import of a dataset (docs/export.md)",
        "",
        f"## LoCoMo round trip ({', '.join(lo['conversations'])}: the tune half)",
        "",
        f"Exported with vectors ({lo['dump_mb']} MB), imported into a fresh database, the LoCoMo "
        f"replay run on both ({lo['questions']} questions): figures {verdict}.",
        "",
        f"Per question, the search's SQL results (recall rows, projected graph) of the import "
        f"against the source: {sql['identical']} identical, {sql['same_rows_other_order']} the "
        f"same rows with rows of equal distance in another order, {sql['other_rows']} other rows. "
        "HNSW indexes are approximate and draw each row's level at random, so an index built "
        "anew over the same rows is another graph: as a control, the imported store's HNSW "
        f"indexes were rebuilt (REINDEX, {control['reindex_s']} s) and the replay run again: "
        f"figures {rebuilt}; against the import before the rebuild {again['identical']} identical, "
        f"{again['same_rows_other_order']} reordered, {again['other_rows']} other rows.",
        "",
        common.md_table(["store", *keys], figures),
        "",
        common.md_table(dataset_head, per_dataset),
        "",
        "Seconds are each operation's own (its report); a process's wall time adds Python's start.",
        "",
        f"## A dump of {big['dump_mb']} MB",
        "",
        f"A synthetic dataset ({big['records']} records, vectors included) exported and imported "
        "under another name (so every id goes through the renaming passes too).",
        "",
        common.md_table(["operation", "seconds", "wall s", "peak RSS MB"], large),
        "",
        f"Import stages (s): `{json.dumps(big['import']['report']['stages'])}`.",
        "",
        f"Target: a dump of {LARGE_MB} MB or more imports with a peak RSS under {RSS_LIMIT_MB} MB: "
        + ("**met**." if big["met"] else "**not met**."),
        "",
        "## Run",
        "",
        common.stamp_markdown(res["stamp"]),
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--data", type=Path, default=locomo.DATA, help="locomo10.json")
    ap.add_argument("--home", type=Path, default=locomo.DEFAULT_HOME, help="the LoCoMo store")
    ap.add_argument(
        "--database-url",
        default=None,
        help="a server to make every database on (the LoCoMo datasets are memorised into a new "
        "one); default: the LoCoMo store in --home and its server",
    )
    ap.add_argument("--embedder", default="local")
    ap.add_argument("--conversations", type=int, default=None)
    ap.add_argument("--sessions", type=int, default=None)
    ap.add_argument("--questions", type=int, default=None)
    ap.add_argument(
        "--synthetic-rows", type=int, default=18_000, help="embedding rows (18,000: ~107 MB)"
    )
    ap.add_argument("--out", type=Path, default=common.DEFAULT_OUT)
    ap.add_argument(
        "--quick", action="store_true", help="1 conversation, 3 sessions, hash embedder, small"
    )
    ap.add_argument(
        "--render-only", action="store_true", help="rewrite dump.md from dump.json (nothing is run)"
    )
    args = ap.parse_args(argv)
    if args.render_only:
        return common.render_only(args.out, "dump", [], markdown)
    if args.quick:
        args.conversations, args.sessions, args.questions = 1, 3, 20
        args.embedder, args.synthetic_rows = "hash", 600

    admin_url = common.server_url(args.database_url, args.home)
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="memflow-dump-")))
        source_url = admin_url
        if args.database_url:
            source_url = stack.enter_context(common.scratch_database(admin_url, "dump_source"))
        res: dict[str, Any] = {
            "locomo": locomo_round_trip(args, admin_url, source_url, work),
            "large": large_dump(args, admin_url, work),
        }
    settings = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
    settings.pop("database_url", None)
    res["stamp"] = common.stamp(settings)
    common.write_json(args.out / "dump.json", res)
    common.write_text(args.out / "dump.md", markdown(res))
    lo, big = res["locomo"], res["large"]
    print(
        f"LoCoMo figures identical: {lo['identical']} ({lo['questions']} questions); "
        f"export {lo['export_s']} s, import {lo['import_s']} s; "
        f"{big['dump_mb']} MB dump imported with peak RSS {big['import_peak_rss_mb']} MB"
    )
    return res


if __name__ == "__main__":
    main(sys.argv[1:])
