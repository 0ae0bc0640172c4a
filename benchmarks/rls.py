"""Search latency before and after revision 0007's policies (issue 25): same store, one run.

Each side is a child process whose ``memflow`` is imported from a given source tree (``--base-tree``:
a ``git worktree`` of the commit before the change; this tree for "after"), on its own scratch
database migrated by that tree (0006's policies compare with the setting; 0007's call
``memflow.readable_dataset(current_user)`` once per statement). Both load the same generated
drafts (several datasets, so row-level security has other tenants' rows to filter) with the hash
embedder (no model: the figure is the database's and the pipeline's time), warm up, then take
turns: each round runs every query once on one side, then on the other, in alternating order, so
load on the shared machine falls on both alike. Reported: the median and p95 per side, and the
ratio of the medians (after / before).

Run: ``python -m benchmarks.rls --base-tree /tmp/memflow-base [--rounds 12] [--episodes 400]``
(``--quick``: 2 datasets of 20 episodes, 5 queries, 2 rounds; the test suite runs it as a smoke test).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

from benchmarks import common
from benchmarks.ingest_long import common_commit

_WORDS = (
    "invoice", "harbour", "deploy", "latency", "garden", "kernel", "budget", "choir", "router",
    "sourdough", "ticket", "review", "vendor", "contract", "migration", "backup", "roadmap",
    "bicycle", "antenna", "ledger", "pipeline", "outage", "rollout", "sensor", "warehouse",
)  # fmt: skip
_PEOPLE = ("Ines Lopez", "Mira Patel", "Tomas Berg", "Aiko Tanaka", "Omar Haddad", "Lena Wolf")

_CHILD = r"""
import json, sys, time
import memflow
from memflow import Memory
from memflow.embed.hash import HashEmbedder

url, spec_path = sys.argv[1], sys.argv[2]
spec = json.loads(open(spec_path, encoding="utf-8").read())
mem = Memory.open(url, embedder=HashEmbedder(384), auto_upgrade=True)
for name, drafts in spec["datasets"].items():
    mem.dataset(name).import_episodes([drafts[i : i + 10] for i in range(0, len(drafts), 10)])
import psycopg
from memflow.config import libpq_url
with psycopg.connect(libpq_url(url), autocommit=True) as admin:
    admin.execute("VACUUM ANALYZE")
    revision = admin.execute("SELECT version_num FROM memflow.alembic_version").fetchone()[0]
ds = mem.dataset(spec["target"])
queries = spec["queries"]
for q in queries:
    ds.search(q)
print(json.dumps({"memflow": memflow.__file__, "revision": revision}), flush=True)
for line in sys.stdin:
    if json.loads(line)["op"] == "quit":
        break
    times = []
    for q in queries:
        t = time.perf_counter()
        ds.search(q)
        times.append((time.perf_counter() - t) * 1000)
    print(json.dumps({"times_ms": times}), flush=True)
mem.close()
"""


def drafts(dataset: int, episodes: int, rng: random.Random) -> list[dict[str, Any]]:
    """Generated episodes: each with two facets of two points and three entities."""
    out = []
    for i in range(episodes):
        w = rng.sample(_WORDS, 6)
        who = rng.sample(_PEOPLE, 2)
        out.append({
            "name": f"{w[0]} {w[1]} {dataset}.{i}",
            "summary": f"{who[0]} and {who[1]} discussed the {w[0]} {w[1]} and the {w[2]} plan.",
            "entities": [{"name": who[0]}, {"name": who[1]}, {"name": f"{w[3]} {dataset}-{i}"}],
            "facets": [
                {"search_text": f"{w[2]} decision", "anchor_text": f"Move the {w[2]} to {w[4]}.",
                 "points": [{"search_text": f"{w[2]} moves to {w[4]} on day {i % 28}"},
                            {"search_text": f"{who[0]} owns the {w[5]} follow-up"}]},
                {"search_text": f"{w[3]} risk", "anchor_text": f"The {w[3]} may slip by {i % 9} days.",
                 "points": [{"search_text": f"{w[3]} slips {i % 9} days"},
                            {"search_text": f"{who[1]} watches the {w[1]}"}]},
            ],
        })  # fmt: skip
    return out


def spec(datasets: int, episodes: int, queries: int, seed: int = 25) -> dict[str, Any]:
    rng = random.Random(seed)
    sets = {f"tenant-{d}": drafts(d, episodes, rng) for d in range(datasets)}
    qs = [
        f"what did {rng.choice(_PEOPLE)} say about the {rng.choice(_WORDS)} {rng.choice(_WORDS)}?"
        for _ in range(queries)
    ]
    return {"datasets": sets, "target": "tenant-0", "queries": qs}


class Side:
    """One tree's child process, ready to run a round of searches on request."""

    def __init__(self, name: str, tree: Path, url: str, spec_path: Path) -> None:
        self.name, self.tree = name, tree
        env = {**os.environ, "PYTHONPATH": str(tree), "OMP_WAIT_POLICY": "PASSIVE"}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD, url, str(spec_path)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=tree,
        )  # fmt: skip
        self.ready = self._read()
        if not str(self.ready.get("memflow", "")).startswith(str(tree.resolve())):
            raise RuntimeError(f"{name} imported memflow from {self.ready.get('memflow')}")

    def _read(self) -> dict[str, Any]:
        out: IO[str] | None = self.proc.stdout
        line = out.readline() if out else ""
        if not line:
            raise RuntimeError(f"the {self.name} child exited (code {self.proc.wait()})")
        result: dict[str, Any] = json.loads(line)
        return result

    def round(self) -> list[float]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": "round"}) + "\n")
        self.proc.stdin.flush()
        return list(self._read()["times_ms"])

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
            self.proc.stdin.close()
        self.proc.wait(timeout=120)


