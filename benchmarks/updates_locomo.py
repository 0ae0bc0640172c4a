"""Facts that change must not cost LoCoMo anything (issue 26): the LoCoMo test half (the last five
conversations of ``../shared/data/locomo10.json``) ingested fresh by two code trees, each on its
own new database at its own schema, and measured by each tree's own ``benchmarks.locomo`` (same
data, questions, embedder and systems); the difference per figure in points, and the statements
each tree's write path closed (LoCoMo labels no fact as changing: every closure is a false one).

Only counts reach the result: the closed statements are LoCoMo text and are printed to the
terminal (standard error), never written to the repository.

    python -m benchmarks.updates_locomo --base /tmp/base-tree      # base: a checkout
    python -m benchmarks.updates_locomo --base /tmp/base-tree --systems episodic --out docs/benchmarks
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.latency_ab import head_of, publish, run_in_tree

SYSTEMS = ("vector", "lexical", "vector+rules", "episodic")
# The bound: every figure of the test half within half a point of the base's.
MAX_POINTS = 0.5
FIGURES = (
    "evidence_recall@200", "evidence_recall@500", "evidence_recall@1000", "episode_recall@1",
    "episode_recall@3", "episode_recall@5", "episode_recall@10",
)  # fmt: skip

# What a worker runs in its tree: ingest the test half into a fresh database with that tree's
# code, evaluate it with that tree's benchmarks.locomo, count the closures; progress on stderr.
WORKER = r"""
import contextlib, json, sys, time
from pathlib import Path
from sqlalchemy import text
from benchmarks import locomo
from memflow.db import engine as dbe
from memflow.embed.factory import make_embedder
from memflow.memory import Memory
cfg = json.loads(sys.stdin.read())
out = {}
with contextlib.redirect_stdout(sys.stderr):
    convs, _ = locomo.load(Path(cfg["data"]))
    convs = [c for c in convs if locomo.split_of(c) == "test"][: cfg["conversations"]]
    embedder = locomo.CachedEmbedder(make_embedder(cfg["embedder"]))
    mem = Memory.open(cfg["url"], embedder=embedder, auto_upgrade=True)
    try:
        out["ingest_s"] = round(locomo.ingest(mem, convs, cfg["sessions"]), 1)
        chosen = [s for s in locomo.systems() if s.name in cfg["systems"]]
        locomo.embed_queries(embedder, convs)
        t = time.perf_counter()
        _, _, by_split = locomo.evaluate(mem, convs, chosen)
        out["search_s"] = round(time.perf_counter() - t, 1)
        out["test"] = {n: tally.row() for n, tally in by_split["test"].items()}
        sql = text(
            "SELECT o.search_text AS old, n.search_text AS new FROM memflow.node o "
            "JOIN memflow.node n ON n.dataset_id = o.dataset_id AND n.id = o.superseded_by "
            "WHERE o.dataset_id = :d AND o.kind = 'FacetPoint' ORDER BY o.search_text")
        count = text(
            "SELECT count(*) AS points, count(*) FILTER (WHERE invalid_at IS NOT NULL) AS closed, "
            "count(*) FILTER (WHERE props ? 'restates') AS linked FROM memflow.node "
            "WHERE dataset_id = :d AND kind = 'FacetPoint'")
        per = {}
        for conv in convs:
            ds = mem.dataset(f"locomo-{conv.sample_id}", create=False)
            with dbe.transaction(mem.engine, ds.id) as conn:
                c = conn.execute(count, {"d": ds.id}).one()
                pairs = conn.execute(sql, {"d": ds.id}).all()
            per[conv.sample_id] = {"points": c.points, "closed": c.closed,
                                   "superseded": len(pairs), "linked": c.linked}
            for p in pairs:
                print(f"  closed in {conv.sample_id}: {p.old!r} -> {p.new!r}", file=sys.stderr)
        out["closures"] = per
    finally:
        mem.close()
