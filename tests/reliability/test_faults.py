"""All-or-nothing per document: faults at every stage of the write path, a failing embedder,
a dropped connection, and a writer process killed with SIGKILL mid-write.

After each fault the store holds the whole document or none of it, no edge points at a missing
node, every node has its embeddings, and a retry succeeds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any

import numpy as np
import psycopg
import pytest

from memflow.config import libpq_url
from memflow.embed.base import BaseEmbedder, Matrix
from memflow.embed.hash import HashEmbedder
from memflow.errors import ConnectionFailed, EmbeddingError
from memflow.memory import Memory
from memflow.store.writer import STAGES

from ..conftest import REPO
from ._support import (
    assert_intact,
    changed_tables,
    doc_drafts,
    expected_stats,
    fingerprint,
    planned_rows,
    record,
    row_digests,
    rows_missing,
    rows_of,
)


class InjectedFault(Exception):
    """Raised by the test's fault hook."""


def _hook_raising_at(stage: str, seen: list[str]) -> Any:
    def hook(s: str) -> None:
        seen.append(s)
        if s == stage:
            raise InjectedFault(stage)

    return hook


@pytest.mark.parametrize("stage", STAGES)
def test_fault_at_each_stage_writes_nothing_and_a_retry_succeeds(
    mem: Memory, db_url: str, stage: str
) -> None:
    ds = mem.dataset("faults")
    ds.add_episodes(doc_drafts(0))  # earlier content sharing entities with the failing document
    before, kept = fingerprint(db_url), row_digests(db_url)
    seen: list[str] = []
    mem.fault = _hook_raising_at(stage, seen)
    with pytest.raises(InjectedFault):
        ds.add_episodes(doc_drafts(1))
    assert seen[-1] == stage
    changed = changed_tables(before, fingerprint(db_url))
    lost = rows_missing(kept, row_digests(db_url))
    assert changed == [] and lost == 0
    assert_intact(db_url)
    mem.fault = None
    assert ds.add_episodes(doc_drafts(1)).status == "written"
    assert ds.stats() == expected_stats(ds.id, [doc_drafts(0), doc_drafts(1)])
    assert_intact(db_url)
    record("fault_stage", stage=stage, rows_lost=lost, tables_changed=len(changed), retry="written")


def test_every_stage_is_reached_by_a_normal_write(mem: Memory) -> None:
    seen: list[str] = []
    mem.fault = seen.append
    mem.dataset("stages").add_episodes(doc_drafts(0))
    assert set(seen) == set(STAGES)
    record("fault_stages_reached", stages=sorted(set(seen)))


def _terminate_memflow_backends(url: str) -> int:
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND application_name = 'memflow' "
            "AND state = 'idle in transaction'"
        ).fetchall()
    return len(rows)


@pytest.mark.parametrize("stage", ["after_nodes", "mid_embeddings", "before_commit"])
def test_connection_dropped_mid_transaction(mem: Memory, db_url: str, stage: str) -> None:
    ds = mem.dataset("dropped")
    ds.add_episodes(doc_drafts(0))
    before, kept = fingerprint(db_url), row_digests(db_url)
    killed: list[int] = []

    def hook(s: str) -> None:
        if s == stage:
            killed.append(_terminate_memflow_backends(db_url))

    mem.fault = hook
    with pytest.raises(ConnectionFailed, match="retry"):
        ds.add_episodes(doc_drafts(1))
    assert killed == [1]
    changed = changed_tables(before, fingerprint(db_url))
    lost = rows_missing(kept, row_digests(db_url))
    assert changed == [] and lost == 0
    mem.fault = None
    assert ds.add_episodes(doc_drafts(1)).status == "written"  # the pool reconnects
    assert ds.stats() == expected_stats(ds.id, [doc_drafts(0), doc_drafts(1)])
    assert_intact(db_url)
    record(
        "fault_connection_dropped",
        stage=stage,
        backends_terminated=killed[0],
        rows_lost=lost,
        tables_changed=len(changed),
        retry="written",
    )


class HalfwayFailingEmbedder(BaseEmbedder):
    """Embeds the first batches, then fails like a provider going down."""

    batch_size = 4

    def __init__(self, fail_after_batches: int, error: Exception) -> None:
        self.inner = HashEmbedder(384)
        self.dim, self.name = 384, "hash-384"
        self.left = fail_after_batches
        self.error = error
        self.calls = 0

    def _embed_batch(self, texts: list[str], is_query: bool) -> Matrix:
        self.calls += 1
        if self.left <= 0:
            raise self.error
        self.left -= 1
        return self.inner._embed_batch(texts, is_query)


