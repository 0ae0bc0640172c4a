"""Does a change that should change no result keep every LoCoMo search result? Two code trees
search the stored LoCoMo store (``benchmarks.locomo``'s, ``~/.cache/memflow-locomo``) with every
question of every conversation, each tree with its own code in its own process, one after the
other; the responses (timings aside) are compared question by question.

Every question is searched with every option set of ``OPTION_SETS``: as ``benchmarks.locomo``
measures the episodic system (highly_related display, no budget), the default display, a small
summary budget, the vector and lexical baselines (``--variety N``: the other sets for the first N
questions of each conversation only). The store is only read: each tree must find it at its own schema head (the worker
refuses before opening it otherwise, so no tree migrates it). The responses stay in
``--keep`` (LoCoMo text: outside the repository); the result holds counts and question keys
(conversation and index), never a question's text.

    python -m benchmarks.locomo_identity --before /tmp/tree-a --after /tmp/tree-b
    python -m benchmarks.locomo_identity --before /tmp/tree-a --after /tmp/tree-b --out docs/benchmarks
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import common, locomo
from benchmarks.latency_ab import head_of, publish, run_in_tree

# Name -> the search keywords (both trees' ``Dataset.search`` take them). The first is the
# LoCoMo benchmark's episodic search, run for every question.
OPTION_SETS: dict[str, dict[str, Any]] = {
    "benchmark": {"display": "highly_related", "budget_tokens": locomo.UNLIMITED},
    "defaults": {},
    "summary-200": {"display": "summary", "budget_tokens": 200},
    "vector": {"mode": "vector", "display": "highly_related"},
    "lexical": {"mode": "lexical"},
}

# What a worker runs in its tree (its memflow, its benchmarks.locomo): check the store's schema
# without migrating, then search every question and write one JSON line per search.
WORKER = r"""
import contextlib, json, sys, time
from pathlib import Path
from benchmarks import locomo
from memflow.db import engine as dbe, migrate
from memflow.embed.factory import make_embedder
from memflow.memory import Memory
from memflow.store.opening import locate
cfg = json.loads(sys.stdin.read())
with contextlib.redirect_stdout(sys.stderr):
    url, _server = locate(None, Path(cfg["home"]))
    engine = dbe.make_engine(url, pool_size=1)
    with engine.connect() as conn:
        revision = migrate.current_revision(conn)
    engine.dispose()
    if revision != migrate.head_revision():
        raise SystemExit(f"the store is at {revision}, this tree at {migrate.head_revision()}: "
                         "not opened (opening would migrate it)")
    convs, _ = locomo.load(Path(cfg["data"]))
    embedder = locomo.CachedEmbedder(make_embedder(cfg["embedder"]))
    sets = cfg["sets"]
    n, t = 0, time.perf_counter()
    with Memory.open(home=Path(cfg["home"]), embedder=embedder) as mem, \
            open(cfg["keep"], "w", encoding="utf-8") as out:
        for conv in convs[: cfg["conversations"]]:
            ds = mem.dataset(f"locomo-{conv.sample_id}", create=False)
            for i, q in enumerate(conv.questions[: cfg["questions"]]):
                for name, opts in sets.items():
                    if name != "benchmark" and cfg["variety"] is not None and i >= cfg["variety"]:
                        continue
                    resp = ds.search(q.text, **opts).model_dump(mode="json")
                    resp.pop("timings_ms", None)
                    line = {"key": f"{conv.sample_id}/{i}", "set": name, "question": q.text,
                            "split": locomo.split_of(conv), "resp": resp}
                    out.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
                    n += 1
            print(f"{ds.name}: {n} searches, {time.perf_counter() - t:.0f} s", flush=True)
print(json.dumps({"searches": n, "seconds": round(time.perf_counter() - t, 1),
                  "store_revision": revision}))
"""


def run_tree(tree: Path, keep: Path, args: argparse.Namespace) -> dict[str, Any]:
    cfg = {
        "home": str(args.home),
        "data": str(args.data),
        "embedder": args.embedder,
        "keep": str(keep),
        "conversations": args.conversations,
        "questions": args.questions,
        "variety": args.variety,
        "sets": OPTION_SETS,
    }
    got: dict[str, Any] = run_in_tree(tree, WORKER, cfg)
    return got


def _lines(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    out = {}
    with path.open(encoding="utf-8") as fh:
        for raw in fh:
            line = json.loads(raw)
            out[(line["key"], line["set"])] = line
    return out


def ranked(resp: dict[str, Any]) -> list[Any]:
    """The result list: each result's episode (or node) and score, in order."""
    return [(r.get("kind"), r.get("episode_id"), r.get("score")) for r in resp.get("results", [])]