print(json.dumps(out))
"""


def run_tree(tree: Path, admin: str, args: argparse.Namespace) -> dict[str, Any]:
    with common.scratch_database(admin, "upd_locomo", migrated=False) as url:
        cfg = {"url": url, "data": str(args.data), "embedder": args.embedder,
               "systems": list(args.systems), "conversations": args.conversations,
               "sessions": args.sessions}  # fmt: skip
        out: dict[str, Any] = run_in_tree(tree, WORKER, cfg)
    return out


def compare(base: dict[str, Any], this: dict[str, Any]) -> dict[str, Any]:
    """Per system and figure: base, this, this - base in points; the largest difference."""
    rows: dict[str, dict[str, Any]] = {}
    worst = 0.0
    for system, b in base["test"].items():
        t = this["test"][system]
        for fig in FIGURES:
            delta = round((t[fig] - b[fig]) * 100, 2)
            worst = max(worst, abs(delta))
            rows.setdefault(system, {})[fig] = {"base": b[fig], "this": t[fig], "points": delta}
    return {"figures": rows, "largest_points": worst, "within": worst <= MAX_POINTS}


def _closure_totals(res: dict[str, Any]) -> dict[str, int]:
    keys = ("points", "closed", "superseded", "linked")
    return {k: sum(int(c[k]) for c in res["closures"].values()) for k in keys}


CLOSURE_HEADER = ["tree", "commit", "points", "closed", "closed as replaced", "linked", "ingest s"]


def markdown(res: dict[str, Any]) -> str:
    st, cmp = res["stamp"], res["comparison"]
    trees = st["settings"]["trees"]
    rows = [
        [system, fig, v["base"], v["this"], f"{v['points']:+.2f}"]
        for system, figs in cmp["figures"].items()
        for fig, v in figs.items()
    ]
    crows = [
        [name, trees[name], t["points"], t["closed"], t["superseded"], t["linked"],
         res[name]["ingest_s"]]
        for name in ("base", "this")
        for t in [_closure_totals(res[name])]
    ]  # fmt: skip
    lines = [
        "# Facts that change on LoCoMo: the test half before and after (benchmarks/updates_locomo.py)",
        "",
        common.stamp_markdown(st),
        "",
        f"The last five conversations of LoCoMo ({res['questions']} questions of categories 1-4), "
        "ingested fresh by each tree (rules extractor, one session per episode) on its own "
        "database and measured by that tree's `benchmarks.locomo` (evidence recall at "
        "200/500/1,000 tokens, episode recall@k). Nothing is chosen on this half.",
        "",
        common.md_table(["system", "figure", "base", "this", "this - base (points)"], rows),
        "",
        f"- largest difference: {cmp['largest_points']} points (bound: {MAX_POINTS}); "
        f"within the bound: {'yes' if cmp['within'] else 'NO'}",
        "",
        "Statements the write path closed (LoCoMo labels no fact as changing: each closure is "
        "a false one) and statements linked as possibly outdated (a mark in the context, no "
        "closure):",
        "",
        common.md_table(
            CLOSURE_HEADER,
            crows,
        ),
    ]
    if res.get("notes"):
        lines.append("")
    lines += [f"- {note}" for note in res.get("notes", [])]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--base", type=Path, help="the other tree (a checkout; required to run)")
    ap.add_argument("--data", type=Path, default=common.shared_data("locomo10.json"))
    ap.add_argument("--home", type=Path, default=common.DEFAULT_HOME, help="embedded server home")
    ap.add_argument("--database-url", default=None, help="use this PostgreSQL server instead")
    ap.add_argument("--embedder", default="local")
    ap.add_argument("--systems", default=",".join(SYSTEMS), help="benchmarks.locomo systems")
    common.page_args(ap, "updates-locomo")
    ap.add_argument("--quick", action="store_true", help="smoke: 1 conversation, 3 sessions, hash")
    args = ap.parse_args(argv)
    if args.render_only:
        return common.render_only(args.out or common.DEFAULT_OUT, args.name, args.note, markdown)
    if args.base is None:
        ap.error("--base is required (a checkout of the tree to compare with)")
    args.conversations, args.sessions = (1, 3) if args.quick else (None, None)
    if args.quick and args.embedder == "local":
        args.embedder = "hash"
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    stamp = common.stamp({}, __file__, argv)  # the commit the run starts on
    trees = {"base": head_of(args.base), "this": stamp["commit"][:12]}
    admin = common.server_url(args.database_url, args.home)
    started = time.perf_counter()
    got = {}
    for name, tree in (("base", args.base), ("this", common.REPO)):
        print(f"{name}: {tree}", flush=True)
        got[name] = run_tree(tree, admin, args)
    settings = {
        "data": args.data.name,
        "half": "test (the last five conversations)",
        "embedder": args.embedder,
        "systems": args.systems,
        "conversations": args.conversations or "all five",
        "sessions_per_conversation": args.sessions or "all",
        "trees": trees,
        "seconds": round(time.perf_counter() - started, 1),
    }
    res = {
        "stamp": {**stamp, "settings": settings},
        "questions": int(next(iter(got["this"]["test"].values()))["questions"]),
        "base": got["base"],
        "this": got["this"],
        "comparison": compare(got["base"], got["this"]),
        "max_points": MAX_POINTS,
        "notes": list(args.note),
    }
    return publish(res, args.out, args.name, markdown)


if __name__ == "__main__":
    main(sys.argv[1:])
