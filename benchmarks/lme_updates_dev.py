"""A quick look at LongMemEval_S knowledge-update items of the TUNE half only (issue 26): each
item's answer sessions and a few of its other sessions (every ``--stride``-th) are memorised into
a scratch database, then the question is searched as benchmarks.longmemeval does (episodic,
``now`` = the question's date) and "latest evidence first" is scored on the 500-token context.

A development aid, not a figure: a reduced haystack is easier than the real one (the full store:
benchmarks.longmemeval). It refuses test-half items, so tuning never sees them.

    nice -n 10 .venv/bin/python -m benchmarks.lme_updates_dev --items 12 --show
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.embed_cache import DiskCachedEmbedder
from benchmarks.lme_data import documents, item_files, read_item, split_of
from benchmarks.longmemeval import (
    DEFAULT_HOME,
    LATEST_BUDGET,
    comes_first,
    context_order,
    default_data,
    update_sessions,
)
from memflow.memory import Memory

TYPE = "knowledge-update"


def tune_items(data: Path, limit: int) -> list[Any]:
    out = []
    for path in item_files(data):
        qid = path.stem.split("_", 1)[1]
        if "_abs" in qid or split_of(qid) != "tune":
            continue
        item = read_item(path)
        if item.question_type == TYPE and update_sessions(item) is not None:
            out.append(item)
        if len(out) >= limit:
            break
    return out


def run_item(mem: Memory, item: Any, stride: int, show: bool) -> dict[str, Any]:
    if split_of(item.question_id) != "tune":
        raise SystemExit("lme_updates_dev reads the tune half only")
    keep = set(item.answer_sessions) | {s.index for s in item.sessions if s.index % stride == 0}
    docs = [d for d in documents(item) if int(d.source.rsplit("/S", 1)[-1]) in keep]
    name = f"dev-{item.question_id}"
    if name not in {d.name for d in mem.datasets()}:
        mem.dataset(name).memorize(docs, extractor="rules")
    ds = mem.dataset(name)
    update = update_sessions(item)
    assert update is not None
    latest, older, _ = update
    resp = ds.search(item.question, display="highly_related", now=item.question_date)
    order = context_order(resp, LATEST_BUDGET)
    first = comes_first(order, latest, older)
    if show:
        print(f"--- {item.question_id} {'ok' if first else 'MISS'}: {item.question}")
        print(f"    latest evidence {sorted(latest)}; older {sorted(older)}")
        tags = []
        for keys in order:
            tags.append("L" if keys & latest else "O" if keys & older else ".")
        print(f"    units in context order: {''.join(tags)}")
        print("\n".join("    " + line[:220] for line in resp.context.splitlines()[:40]))
    return {"question_id": item.question_id, "latest_first": first, "sessions": len(docs)}


@contextlib.contextmanager
def _database(admin: str, keep: str) -> Iterator[str]:
    if not keep:
        with common.scratch_database(admin, "lme_dev") as url:
            yield url
        return
    import psycopg

    from memflow.config import libpq_url

    with psycopg.connect(libpq_url(admin), autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (keep,)).fetchone() is None:
            conn.execute(f"CREATE DATABASE {keep}")
    url = common.with_database(admin, keep)
    common.migrate_database(url)
    yield url


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--items", type=int, default=12, help="tune knowledge-update items")
    ap.add_argument("--stride", type=int, default=8, help="keep every n-th other session")
    ap.add_argument("--show", action="store_true")
    ap.add_argument("--home", type=Path, default=common.DEFAULT_HOME, help="embedded server home")
    ap.add_argument("--keep", default="", help="a database of the server to keep the datasets in")
    ap.add_argument("--only", default="", help="only these question ids (a,b,...)")
    ap.add_argument("--cache", type=Path, default=DEFAULT_HOME / "embeddings.sqlite")
    args = ap.parse_args(argv)
    from memflow.embed.factory import make_embedder

    cache = DiskCachedEmbedder(make_embedder("local"), args.cache)
    admin = common.server_url(None, args.home)
    out = []
    only = {q for q in args.only.split(",") if q}
    with (
        _database(admin, args.keep) as url,
        Memory.open(url, embedder=cache) as mem,
    ):
        for item in tune_items(default_data(), args.items):
            if only and item.question_id not in only:
                continue
            t = time.perf_counter()
            out.append(run_item(mem, item, args.stride, args.show))
            print(f"  {item.question_id} {time.perf_counter() - t:.0f} s", file=sys.stderr)
    hits = sum(r["latest_first"] for r in out)
    print(f"latest evidence first (tune, reduced haystack): {hits}/{len(out)}")
    cache.close()
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
