"""Time one LongMemEval item's ingest into a scratch dataset of the persistent store (the ingest
stall of issue 26: a new dataset in a store that already holds many).

The item's first ``--sessions`` sessions are memorised into ``timing-<question id>`` (dropped
first and after), with the store's embedding cache, so the time is the store's work, not the
model's. Prints one JSON line: wall and server CPU seconds, and the slowest sessions. Run the same
command on two trees (old and new) one after the other to compare them::

    nice -n 10 .venv/bin/python -m benchmarks.lme_timing --item 195a1a1b --sessions 20
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.embed_cache import DiskCachedEmbedder
from benchmarks.lme_data import documents, item_files, read_item
from benchmarks.lme_store import server_cpu_s, this_tree
from benchmarks.longmemeval import DEFAULT_HOME, default_data
from memflow.memory import Memory


def time_item(mem: Memory, path: Path, sessions: int, name: str) -> dict[str, Any]:
    """Memorise the first ``sessions`` sessions of the item at ``path`` into dataset ``name``."""
    item = read_item(path)
    docs = documents(item)[:sessions]
    if name in {d.name for d in mem.datasets()}:
        mem.drop_dataset(name)
    ds = mem.dataset(name)
    per_session: list[float] = []
    wall, server = time.perf_counter(), server_cpu_s(mem)
    for doc in docs:
        t = time.perf_counter()
        ds.memorize([doc], extractor="rules")
        per_session.append(round(time.perf_counter() - t, 2))
    end = server_cpu_s(mem)
    out = {
        "question_id": item.question_id,
        "sessions": len(docs),
        "wall_s": round(time.perf_counter() - wall, 1),
        "server_cpu_s": None if server is None or end is None else round(end - server, 1),
        "slowest_sessions_s": sorted(per_session, reverse=True)[:5],
        "datasets_in_store": len(mem.datasets()),
        "tree": this_tree(),
    }
    mem.drop_dataset(name)
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--item", required=True, help="question id of a LongMemEval_S item")
    ap.add_argument("--sessions", type=int, default=20, help="sessions to memorise (from first)")
    ap.add_argument("--data", type=Path, default=default_data())
    ap.add_argument("--home", type=Path, default=DEFAULT_HOME)
    ap.add_argument("--embedder", default="local")
    args = ap.parse_args(argv)
    from memflow.embed.factory import make_embedder

    paths = [p for p in item_files(args.data) if p.stem.endswith(f"_{args.item}")]
    if not paths:
        raise SystemExit(f"--item {args.item}: no such item with enough sessions in {args.data}")
    cache = DiskCachedEmbedder(make_embedder(args.embedder), args.home / "embeddings.sqlite")
    mem = Memory.open(None, home=args.home / "store", embedder=cache)
    try:
        out = time_item(mem, paths[0], args.sessions, f"timing-{args.item}")
    finally:
        mem.close()
        cache.close()
    print(json.dumps(out), flush=True)
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
