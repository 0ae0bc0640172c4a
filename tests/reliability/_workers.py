"""Process bodies for the concurrency and load tests (started with the "spawn" context).

Each worker reports one dict on the queue: what it did, its latencies and every error it saw, so
the parent asserts on facts rather than on exit codes alone.
"""

from __future__ import annotations

import logging
import random
import threading
import time
import traceback
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from typing import Any

from memflow.embed.hash import HashEmbedder
from memflow.memory import Memory

from ._support import doc_drafts


class _RetryCounter(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "retrying a transaction" in record.getMessage():
            self.count += 1


def _count_retries() -> _RetryCounter:
    counter = _RetryCounter()
    logger = logging.getLogger("memflow.db.engine")
    logger.setLevel(logging.INFO)
    logger.addHandler(counter)
    return counter


def memorize_writer(
    url: str,
    dataset: str,
    docs: list[int],
    texts: list[str],
    barrier: Barrier,
    out: Queue[dict[str, Any]],
) -> None:
    """Write the drafts documents ``docs`` and memorize ``texts``, all started at the barrier."""
    retries = _count_retries()
    report: dict[str, Any] = {"statuses": {}, "text_statuses": [], "errors": []}
    try:
        with Memory.open(url, embedder=HashEmbedder(384)) as mem:
            barrier.wait(timeout=120)
            ds = mem.dataset(dataset)
            for i in docs:
                report["statuses"][i] = ds.add_episodes(doc_drafts(i)).status
            for t in texts:
                rep = ds.memorize(t, content_type="text", extractor="rules", routing=False)
                report["text_statuses"] += [d.status for d in rep.documents]
                report["errors"] += [d.error for d in rep.documents if d.error]
    except Exception as exc:
        report["errors"].append(f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
    report["retries"] = retries.count
    out.put(report)


def load_searcher(
    url: str,
    dataset: str,
    queries: list[str],
    threads: int,
    seconds: float,
    barrier: Barrier,
    out: Queue[dict[str, Any]],
) -> None:
    """``threads`` clients, each searching in a loop for ``seconds``; one report for all."""
    latencies: list[float] = []
    errors: list[str] = []
    calls = [0]
    lock = threading.Lock()
    with Memory.open(url, embedder=HashEmbedder(384)) as mem:
        ds = mem.dataset(dataset)
        barrier.wait(timeout=120)
        stop = time.monotonic() + seconds

        def client(seed: int) -> None:
            rng = random.Random(seed)
            while time.monotonic() < stop:
                q = rng.choice(queries)
                t0 = time.perf_counter()
                try:
                    res = ds.search(q, top_k=5)
                    ok = res.results is not None
                except Exception as exc:
                    with lock:
                        errors.append(f"{type(exc).__name__}: {exc}")
                    continue
                dt = time.perf_counter() - t0
                with lock:
                    calls[0] += 1
                    if ok:
                        latencies.append(dt)

        pool = [threading.Thread(target=client, args=(i,)) for i in range(threads)]
        for th in pool:
            th.start()
        for th in pool:
            th.join(timeout=seconds + 120)
    out.put({"kind": "search", "latencies": latencies, "errors": errors, "calls": calls[0]})


def load_writer(
    url: str,
    dataset: str,
    first_doc: int,
    seconds: float,
    barrier: Barrier,
    out: Queue[dict[str, Any]],
) -> None:
    """Write new documents (drafts and memorized text) in a loop for ``seconds``."""
    retries = _count_retries()
    written: list[int] = []
    errors: list[str] = []
    latencies: list[float] = []
    with Memory.open(url, embedder=HashEmbedder(384)) as mem:
        ds = mem.dataset(dataset)
        barrier.wait(timeout=120)
        stop = time.monotonic() + seconds
        i = first_doc
        while time.monotonic() < stop:
            t0 = time.perf_counter()
            try:
                if ds.add_episodes(doc_drafts(i)).status == "written":
                    written.append(i)
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
            latencies.append(time.perf_counter() - t0)
            i += 1
    out.put(
        {
            "kind": "write",
            "written": written,
            "errors": errors,
            "latencies": latencies,
            "retries": retries.count,
        }
    )
