"""Connection faults on a server of the test's own: a restart while a call is in flight fails that
call with a clear error and the next call reconnects; a killed embedded server is recovered by the
next ``Memory.open()`` with every committed row intact."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psutil
import psycopg
import pytest

from memflow.config import libpq_url
from memflow.db.embedded import EmbeddedServer
from memflow.embed.hash import HashEmbedder
from memflow.errors import ConnectionFailed, MemflowError
from memflow.memory import Dataset, Memory

from ._support import (
    assert_intact,
    doc_drafts,
    expected_stats,
    record,
    row_digests,
    rows_missing,
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    srv = EmbeddedServer(tmp_path_factory.mktemp("own") / "home")
    srv.start()
    try:
        yield srv
    finally:
        srv.destroy()  # its data may live outside the home (memflow/db/private.py)


def _open(server: EmbeddedServer, monkeypatch: pytest.MonkeyPatch) -> Memory:
    monkeypatch.delenv("MEMFLOW_DATABASE_URL", raising=False)
    return Memory.open(home=server.home, embedder=HashEmbedder(384))


def _in_flight(fn: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:
            out["error"] = exc

    t = threading.Thread(target=run)
    t.start()
    return t, out


def _wait_until_blocked(url: str, timeout: float = 20) -> None:
    """Until a memflow backend waits on a lock (the call is in flight inside the server)."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        while time.monotonic() < deadline:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'memflow' "
                "AND wait_event_type = 'Lock'"
            ).fetchone()
            if row and row[0]:
                return
            time.sleep(0.05)
    raise AssertionError("the call never reached the server")


def _restart_during(server: EmbeddedServer, call: Callable[[], Any]) -> BaseException | None:
    """Run ``call`` while node is locked, restart the server under it, return what it raised."""
    locker = psycopg.connect(libpq_url(server.url()))
    locker.execute("LOCK TABLE memflow.node IN ACCESS EXCLUSIVE MODE")
    thread, out = _in_flight(call)
    try:
        _wait_until_blocked(server.url())
        assert server.stop("fast")
        server.start()
    finally:
        thread.join(timeout=60)
        locker.close()
    assert not thread.is_alive()
    error = out.get("error")
    return error if isinstance(error, BaseException) else None


def _prepared(mem: Memory, name: str) -> Dataset:
    ds = mem.dataset(name)
    ds.add_episodes(doc_drafts(0))
    return ds


@pytest.mark.parametrize("call", ["search", "write"])
def test_restart_during_a_call_fails_it_clearly_and_the_next_call_reconnects(
    server: EmbeddedServer, monkeypatch: pytest.MonkeyPatch, call: str
) -> None:
    with _open(server, monkeypatch) as mem:
        ds = _prepared(mem, f"restart-{call}")
        expected = ds.stats()
        kept = row_digests(server.url())
        fn: Callable[[], Any] = {
            "search": lambda: ds.search("Ines Lopez ticket", top_k=3),
            "write": lambda: ds.add_episodes(doc_drafts(1)),
        }[call]
        error = _restart_during(server, fn)
        assert isinstance(error, ConnectionFailed), repr(error)
        assert "retry" in str(error)
        assert ds.stats() == expected  # reconnected; the interrupted write left nothing
        lost = rows_missing(kept, row_digests(server.url()))
        assert lost == 0
        assert ds.search("Ines Lopez ticket", top_k=3).results
        if call == "write":
            assert ds.add_episodes(doc_drafts(1)).status == "written"
            assert ds.stats() == expected_stats(ds.id, [doc_drafts(0), doc_drafts(1)])
    assert_intact(server.url())
    record("fault_server_restart", during=call, raised=type(error).__name__, rows_lost=lost)


def _kill_postmaster(server: EmbeddedServer) -> None:
    pid = server.pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        time.sleep(0.05)
    assert not server.is_running()


def test_killed_embedded_server_is_recovered_by_the_next_open(
    server: EmbeddedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = _open(server, monkeypatch)
    ds = _prepared(mem, "killed-server")
    committed = ds.stats()
    kept = row_digests(server.url())
    # A write is inside its transaction when the server dies.
    reached, release = threading.Event(), threading.Event()

    def hook(stage: str) -> None:
        if stage == "after_edges":
            reached.set()
            release.wait(timeout=30)

    mem.fault = hook
    thread, out = _in_flight(lambda: ds.add_episodes(doc_drafts(1)))
    assert reached.wait(timeout=30)
    _kill_postmaster(server)
    release.set()
    thread.join(timeout=60)
    mem.fault = None
    assert isinstance(out.get("error"), ConnectionFailed), repr(out)
    # While the server is down: a clear error, never a bare driver exception.
    with pytest.raises(ConnectionFailed, match="retry"):
        ds.stats()
    started = time.perf_counter()
    with _open(server, monkeypatch) as again:
        recovered = again.dataset("killed-server")
        assert recovered.stats() == committed  # committed rows survived, the open write did not
        seconds = time.perf_counter() - started
    lost = rows_missing(kept, row_digests(server.url()))
    assert lost == 0
    assert ds.stats() == committed  # the old Memory reconnects once the server is back
    assert ds.add_episodes(doc_drafts(1)).status == "written"
    assert ds.stats() == expected_stats(ds.id, [doc_drafts(0), doc_drafts(1)])
    mem.close()
    assert_intact(server.url())
    record(
        "fault_server_sigkill",
        raised=type(out["error"]).__name__,
        recovered_in_s=round(seconds, 2),
        rows_lost=lost,
    )


def test_open_recovers_from_a_stale_pid_file_and_socket(
    server: EmbeddedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _open(server, monkeypatch) as mem:
        _prepared(mem, "stale")
    _kill_postmaster(server)
    # A crash can leave the pid file naming an unrelated live process: it must not fool start().
    pidfile = server.pgdata / "postmaster.pid"
    lines = pidfile.read_text().splitlines()
    pidfile.write_text("\n".join([str(os.getpid()), *lines[1:]]) + "\n")
    with _open(server, monkeypatch) as mem:
        episodes = mem.dataset("stale").stats()["episodes"]
        assert episodes == 2
    assert server.is_running()
    record("fault_stale_pid", started=True, episodes_after=episodes)


def test_errors_while_down_are_memflow_errors(
    server: EmbeddedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = _open(server, monkeypatch)
    ds = mem.dataset("down")
    assert server.stop("fast")
    raised: list[str] = []
    try:
        for call in (
            ds.stats,
            lambda: ds.search("anything"),
            lambda: ds.add_episodes(doc_drafts(0)),
        ):
            with pytest.raises(MemflowError) as info:
                call()
            assert isinstance(info.value, ConnectionFailed), repr(info.value)
            assert info.value.__cause__ is not None
            raised.append(type(info.value).__name__)
    finally:
        server.start()
        mem.close()
    record("fault_server_down", calls=len(raised), raised=sorted(set(raised)))