@pytest.mark.parametrize(
    "error",
    [ConnectionError("provider connection reset"), EmbeddingError("provider returned HTTP 503")],
    ids=["bare-provider-error", "embedding-error"],
)
def test_embedder_failing_half_way(mem: Memory, db_url: str, error: Exception) -> None:
    ds = mem.dataset("embedder")
    ds.add_episodes(doc_drafts(0))
    before, kept = fingerprint(db_url), row_digests(db_url)
    failing = HalfwayFailingEmbedder(fail_after_batches=2, error=error)
    mem.embedder = failing
    with pytest.raises(EmbeddingError) as info:
        ds.add_episodes(doc_drafts(1))
    assert failing.calls == 3, "the embedder must have failed after real progress"
    assert "provider" in str(info.value)
    changed = changed_tables(before, fingerprint(db_url))
    lost = rows_missing(kept, row_digests(db_url))
    assert changed == [] and lost == 0
    mem.embedder = HashEmbedder(384)
    assert ds.add_episodes(doc_drafts(1)).status == "written"
    assert ds.stats() == expected_stats(ds.id, [doc_drafts(0), doc_drafts(1)])
    assert_intact(db_url)
    record(
        "fault_embedder_half_way",
        error=type(error).__name__,
        raised=type(info.value).__name__,
        batches_before_failure=failing.calls - 1,
        rows_lost=lost,
        tables_changed=len(changed),
        retry="written",
    )


# -- a writer process killed with SIGKILL ----------------------------------------------------------

PROC = "tests.reliability._writer_proc"


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", PROC, *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def _wait_for_line(proc: subprocess.Popen[str], want: str, timeout: float = 60) -> list[str]:
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            err = proc.stderr.read() if proc.stderr else ""
            raise AssertionError(f"writer exited early ({proc.poll()}): {lines} {err[-2000:]}")
        lines.append(line.strip())
        if line.strip() == want:
            return lines
    raise AssertionError(f"writer never printed {want!r}: {lines}")


def _kill(proc: subprocess.Popen[str]) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    for stream in (proc.stdout, proc.stderr):
        if stream:
            stream.close()


@pytest.mark.parametrize("stage", ["after_nodes", "mid_embeddings", "before_commit"])
def test_writer_killed_mid_transaction_leaves_nothing(mem: Memory, db_url: str, stage: str) -> None:
    ds = mem.dataset("killed")
    ds.add_episodes(doc_drafts(0))
    before, kept = fingerprint(db_url), row_digests(db_url)
    proc = _spawn("hang", db_url, "killed", "1", stage)
    _wait_for_line(proc, f"at {stage}")
    _kill(proc)
    changed = changed_tables(before, fingerprint(db_url))
    lost = rows_missing(kept, row_digests(db_url))
    assert changed == [] and lost == 0
    assert_intact(db_url)
    # The killed backend's locks are gone: the retry neither blocks nor fails.
    assert ds.add_episodes(doc_drafts(1)).status == "written"
    assert ds.stats() == expected_stats(ds.id, [doc_drafts(0), doc_drafts(1)])
    assert_intact(db_url)
    record(
        "fault_sigkill_stage",
        stage=stage,
        rows_lost=lost,
        tables_changed=len(changed),
        retry="written",
    )


def test_memorize_loop_killed_at_a_random_moment(mem: Memory, db_url: str) -> None:
    """A process writing 24 documents is killed after a random delay; every document it reported
    committed is whole, the rest absent, and rerunning the loop completes the set exactly."""
    ds = mem.dataset("loop")
    n = 24
    docs = [doc_drafts(i) for i in range(n)]
    rng = np.random.default_rng(int(time.time()))
    proc = _spawn("loop", db_url, "loop", str(n))
    lines = _wait_for_line(proc, "written 2")
    time.sleep(float(rng.uniform(0.0, 0.6)))
    _kill(proc)
    committed = [int(x.split()[1]) for x in lines if x.startswith("written")]
    stored = int(ds.stats()["documents"])
    assert max(committed) < stored < n, "a reported commit is missing, or the kill came too late"
    assert_intact(db_url)
    # Documents are written in order: exactly the first `stored` ones are there, each whole.
    nodes, edges, _ = planned_rows(ds.id, docs[:stored])
    assert {r[0] for r in rows_of(db_url, "SELECT id FROM memflow.node")} == set(nodes)
    assert {r[0] for r in rows_of(db_url, "SELECT id FROM memflow.edge")} == edges
    assert ds.stats() == expected_stats(ds.id, docs[:stored])
    # The same loop again finishes the job; documents already written are skipped.
    proc = _spawn("loop", db_url, "loop", str(n))
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert out.count("skipped") == stored
    assert ds.stats() == expected_stats(ds.id, docs)
    assert_intact(db_url)
    record(
        "fault_sigkill_loop",
        total=n,
        reported_committed=max(committed) + 1,
        documents_present=stored,
        documents_lost=max(0, max(committed) + 1 - stored),
        rerun_skipped=out.count("skipped"),
    )