def run(args: argparse.Namespace) -> dict[str, Any]:
    admin = common.server_url(args.database_url, args.home)
    data = spec(args.datasets, args.episodes, args.queries)
    times: dict[str, list[float]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as tmp:
        spec_path = Path(tmp) / "spec.json"
        spec_path.write_text(json.dumps(data), encoding="utf-8")
        with (
            common.scratch_database(admin, "mfbench_rls_before", migrated=False) as before_url,
            common.scratch_database(admin, "mfbench_rls_after", migrated=False) as after_url,
        ):
            sides = {
                "before": Side("before", args.base_tree, before_url, spec_path),
                "after": Side("after", common.REPO, after_url, spec_path),
            }
            try:
                for r in range(args.rounds):
                    order = ("before", "after") if r % 2 == 0 else ("after", "before")
                    for name in order:
                        times[name] += sides[name].round()
            finally:
                for side in sides.values():
                    side.close()
    summary = {name: common.percentiles(t) for name, t in times.items()}
    return {
        "stamp": common.stamp(
            {"datasets": args.datasets, "episodes_per_dataset": args.episodes,
             "queries": args.queries, "rounds": args.rounds, "embedder": "hash (384)",
             "quick": args.quick,
             "server": common.server_facts(admin)}
        ),
        "base_tree_commit": common_commit(args.base_tree),
        "revisions": {name: side.ready["revision"] for name, side in sides.items()},
        "searches": {name: len(t) for name, t in times.items()},
        "latency_ms": summary,
        "ratio_p50": round(summary["after"]["p50"] / summary["before"]["p50"], 3),
        "ratio_mean": round(summary["after"]["mean"] / summary["before"]["mean"], 3),
    }  # fmt: skip


def markdown(data: dict[str, Any]) -> str:
    lat = data["latency_ms"]
    rows = [
        [side, data["revisions"][side], data["searches"][side], lat[side]["p50"], lat[side]["p95"],
         lat[side]["mean"]]
        for side in ("before", "after")
    ]  # fmt: skip
    return "\n".join([
        "# Search latency under row-level security bound to grants (issue 25)",
        "",
        common.stamp_markdown(data["stamp"]),
        "",
        f"before = `{data['base_tree_commit'][:12]}` (its own worktree; policies compare with the "
        "setting), after = this commit (policies call `memflow.readable_dataset(current_user)` "
        "once per statement). Same generated store in each side's own scratch database, hash "
        "embedder, `Dataset.search` in the application role (memflow_app); rounds alternate "
        "between the sides. Milliseconds.",
        "",
        common.md_table(["side", "revision", "searches", "p50", "p95", "mean"], rows),
        "",
        f"after / before: median {data['ratio_p50']}, mean {data['ratio_mean']} (target: "
        "median at most 1.05).",
        "",
        "Command: `python -m benchmarks.rls --base-tree <worktree of the base commit>`.",
    ])  # fmt: skip


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--base-tree", type=Path, help="git worktree of the base commit (required)")
    p.add_argument("--datasets", type=int, default=4)
    p.add_argument("--episodes", type=int, default=400, help="episodes per dataset")
    p.add_argument("--queries", type=int, default=40)
    p.add_argument("--rounds", type=int, default=12)
    p.add_argument("--quick", action="store_true", help="tiny smoke run (the test suite uses it)")
    p.add_argument("--database-url", default=None)
    p.add_argument("--home", type=Path, default=None)
    p.add_argument("--out", type=Path, default=common.DEFAULT_OUT)
    p.add_argument("--render-only", action="store_true", help="rewrite rls.md from rls.json")
    args = p.parse_args(argv)
    if args.render_only:
        return common.render_only(args.out, "rls", [], markdown)
    if args.base_tree is None:
        p.error("--base-tree is required (a git worktree of the commit before the change)")
    if args.quick:
        args.datasets, args.episodes, args.queries, args.rounds = 2, 20, 5, 2
    data = run(args)
    common.write_json(args.out / "rls.json", data)
    common.write_text(args.out / "rls.md", markdown(data))
    print(markdown(data))
    return data


if __name__ == "__main__":
    main()