def compare(before: Path, after: Path) -> dict[str, Any]:
    """Per search: the same question, the same result list (ids and scores in order), the same
    whole response (context, units, everything but timings)?"""
    old, new = _lines(before), _lines(after)
    keys = sorted(set(old) & set(new))
    per_set: dict[str, dict[str, int]] = {}
    differ: dict[str, list[str]] = {"question": [], "results": [], "response": []}
    for key in keys:
        a, b = old[key], new[key]
        tally = per_set.setdefault(key[1], {"searches": 0, "identical": 0})
        tally["searches"] += 1
        parts = {
            "question": a["question"] == b["question"],
            "results": ranked(a["resp"]) == ranked(b["resp"]),
            "response": a["resp"] == b["resp"],
        }
        tally["identical"] += all(parts.values())
        for part, same in parts.items():
            if not same:
                differ[part].append(f"{key[0]} ({key[1]})")
    split = {k: 0 for k in locomo.SPLITS}
    for key in keys:
        if key[1] == "benchmark":
            split[new[key]["split"]] += 1
    return {
        "searches_before": len(old),
        "searches_after": len(new),
        "compared": len(keys),
        "identical": sum(t["identical"] for t in per_set.values()),
        "questions": split,
        "per_set": per_set,
        "differ": {part: len(qs) for part, qs in differ.items()},
        "examples": {part: qs[:5] for part, qs in differ.items() if qs},
    }


def markdown(res: dict[str, Any]) -> str:
    st = res["stamp"]
    trees = st["settings"]["trees"]
    c = res["comparison"]
    verdict = (
        "identical" if c["identical"] == c["compared"] == c["searches_before"] else "NOT identical"
    )
    rows = [[name, t["searches"], t["identical"], t["searches"] - t["identical"]]
            for name, t in c["per_set"].items()]  # fmt: skip
    lines = [
        "# LoCoMo search results before and after a change",
        "",
        f"Produced by `{st.get('command') or 'python -m benchmarks.locomo_identity'}`: every "
        "LoCoMo question searched on the stored LoCoMo store by two code trees, each with its "
        "own code (`benchmarks/locomo_identity.py`); responses compared search by search, "
        "timings aside.",
        "",
        f"- before: `{trees['before']}`; after: `{trees['after']}`",
        f"- store schema: {res['before'].get('store_revision')} (both trees' head; the store "
        "is only read)",
        f"- questions: {sum(c['questions'].values()):,} "
        f"({', '.join(f'{k} {v:,}' for k, v in c['questions'].items())}); searches: "
        f"{c['searches_before']:,} before, {c['searches_after']:,} after, "
        f"{c['compared']:,} compared",
        f"- **{c['identical']:,} of {c['compared']:,} responses identical: {verdict}**",
        f"- differing: question text {c['differ']['question']}, result list (ids and scores) "
        f"{c['differ']['results']}, whole response {c['differ']['response']}",
        f"- time: {res['before']['seconds']:,.0f} s before, {res['after']['seconds']:,.0f} s "
        "after (on a shared machine)",
        "",
        "## Per option set",
        "",
        common.md_table(["option set", "searches", "identical", "differ"], rows),
        "",
        "Option sets: "
        + "; ".join(f"`{n}` = `{json.dumps(o)}`" for n, o in st["settings"]["option_sets"].items()),
    ]
    if c["examples"]:
        lines += ["", "## First differing searches (conversation/question index)", ""]
        lines += [f"- {part}: {', '.join(qs)}" for part, qs in c["examples"].items()]
    if res.get("notes"):
        lines += ["", "## Notes", ""] + [f"- {n}" for n in res["notes"]]
    lines += ["", "## Run", "", common.stamp_markdown(st)]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--before", type=Path, help="the tree before the change (a checkout)")
    ap.add_argument("--after", type=Path, help="the tree after the change (a checkout)")
    ap.add_argument("--data", type=Path, default=locomo.DATA)
    ap.add_argument("--home", type=Path, default=locomo.DEFAULT_HOME, help="the LoCoMo store")
    ap.add_argument("--embedder", default="local", help="the store's embedder")
    ap.add_argument("--conversations", type=int, default=None, help="only the first N")
    ap.add_argument("--questions", type=int, default=None, help="only the first N of each")
    ap.add_argument(
        "--variety",
        type=int,
        default=None,
        help="only the first N questions of each conversation with every set (default: all)",
    )
    ap.add_argument(
        "--keep", type=Path, default=None, help="where the responses go (default: under --home)"
    )
    common.page_args(ap, "locomo-identity")
    args = ap.parse_args(argv)
    if args.render_only:
        return common.render_only(args.out or common.DEFAULT_OUT, args.name, args.note, markdown)
    if args.before is None or args.after is None:
        ap.error("--before and --after are required (checkouts of the two trees)")
    stamp = common.stamp({}, __file__, argv)  # the commit the run starts on
    trees = {"before": head_of(args.before), "after": head_of(args.after)}
    keep = args.keep or args.home
    started = time.perf_counter()
    got, files = {}, {}
    for name in ("before", "after"):
        tree = getattr(args, name)
        files[name] = keep / f"identity-{name}-{trees[name]}.jsonl"
        print(f"{name}: {tree} ({trees[name]}) -> {files[name]}", flush=True)
        got[name] = run_tree(tree, files[name], args)
    settings = {
        "data": args.data.name,
        "embedder": args.embedder,
        "conversations": args.conversations or "all",
        "questions_per_conversation": args.questions or "all",
        "variety": args.variety or "all",
        "option_sets": OPTION_SETS,
        "trees": trees,
        "seconds": round(time.perf_counter() - started, 1),
    }
    res = {
        "stamp": {**stamp, "settings": settings},
        "before": got["before"],
        "after": got["after"],
        "comparison": compare(files["before"], files["after"]),
        "notes": list(args.note),
    }
    return publish(res, args.out, args.name, markdown)


if __name__ == "__main__":
    main(sys.argv[1:])
