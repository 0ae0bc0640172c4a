"""Citations: every result and context unit names its document, source, chunk key and time, and
that pair (document id, key) opens the exact message again (Dataset.chunk, `memflow show`)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from typing import Any

import pytest

from memflow import Memory
from memflow.errors import NotFound

# Two conversations without message ids: both get the keys t0, t1, ... (unique per document only).
GARDEN = {
    "title": "garden",
    "sessions": [
        {
            "started_at": "2024-04-02T09:00:00Z",
            "messages": [
                {"speaker": "Mira", "text": "The tomato seedlings need repotting before Friday."},
                {"speaker": "Olek", "text": "I bought clay pots and a bag of compost for them."},
            ],
        }
    ],
}
BIKES = {
    "title": "bikes",
    "sessions": [
        {
            "started_at": "2024-06-11T18:30:00Z",
            "messages": [
                {
                    "speaker": "Olek",
                    "text": "My bicycle chain snapped on the hill road.",
                    "ts": "2024-06-11T18:30:00Z",
                },
                {
                    "speaker": "Mira",
                    "text": "The repair shop on Vine Street fixes chains in a day.",
                },
            ],
        }
    ],
}


@pytest.fixture
def chats(mem: Memory) -> Any:
    ds = mem.dataset("chats")
    report = ds.memorize([json.dumps(GARDEN), json.dumps(BIKES)])
    assert report.ok and len(report.written) == 2
    return ds, report


@pytest.mark.parametrize("mode", ["episodic", "vector", "lexical"])
def test_context_units_cite_the_document_and_key_that_open_the_message(
    chats: Any, mode: str
) -> None:
    ds, report = chats
    stored = {d.id for d in report.documents}
    resp = ds.search(
        "bicycle chain repair and tomato seedlings",
        mode=mode,
        display="highly_related",
        budget_tokens=200,
    )
    assert resp.context_units and resp.token_counter == "words"
    seen: set[Any] = set()
    for unit in resp.context_units:
        assert unit.citations and [c.key for c in unit.citations] == unit.sources
        for cite in unit.citations:
            assert cite.document_id in stored and cite.source
            chunk = ds.chunk(cite.document_id, cite.key)
            assert chunk["text"] in resp.context  # the cited message is the one shown
            assert chunk["ts"] == cite.ts and chunk["source"] == cite.source
            seen.add(cite.document_id)
    assert len(seen) == 2  # units of both documents, whose keys collide
    for result in resp.results:
        assert result.citations and all(c.document_id in stored for c in result.citations)


def test_the_same_key_in_two_documents_opens_two_messages(chats: Any) -> None:
    ds, report = chats
    garden, bikes = (d.id for d in report.documents)
    assert ds.chunk(garden, "t0")["text"] != ds.chunk(bikes, "t0")["text"]
    assert ds.chunk(bikes, "t0")["ts"] == datetime(2024, 6, 11, 18, 30, tzinfo=UTC)
    with pytest.raises(NotFound, match="citations"):
        ds.chunk(garden, "t99")


def test_summary_results_cite_their_evidence(chats: Any) -> None:
    ds, _ = chats
    resp = ds.search("tomato seedlings repotting", display="summary")
    top = resp.results[0]
    assert top.citations
    texts = [ds.chunk(c.document_id, c.key)["text"] for c in top.citations]
    assert any("tomato" in t for t in texts)
    dumped = resp.model_dump(mode="json")
    assert dumped["results"][0]["citations"][0]["key"] == top.citations[0].key


def test_a_skipped_document_still_reports_its_episodes(chats: Any) -> None:
    ds, report = chats
    again = ds.memorize(json.dumps(GARDEN)).documents[0]
    assert again.status == "skipped"
    assert again.episode_ids and again.episode_ids == report.documents[0].episode_ids


def test_cli_json_citations_open_with_show(chats: Any, db_url: str) -> None:
    base = [sys.executable, "-m", "memflow.cli"]
    opts = ["--database-url", db_url, "--dataset", "chats", "--embedder", "hash"]

    def run(*args: str) -> Any:
        out = subprocess.run(
            [*base, *args, *opts, "--json"], capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    payload = run("search", "clay pots and compost", "--display", "highly_related")
    assert payload["token_counter"] == "words"
    cite = payload["context_units"][0]["citations"][0]
    shown = run("show", "--document", cite["document_id"], "--key", cite["key"])
    assert shown["chunk"]["text"] in payload["context"]
    assert shown["chunk"]["key"] == cite["key"] and shown["chunk"]["source"] == cite["source"]
