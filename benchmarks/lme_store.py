"""The persistent LongMemEval store: one dataset per question item, ingested once, searched often.

Every session document an ingest writes carries ``metadata = {"lme_ingest": {"commit", "code"}}``:
the commit of the tree that wrote it and a hash of that tree's library code (``memflow/``,
``sql/``, ``alembic/``, uncommitted changes included). Before an ingest the store's records are
compared with the running tree; a dataset written by other code is never topped up silently:
``--fresh`` re-ingests it, ``--keep-other`` ingests only the missing items beside it,
``--search-only`` searches the store as it is; the results say which code wrote it. Ingest times go to ``<home>/ingest-log.jsonl`` (one line per item).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import resource
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil
from sqlalchemy import text

from benchmarks import common
from benchmarks.embed_cache import DiskCachedEmbedder
from benchmarks.lme_data import Item, documents
from memflow.db import engine as dbe
from memflow.ingest.report import DocumentReport
from memflow.memory import Memory

CODE_DIRS = ("memflow", "sql", "alembic")
COUNTS = ("episodes", "facets", "facet_points", "entities", "edges", "embeddings")


def code_hash(root: Path = common.REPO) -> str:
    """sha256 over the library's files as they are on disk (paths and contents), 16 hex."""
    h = hashlib.sha256()
    for top in CODE_DIRS:
        for path in sorted((root / top).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def this_tree() -> dict[str, Any]:
    st = common.stamp({})
    return {"commit": st["commit"], "dirty": st["dirty"], "code": code_hash()}


_WRITERS = text(
    "SELECT DISTINCT metadata -> 'lme_ingest' ->> 'commit' AS commit, "
    "metadata -> 'lme_ingest' ->> 'code' AS code, count(*) OVER () AS documents "
    "FROM memflow.document WHERE dataset_id = :d"
)


def writers(mem: Memory, name: str) -> list[dict[str, Any]]:
    """Which code wrote the documents of dataset ``name`` ([] when it does not exist)."""
    if name not in {d.name for d in mem.datasets()}:
        return []
    ds = mem.dataset(name, create=False)
    with dbe.transaction(mem.engine, ds.id) as conn:
        rows = conn.execute(_WRITERS, {"d": ds.id}).all()
    return [{"commit": r.commit, "code": r.code, "documents": int(r.documents)} for r in rows]


class Progress:
    """Items and sessions done, elapsed and ETA, on stderr (one line per few sessions, so it reads
    the same in a log file as on a terminal)."""

    def __init__(self, items: Sequence[Item], every: int = 10) -> None:
        self.total_words = sum(i.words for i in items) or 1
        self.items = len(items)
        self.done_words = 0
        self.every = every
        self.started = time.perf_counter()

    def session(self, n: int, item: Item, index: int, words: int, total: int) -> None:
        self.done_words += words
        if index % self.every and index != total:
            return
        elapsed = time.perf_counter() - self.started
        share = self.done_words / self.total_words
        eta = elapsed / share * (1 - share) if share > 0 else float("nan")
        print(
            f"[longmemeval] ingest item {n}/{self.items} {item.question_id}: session "
            f"{index}/{total}, {share:.0%} of the words, {elapsed / 60:.1f} min elapsed, "
            f"ETA {eta / 60:.1f} min",
            file=sys.stderr,
            flush=True,
        )


def _cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def server_cpu_s(mem: Memory) -> float | None:
    """CPU seconds the embedded server has used so far (postmaster, its finished children and
    the live ones); None for an external server."""
    pid = mem.server.pid() if mem.server is not None else None
    if pid is None:
        return None
    try:
        main = psutil.Process(pid)
        t = main.cpu_times()
        total = t.user + t.system + t.children_user + t.children_system
        for child in main.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                c = child.cpu_times()
                total += c.user + c.system
    except psutil.Error:
        return None
    return float(total)


def ingest_item(
    mem: Memory, cache: DiskCachedEmbedder, item: Item, tree: dict[str, Any], on_session: Any
) -> dict[str, Any]:
    """Memorise ``item`` into its dataset with the rules extractor and memflow's defaults
    (a dialog session is one episode, no routing); returns what it cost."""
    before = cache.counts()
    wall, cpu, server = time.perf_counter(), _cpu_s(), server_cpu_s(mem)
    docs = documents(item)
    words = {f"S{s.index}": s.words for s in item.sessions}

    def heard(i: int, n: int, rep: DocumentReport) -> None:
        on_session(i, words.get(rep.source.rsplit("/", 1)[-1], 0), n)

    report = mem.dataset(item.dataset).memorize(
        docs,
        extractor="rules",
        metadata={"lme_ingest": {"commit": tree["commit"], "code": tree["code"]}},
        progress=heard,
    )
    after = cache.counts()
    end = server_cpu_s(mem)
    return {
        "question_id": item.question_id,
        "dataset": item.dataset,
        "commit": tree["commit"],
        "code": tree["code"],
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "sessions": len(docs),
        "words": item.words,
        "wall_s": round(time.perf_counter() - wall, 1),
        "cpu_s": round(_cpu_s() - cpu, 1),
        "server_cpu_s": None if server is None or end is None else round(end - server, 1),
        "texts_embedded": after["misses"] - before["misses"],
        "words_embedded": after["words_embedded"] - before["words_embedded"],
        "cache_hits": after["hits"] - before["hits"],
        **{k: sum(getattr(d, k) for d in report.documents) for k in COUNTS},
        "load_avg_1": round(os.getloadavg()[0], 2),
    }


def prepare(
    mem: Memory,
    cache: DiskCachedEmbedder,
    items: Sequence[Item],
    *,
    log: Path,
    fresh: bool,
    search_only: bool,
    keep_other: bool = False,
) -> dict[str, Any]:
    """Make every item's dataset present, written by one code; returns the store's provenance
    (which code wrote it) and this run's ingest records."""
    tree = this_tree()
    found = {i.question_id: writers(mem, i.dataset) for i in items}
    other = {q for q, w in found.items() if w and {x["code"] for x in w} != {tree["code"]}}
    short = {
        i.question_id
        for i in items
        if found[i.question_id]
        and sum(x["documents"] for x in found[i.question_id][:1])
        < sum(1 for s in i.sessions if s.turns)
    }
    if search_only:
        missing = [q for q, w in found.items() if not w or q in short]
        if missing:
            raise SystemExit(
                f"--search-only: {len(missing)} item(s) missing or incomplete in the store, e.g. "
                f"{missing[0]}: run without --search-only to ingest them"
            )
    elif other and not fresh and not keep_other:
        q = sorted(other)[0]
        raise SystemExit(
            f"{len(other)} item(s) of the store were written by other code than this tree "
            f"(code {tree['code']}), e.g. {q}: {found[q]}. Run with --fresh to re-ingest them "
            "with this tree (the embedding cache keeps it cheap), or with --search-only to "
            "search the store as it is."
        )
    # Missing items, items an interrupted run left incomplete (memorize skips the sessions
    # already stored) and, with --fresh, items written by other code (dropped first); with
    # keep_other those stay as they are (the results name every writer), except an incomplete
    # one: it is re-ingested whole, never topped up by other code.
    if keep_other and not fresh:
        other &= short
    todo = (
        []
        if search_only
        else [i for i in items if not found[i.question_id] or i.question_id in short | other]
    )
    progress = Progress(todo)
    records = []
    for n, item in enumerate(todo, start=1):
        if item.question_id in other:
            mem.drop_dataset(item.dataset)
        rec = ingest_item(
            mem,
            cache,
            item,
            tree,
            lambda i, w, t, n=n, item=item: progress.session(n, item, i, w, t),
        )
        rec["resumed"] = item.question_id in short and item.question_id not in other
        records.append(rec)
        with log.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec) + "\n")
        found[item.question_id] = writers(mem, item.dataset)
    codes = sorted({(w["commit"], w["code"]) for ws in found.values() for w in ws})
    return {
        "written_by": [{"commit": c, "code": h} for c, h in codes],
        "same_code_as_this_tree": {h for _, h in codes} == {tree["code"]},
        "this_tree": tree,
        "ingested_this_run": records,
        "logged": logged(log, items, {h for _, h in codes}),
    }


def logged(log: Path, items: Sequence[Item], codes: set[str]) -> list[dict[str, Any]]:
    """The last ingest record of each item by the code that wrote the store (the figures of the
    run that built it, for search-only runs)."""
    if not log.exists():
        return []
    wanted = {i.question_id for i in items}
    last: dict[str, dict[str, Any]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec.get("question_id") in wanted and rec.get("code") in codes:
            last[rec["question_id"]] = rec
    return [last[q] for q in sorted(last)]
