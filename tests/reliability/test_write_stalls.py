"""Writes that cannot stall (issue 25 item 7).

A large first document planned its post-write statements on stale statistics (21 minutes in one
query; 34 ms after ANALYZE): the writer now refreshes them inside its transaction. A write
statement that runs past MEMFLOW_WRITE_TIMEOUT is cancelled with an error that names it, and
nothing of the document stays. A statement whose client was killed stops within seconds
(client_connection_check_interval on every memflow connection) instead of running on.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy import Connection, text

from memflow.config import libpq_url
from memflow.db.steps import run_op
from memflow.drafts import EpisodeDraft
from memflow.errors import DatabaseError
from memflow.memory import Memory
from memflow.store.plan import plan_drafts
from memflow.store.writer import DocumentInfo, Writer, document_exists

from ._support import doc_drafts

WORDS = ("harbour", "ledger", "router", "garden", "invoice", "kernel", "budget", "antenna")


def notes(sentences: int) -> str:
    """Distinct plain sentences (each becomes a point), a paragraph per ten."""
    out = []
    for i in range(sentences):
        w = WORDS[i % len(WORDS)]
        out.append(f"On day {i} Mira checked the {w} number {i * 7 % 101} twice.")
        if i % 10 == 9:
            out.append("\n\n")
    return " ".join(out)


def _one(url: str, sql: str) -> object:
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        row = conn.execute(sql).fetchone()
    assert row is not None
    return row[0]


def test_a_large_first_document_refreshes_the_statistics_it_plans_with(
    mem: Memory, db_url: str
) -> None:
    mem.dataset("other").memorize(notes(5), extractor="rules")
    with psycopg.connect(libpq_url(db_url), autocommit=True) as conn:
        conn.execute("ANALYZE")  # what autovacuum leaves: statistics of a nearly empty store
        conn.execute("ALTER TABLE memflow.node SET (autovacuum_enabled = false)")
    before = _estimate(db_url)
    small = mem.dataset("small").memorize(notes(20), extractor="rules")
    assert small.ok and _estimate(db_url) == before  # a small write: no ANALYZE
    big = mem.dataset("big").memorize(notes(700), extractor="rules")
    assert big.ok and big.documents[0].facet_points >= 500
    nodes = int(str(_one(db_url, "SELECT count(*) FROM memflow.node")))
    assert before < 0.5 * nodes and _estimate(db_url) >= 0.9 * nodes


def test_a_new_dataset_in_a_large_store_is_analysed_as_it_grows_by_small_writes(
    mem: Memory, db_url: str
) -> None:
    # A store whose statistics know a large dataset: a new one is believed nearly empty, and
    # its small writes (a session each) never reach a share of the store's size.
    assert mem.dataset("big").memorize(notes(900), extractor="rules").ok
    with psycopg.connect(libpq_url(db_url), autocommit=True) as conn:
        conn.execute("ANALYZE")
        conn.execute("ALTER TABLE memflow.node SET (autovacuum_enabled = false)")
    before = _estimate(db_url)
    grown = mem.dataset("grown")
    for i in range(14):
        text_ = notes(40).replace("Mira", f"Mira{i}")
        assert grown.memorize(text_, extractor="rules").ok
    held = int(
        str(_one(db_url, f"SELECT count(*) FROM memflow.node WHERE dataset_id = '{grown.id}'"))
    )
    assert held >= 600  # written 50 nodes at a time: each write far below the old threshold
    assert _estimate(db_url) > before  # analysed on the dataset's own growth


def _estimate(db_url: str) -> float:
    """What the planner believes memflow.node holds."""
    return float(
        str(_one(db_url, "SELECT reltuples FROM pg_class WHERE oid = 'memflow.node'::regclass"))
    )


def _document() -> tuple[DocumentInfo, list[EpisodeDraft]]:
    drafts = [EpisodeDraft.model_validate(d) for d in doc_drafts(1)]
    doc = DocumentInfo(
        id=uuid.uuid4(), source="slow.txt", title="Slow", content_type="text",
        content_hash=uuid.uuid4().hex, reference_time=None,
    )  # fmt: skip
    return doc, drafts


def test_a_write_statement_past_the_timeout_is_cancelled_and_nothing_stays(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMFLOW_WRITE_TIMEOUT", "0.5")
    ds = mem.dataset("slow")
    doc, drafts = _document()

    def stall(conn: Connection, _ds: uuid.UUID) -> None:  # a statement that would run 30 s
        conn.execute(text("SELECT pg_sleep(30)"))

    writer = Writer(mem.embedder, after_rows=stall)
    started = time.monotonic()
    with pytest.raises(DatabaseError, match="MEMFLOW_WRITE_TIMEOUT") as err:
        run_op(mem.engine, writer.write_op(ds.id, doc, plan_drafts(ds.id, drafts)))
    assert time.monotonic() - started < 25  # cut, not waited out
    assert "statement timeout" in str(err.value)
    with mem.engine.begin() as conn:
        conn.execute(text("SELECT set_config('memflow.dataset_id', :d, true)"), {"d": str(ds.id)})
        assert not document_exists(conn, ds.id, doc.id)
    assert ds.stats()["episodes"] == 0
    monkeypatch.setenv("MEMFLOW_WRITE_TIMEOUT", "soon")
    with pytest.raises(Exception, match="MEMFLOW_WRITE_TIMEOUT must be"):
        run_op(mem.engine, Writer(mem.embedder).write_op(ds.id, doc, plan_drafts(ds.id, drafts)))


@pytest.fixture
def sleeper(db_url: str) -> Iterator[subprocess.Popen[str]]:
    """A process holding a memflow connection busy in a 120 s statement."""
    code = (
        "import sys; from sqlalchemy import text; from memflow.db import engine as dbe;"
        "eng = dbe.make_engine(sys.argv[1], app_role=True, application_name='mf-sleeper');"
        "conn = eng.connect(); print('ready', flush=True);"
        "conn.execute(text('SELECT pg_sleep(120)'))"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, db_url], stdout=subprocess.PIPE, text=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def _backends(db_url: str) -> int:
    sql = (
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'mf-sleeper' "
        "AND query LIKE 'SELECT pg_sleep%'"
    )
    return int(str(_one(db_url, sql)))


def test_a_killed_clients_statement_stops(db_url: str, sleeper: subprocess.Popen[str]) -> None:
    assert sleeper.stdout is not None and sleeper.stdout.readline().strip() == "ready"
    deadline = time.monotonic() + 30
    while _backends(db_url) == 0:
        assert time.monotonic() < deadline, "the statement never started"
        time.sleep(0.1)
    with psycopg.connect(libpq_url(db_url)) as conn:
        interval = conn.execute(
            "SELECT setting FROM pg_settings WHERE name = 'client_connection_check_interval'"
        ).fetchone()
    assert interval == ("0",)  # the server's default: memflow sets it on its own connections
    os.kill(sleeper.pid, signal.SIGKILL)
    sleeper.wait()
    deadline = time.monotonic() + 30  # the statement had 120 s to go
    while _backends(db_url) > 0:
        assert time.monotonic() < deadline, "the killed client's statement is still running"
        time.sleep(0.2)


def test_memflow_connections_check_their_client(mem: Memory) -> None:
    with mem.engine.connect() as conn:
        assert conn.execute(text("SHOW client_connection_check_interval")).scalar() == "2s"
