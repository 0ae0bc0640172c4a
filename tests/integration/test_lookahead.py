"""memorize extracts the next document while this one's rows are written (issue 14, item 3)."""

from __future__ import annotations

import json
import threading
import time

import psycopg

from memflow import Memory
from memflow.config import libpq_url
from memflow.embed.base import Matrix
from memflow.embed.hash import HashEmbedder
from memflow.ingest.inputs import resolve_inputs
from memflow.ingest.options import MemorizeOptions
from memflow.ingest.pipeline import Memorizer
from memflow.ingest.progress import ProgressEvent

PLACES = ["harbour", "orchard", "library", "bakery", "glacier"]


class ThreadRecorder(HashEmbedder):
    """The hash embedder, noting which thread sent each passage text."""

    def __init__(self) -> None:
        super().__init__(384)
        self.name = "hash-384"
        self.sent: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def _embed_batch(self, texts: list[str], is_query: bool) -> Matrix:
        if not is_query:
            with self._lock:
                self.sent += [(threading.current_thread().name, t) for t in texts]
        return super()._embed_batch(texts, is_query)


def session(n: int) -> str:
    """A six-turn chat (long enough for segmentation, which embeds while extracting)."""
    place = PLACES[n]
    turns = [
        ("Mira", f"I walked to the {place} this morning, day {n}."),
        ("Oren", f"What did you see at the {place}?"),
        ("Mira", f"Mostly gulls and {n + 3} boats being painted."),
        ("Oren", "Did you take pictures?"),
        ("Mira", f"Twelve, I will send the best {n + 2} tonight."),
        ("Oren", f"Great, I want to paint the {place} too."),
    ]
    return json.dumps(
        {
            "title": f"walk {n}",
            "messages": [
                {"id": f"D{n}:{i}", "speaker": s, "text": t} for i, (s, t) in enumerate(turns, 1)
            ],
        }
    )


def texts(url: str, dataset: str) -> set[tuple[str, str]]:
    sql = (
        "SELECT n.kind, coalesce(n.search_text, n.name) || '|' || coalesce(n.summary, '') "
        "|| '|' || coalesce(n.anchor_text, '') FROM memflow.node n "
        "JOIN memflow.dataset d ON d.id = n.dataset_id WHERE d.name = %s"
    )
    with psycopg.connect(libpq_url(url)) as conn:
        return {(k, t) for k, t in conn.execute(sql, (dataset,)).fetchall()}


def test_the_next_document_is_extracted_while_this_one_is_written(db_url: str) -> None:
    emb = ThreadRecorder()
    events: list[ProgressEvent] = []
    docs = [session(n).encode() for n in range(4)]
    with Memory.open(db_url, embedder=emb) as mem:
        report = mem.dataset("together").memorize(
            docs, extractor="rules", content_type="conversation", on_progress=events.append
        )
        assert [d.status for d in report.documents] == ["written"] * 4
        first_call = len(emb.sent)
        one_by_one = mem.dataset("apart")
        for doc in docs:
            one_by_one.memorize(doc, extractor="rules", content_type="conversation")
    ahead = [t for name, t in emb.sent if name.startswith("memflow-ahead")]
    # The turns of documents 2-4 were embedded by the worker (segmentation), never document 1's.
    assert ahead and not [t for t in ahead if "day 0" in t]
    assert {n for n in range(1, 4) if any(f"day {n}" in t for t in ahead)} == {1, 2, 3}
    # The same rows as memorising the documents one call at a time, where nothing works ahead.
    assert texts(db_url, "together") == texts(db_url, "apart")
    # Every text the model embedded is counted by the progress events, the worker's too.
    assert events[-1].stage == "done" and events[-1].texts_embedded == first_call


def test_a_stored_next_document_is_not_extracted_ahead(db_url: str) -> None:
    emb = ThreadRecorder()
    docs = [session(n).encode() for n in range(4)]
    with Memory.open(db_url, embedder=emb) as mem:
        ds = mem.dataset("again")
        ds.memorize(docs[1], extractor="rules", content_type="conversation")
        emb.sent.clear()
        report = ds.memorize(docs, extractor="rules", content_type="conversation")
    assert [d.status for d in report.documents] == ["written", "skipped", "written", "written"]
    ahead = [t for name, t in emb.sent if name.startswith("memflow-ahead")]
    assert not [t for t in ahead if "day 1" in t]  # stored: nothing extracts it
    assert not [t for t in ahead if "day 2" in t]  # after a skipped document: extracted in turn
    assert [t for t in ahead if "day 3" in t]  # while document 3 was written


class SlowRecorder(ThreadRecorder):
    """Each model call takes 50 ms: a long document keeps the worker busy for seconds."""

    def _embed_batch(self, texts: list[str], is_query: bool) -> Matrix:
        time.sleep(0.05)
        return super()._embed_batch(texts, is_query)


def test_closing_stops_the_worker_within_a_batch(db_url: str) -> None:
    emb = SlowRecorder()
    turns = [
        {
            "id": f"D1:{i}",
            "speaker": "Mira" if i % 2 else "Oren",
            "text": f"Turn {i} is about boat {i}.",
        }
        for i in range(1, 801)
    ]  # 800 turns: 50 model calls of 16, about 2.5 s
    long_chat = json.dumps({"title": "long", "messages": turns}).encode()
    with Memory.open(db_url, embedder=emb) as mem:
        ds = mem.dataset("stop")
        memorizer = Memorizer(ds.context, MemorizeOptions(extractor="rules"))
        (item,) = resolve_inputs(long_chat, content_type="conversation")
        memorizer._ahead = item
        memorizer._start_ahead()  # as when the document before it starts its transaction
        time.sleep(0.2)  # the worker is embedding
        started = time.perf_counter()
        memorizer.close()
        stopped_in = time.perf_counter() - started
        after = len(emb.sent)
        time.sleep(0.2)
    assert 0 < after < len(turns)  # it had started, and did not finish
    assert len(emb.sent) == after  # nothing ran after close() returned
    assert stopped_in < 1.0
