"""Every search result written out, to show that a refactor changes no result: run ``dump`` on the
commit before and on the commit after (each from its own checkout), then ``compare``.

- ``seeds``: the seed drafts (examples/seed_episodes.json) and the seed texts (``--seeds``, one
  file per document) memorised into a fresh embedded store under ``--home``, with the hash and
  the local embedder; queries over both, every option set below, one dataset and several, and a
  part through the async API.
- ``locomo``: the LoCoMo store ``benchmarks.locomo`` builds (``~/.cache/memflow-locomo``), every
  question of every conversation (the first 25 of each with every option set, the others with
  three).

Timings are left out; with ``compare``, times of writing (``--today``, the date of the runs) are
masked, nothing else.

    python -m benchmarks.search_dump dump seeds OUT.jsonl --home DIR --seeds ../shared/seeds
    python -m benchmarks.search_dump dump locomo OUT.jsonl
    python -m benchmarks.search_dump compare BEFORE.jsonl AFTER.jsonl --today 2026-12-01
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from benchmarks import common

OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"display": "highly_related"},
    {"display": "highly_related", "budget_tokens": 10**6},
    {"display": "summary", "budget_tokens": 200},
    {"display": "detail", "top_k": 3},
    {"mode": "vector", "display": "highly_related"},
    {"mode": "lexical"},
    {"mode": "vector", "budget_tokens": 120},
]
# Seed datasets only: the filters, both clocks (as_of, known_at) and procedures.
SEED_EXTRAS: list[dict[str, Any]] = [
    {"where": {"project": "atlas"}},
    {"scope": {"user": "u1"}},
    {"as_of": datetime(2030, 1, 1, tzinfo=UTC), "include_history": True},
    {"known_at": datetime(2030, 1, 1, tzinfo=UTC)},
    {"as_of": datetime(2024, 5, 1, tzinfo=UTC), "known_at": datetime(2030, 1, 1, tzinfo=UTC)},
    {"now": datetime(2024, 6, 1, tzinfo=UTC)},
    {"mode": "procedural"},
]
SEED_QUERIES = [
    "API 流式返回那个任务有哪些约束？", "首页文案什么时候交付？", "鉴权中间件能改吗",
    "latency under 500 ms", "bundle scoring 到底在算什么", "keyword bonus 怎么工作",
    "图数据库存什么", "向量数据库负责哪一步", "how is the episode score computed?",
    "what does the facet point store?",
]  # fmt: skip


def _write(out: IO[str], tag: str, query: str, opts: dict[str, Any], resp: Any) -> None:
    payload = resp.model_dump(mode="json")
    payload.pop("timings_ms", None)
    line = {
        "tag": tag,
        "query": query,
        "opts": {k: str(v) for k, v in opts.items()},
        "resp": payload,
    }
    out.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")


def dump_seeds(out: IO[str], home: Path, seeds: Path) -> None:
    from memflow.embed.factory import make_embedder
    from memflow.memory import Memory

    drafts = json.loads((common.REPO / "examples" / "seed_episodes.json").read_text("utf-8"))
    texts = [str(p) for p in sorted(seeds.glob("*.txt"))]
    for spec in ("hash", "local"):
        emb = make_embedder(spec)
        names = (f"seed-drafts-{spec}", f"seed-texts-{spec}")
        with Memory.open(home=home, embedder=emb) as mem:
            a = mem.dataset(names[0])
            a.add_episodes(drafts, scope={"user": "u1"}, metadata={"project": "atlas", "n": 3})
            b = mem.dataset(names[1])
            b.memorize(texts, extractor="rules", reference_time=datetime(2024, 5, 8, tzinfo=UTC),
                       metadata={"project": "m"})  # fmt: skip
            for ds in (a, b):
                for q in SEED_QUERIES:
                    for opts in OPTION_SETS + SEED_EXTRAS:
                        _write(out, f"{spec}/{ds.name}", q, opts, ds.search(q, **opts))
            for q in SEED_QUERIES:
                for opts in OPTION_SETS:
                    _write(out, f"{spec}/multi", q, opts, mem.search(q, datasets=names, **opts))

        asyncio.run(_dump_async(out, home, emb, spec, names))


async def _dump_async(
    out: IO[str], home: Path, emb: Any, spec: str, names: tuple[str, str]
) -> None:
    """The same datasets through the async API (a part of the queries and option sets)."""
    from memflow.aio import AsyncMemory

    async with AsyncMemory.open(home=home, embedder=emb) as amem:
        for name in names:
            ads = amem.dataset(name, create=False)
            for q in SEED_QUERIES[:5]:
                for opts in OPTION_SETS:
                    _write(out, f"{spec}/async/{name}", q, opts, await ads.search(q, **opts))
        for q in SEED_QUERIES[:5]:
            _write(out, f"{spec}/async/multi", q, {}, await amem.search(q, datasets=names))


def dump_locomo(out: IO[str], data: Path, home: Path) -> None:
    from benchmarks import locomo
    from memflow.memory import Memory

    convs, _ = locomo.load(data)
    with Memory.open(home=home, embedder="local") as mem:
        for conv in convs:
            ds = mem.dataset(f"locomo-{conv.sample_id}", create=False)
            for i, q in enumerate(conv.questions):
                for opts in OPTION_SETS if i < 25 else OPTION_SETS[:3]:
                    _write(out, ds.name, q.text, opts, ds.search(q.text, **opts))
            print(ds.name, flush=True)


def _masked(x: Any, today: str) -> Any:
    if isinstance(x, dict):
        return {k: _masked(v, today) for k, v in x.items()}
    if isinstance(x, list):
        return [_masked(v, today) for v in x]
    return "<write time>" if isinstance(x, str) and x.startswith(today) else x


def compare(before: Path, after: Path, today: str) -> int:
    """How many lines differ (printing the first few)."""
    a = before.read_text("utf-8").splitlines()
    b = after.read_text("utf-8").splitlines()
    print(f"{len(a)} vs {len(b)} searches")
    differ = sum(1 for x, y in zip(a, b, strict=False) if x != y and
                 _masked(json.loads(x), today) != _masked(json.loads(y), today))  # fmt: skip
    differ += abs(len(a) - len(b))
    print(f"{differ} differ")
    return differ


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="write every search result of a set to a JSON-lines file")
    d.add_argument("set", choices=("seeds", "locomo"))
    d.add_argument("out", type=Path)
    d.add_argument("--home", type=Path, help="seeds: a fresh embedded store; locomo: its store")
    d.add_argument("--seeds", type=Path, default=common.REPO.parent / "shared" / "seeds")
    d.add_argument("--data", type=Path, help="locomo: the LoCoMo file (default: benchmarks.locomo)")
    c = sub.add_parser("compare", help="count the searches whose results differ")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    c.add_argument("--today", default=datetime.now(UTC).date().isoformat(), help="write date")
    args = ap.parse_args(argv)
    if args.command == "compare":
        return 1 if compare(args.before, args.after, args.today) else 0
    with args.out.open("w", encoding="utf-8") as out:
        if args.set == "seeds":
            if args.home is None:
                ap.error("dump seeds needs --home (a directory for a fresh embedded store)")
            dump_seeds(out, args.home, args.seeds)
        else:
            from benchmarks import locomo

            dump_locomo(out, args.data or locomo.DATA, args.home or locomo.DEFAULT_HOME)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
