"""memorize end to end against a real PostgreSQL: parse -> extract -> route -> write."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from memflow import DatabaseError, ExtractionError, InvalidInput, Memory
from memflow.config import libpq_url
from memflow.ingest.options import MemorizeOptions
from memflow.ingest.pipeline import Memorizer, resolve_inputs
from memflow.llm.client import LlmClient, LlmSettings
from memflow.text.document import Chunk, ParsedDocument, Session
from tests.integration.test_storage import snapshot
from tests.support.fake_openai import ChatJson, FakeOpenAI

MEMO = """# Orders database migration

## Decision
On 12 March 2024 the platform team chose PostgreSQL 16 for the orders database. Priya Raman owns the migration.

## Risks
The backfill needs about 60 hours. Two stored procedures in the billing path have no tests.
"""

CONVERSATION = {
    "title": "Ana and Ben",
    "sessions": [
        {
            "started_at": "2024-05-06T19:30:00Z",
            "messages": [
                {"id": "D1:1", "speaker": "Ana", "text": "Did you book the flights to Lisbon?"},
                {"id": "D1:2", "speaker": "Ben", "text": "Yes, the direct flight on June 12 costs 240 euros."},
                {"id": "D1:3", "speaker": "Ana", "text": "Great, I will finish the slides this week."},
            ],
        },
        {
            "started_at": "2024-05-20T08:15:00Z",
            "messages": [
                {"id": "D2:1", "speaker": "Ben", "text": "The hotel near Cais do Sodre is confirmed."},
                {"id": "D2:2", "speaker": "Ana", "text": "Thanks! The talk is on June 13 in Room B."},
            ],
        },
    ],
}  # fmt: skip


def rows(url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(libpq_url(url)) as conn:
        return conn.execute(sql, params).fetchall()


def point_chunks(url: str) -> dict[str, list[tuple[str, str]]]:
    """FacetPoint search_text -> [(chunk key, chunk text)] through node_chunk provenance."""
    out: dict[str, list[tuple[str, str]]] = {}
    for text, key, chunk in rows(
        url,
        "SELECT n.search_text, c.key, c.text FROM memflow.node n "
        "JOIN memflow.node_chunk nc ON nc.node_id = n.id "
        "JOIN memflow.chunk c ON c.id = nc.chunk_id WHERE n.kind = 'FacetPoint' ORDER BY c.idx",
    ):
        out.setdefault(text, []).append((key, chunk))
    return out


def session_doc(keys: list[tuple[str, str, str]], day: int, title: str = "chat") -> ParsedDocument:
    """One dialog session as the LoCoMo loader builds it: turn ids as chunk keys, its date."""
    started = datetime(2023, 5, day, 13, 56, tzinfo=UTC)
    chunks = [
        Chunk(index=i, key=k, text=t, speaker=s, session=0) for i, (k, s, t) in enumerate(keys)
    ]
    return ParsedDocument(
        source=f"locomo#{title}",
        title=title,
        content_type="conversation",
        text="\n".join(f"{s}: {t}" for _, s, t in keys),
        reference_time=started,
        chunks=chunks,
        sessions=[Session(index=0, started_at=started, chunk_indexes=list(range(len(chunks))))],
    )


TURNS = [
    ("D1:1", "Wren", "Yesterday I helped at the community garden meeting; we planted apple trees."),
    ("D1:2", "Rosalind", "Great! I ran a fun run on Saturday, 5 km in 31 minutes."),
    ("D1:3", "Wren", "The planning office meeting is on 12 June at 10:30."),
]


# ---------------------------------------------------------------- structure


def test_markdown_memo_becomes_one_episode_with_a_facet_per_section(
    mem: Memory, db_url: str
) -> None:
    ds = mem.dataset("notes")
    report = ds.memorize(MEMO)
    [doc] = report.documents
    assert doc.status == "written" and doc.content_type == "markdown" and doc.extractor == "rules"
    assert (doc.episodes, doc.facets, doc.facet_points) == (1, 2, 4)
    assert doc.embeddings > 0 and doc.llm_calls == 0 and doc.error is None

    [(name, summary)] = rows(db_url, "SELECT name, summary FROM memflow.node WHERE kind='Episode'")
    assert name == "Orders database migration"
    assert summary.startswith("【Decision】On 12 March 2024") and "【Risks】" in summary
    facets = dict(
        rows(db_url, "SELECT search_text, facet_type FROM memflow.node WHERE kind='Facet'")
    )
    assert facets == {"Decision": "decision", "Risks": "risk"}
    entities = {r[0] for r in rows(db_url, "SELECT name FROM memflow.node WHERE kind='Entity'")}
    assert {"Priya Raman", "PostgreSQL"} <= entities

    # Each point is one sentence and its provenance is exactly that sentence's chunk.
    links = point_chunks(db_url)
    assert links == {
        "On 12 March 2024 the platform team chose PostgreSQL 16 for the orders database.": [
            (
                "s0",
                "On 12 March 2024 the platform team chose PostgreSQL 16 for the orders database.",
            )
        ],
        "Priya Raman owns the migration.": [("s1", "Priya Raman owns the migration.")],
        "The backfill needs about 60 hours.": [("s2", "The backfill needs about 60 hours.")],
        "Two stored procedures in the billing path have no tests.": [
            ("s3", "Two stored procedures in the billing path have no tests.")
        ],
    }
    # The summary embedding row holds the node's summary text.
    [(emb_text,)] = rows(db_url, "SELECT text FROM memflow.episode_summary")
    assert emb_text == summary
    assert ds.stats()["documents"] == 1 and ds.stats()["chunks"] == 4


def test_two_session_conversation_gives_an_episode_per_session(mem: Memory, db_url: str) -> None:
    ds = mem.dataset("chat")
    report = ds.memorize(json.dumps(CONVERSATION))
    [doc] = report.documents
    assert doc.status == "written" and doc.content_type == "conversation"
    assert doc.episodes == 2 and len(doc.episode_ids) == 2

    episodes = rows(
        db_url, "SELECT name, time_start FROM memflow.node WHERE kind='Episode' ORDER BY time_start"
    )
    assert [t.date().isoformat() for _, t in episodes] == ["2024-05-06", "2024-05-20"]
    # The speakers are one entity each, involved by both session episodes.
    involved = rows(
        db_url,
        "SELECT en.name, count(*) FROM memflow.edge e JOIN memflow.node ep ON ep.id = e.src "
        "JOIN memflow.node en ON en.id = e.dst WHERE e.relationship = 'involves_entity' "
        "AND ep.kind = 'Episode' AND en.name IN ('Ana', 'Ben') GROUP BY en.name ORDER BY en.name",
    )
    assert involved == [("Ana", 2), ("Ben", 2)]
    assert rows(db_url, "SELECT count(*) FROM memflow.node WHERE kind='Entity' AND name='Ana'") == [
        (1,)
    ]
    # Every turn is a point linked to its own turn id.
    links = point_chunks(db_url)
    turn_keys = sorted(k for chunks in links.values() for k, _ in chunks)
    assert turn_keys == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    for text, chunks in links.items():
        assert len(chunks) == 1 and text.endswith(chunks[0][1])


def test_memorizing_the_same_content_again_is_skipped_before_extraction(
    mem: Memory, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds = mem.dataset("notes")
    first = ds.memorize(MEMO).documents[0]
    before = snapshot(db_url)

    from memflow.ingest.rules import RulesExtractor

    def boom(self: Any, doc: Any) -> Any:
        raise AssertionError("extraction must not run for a known document")

    monkeypatch.setattr(RulesExtractor, "extract", boom)
    again = ds.memorize(MEMO).documents[0]
    assert again.status == "skipped" and again.id == first.id
    assert (again.episodes, again.embeddings) == (0, 0)
    assert snapshot(db_url) == before


def test_paths_directories_and_the_input_rules(mem: Memory, tmp_path: Path) -> None:
    (tmp_path / "memo.md").write_text(MEMO, encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "chat.json").write_text(json.dumps(CONVERSATION), encoding="utf-8")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")  # not a text extension: ignored
    ds = mem.dataset("files")
    report = ds.memorize(tmp_path)
    assert [(Path(d.source).name, d.status) for d in report.documents] == [
        ("memo.md", "written"),
        ("chat.json", "written"),
    ]
    assert report.totals()["episodes"] == 3 and report.ok
    # A str naming an existing file is that file: the same content, so skipped.
    assert ds.memorize(str(tmp_path / "memo.md")).documents[0].status == "skipped"
    # A mistyped file name is an error, never memorised as text.
    with pytest.raises(InvalidInput, match="no such file"):
        ds.memorize("missing-notes.md")
    # Several inputs: failures are reported, the others written, nothing raised.
    mixed = ds.memorize(["missing-notes.md", "Ana met Ben in Lisbon on 12 June 2024."])
    assert [d.status for d in mixed.documents] == ["failed", "written"]
    assert mixed.documents[0].error_type == "InvalidInput" and not mixed.ok
    assert mixed.documents[1].source == "<text>"
    # A file's modification time anchors a text document.
    items = resolve_inputs(tmp_path / "memo.md")
    assert items[0].doc is not None
    assert items[0].doc.reference_time.timestamp() == pytest.approx(
        (tmp_path / "memo.md").stat().st_mtime, abs=1e-3
    )


def test_parsed_documents_as_the_benchmark_builds_them(mem: Memory, db_url: str) -> None:
    ds = mem.dataset("locomo")
    docs = [
        session_doc(TURNS, 8, "s1"),
        session_doc([("D2:1", "Rosalind", "I sketched a harbour.")], 9, "s2"),
    ]
    memorizer = Memorizer(ds.context, MemorizeOptions(extractor="rules"))
    seen: list[tuple[int, int, str]] = []
    report, errors = memorizer.run(
        resolve_inputs(docs), progress=lambda i, n, d: seen.append((i, n, d.status))
    )
    assert errors == [] and seen == [(1, 2, "written"), (2, 2, "written")]
    keys = sorted(k for chunks in point_chunks(db_url).values() for k, _ in chunks)
    assert keys == ["D1:1", "D1:2", "D1:3", "D2:1"]
    report2, _ = memorizer.run(resolve_inputs(docs))
    assert [d.status for d in report2.documents] == ["skipped", "skipped"]
    assert [d.id for d in report2.documents] == [d.id for d in report.documents]


# ---------------------------------------------------------------- failures write nothing


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def llm_client(fake: FakeOpenAI) -> LlmClient:
    return LlmClient(LlmSettings(base_url=fake.base_url, model="m", api_key="k", timeout_s=5))


def llm_reply(title: str) -> dict[str, Any]:
    return {
        "events": [
            {
                "name": f"{title}: Wren and Rosalind catch up",
                "sources": ["D1:1", "D1:2", "D1:3"],
                "sections": [
                    {
                        "title": "Rosalind's fun run",
                        "content": "Rosalind ran a 5 km fun run on Saturday in 31 minutes.",
                        "facet_type": "metric",
                        "sources": ["D1:2"],
                        "points": [{"text": "Rosalind ran 5 km in 31 minutes", "sources": ["D1:2"]}],
                        "entities": [{"name": "Rosalind", "role": "runner"}],
                    }
                ],
                "entities": [
                    {"name": "Rosalind", "entity_type": "person", "description": "A runner.",
                     "role": "speaker", "aliases": []},
                ],
            }
        ]
    }  # fmt: skip


def test_an_llm_failure_writes_nothing_and_raises_for_a_single_input(
    mem: Memory, db_url: str, fake: FakeOpenAI
) -> None:
    ds = mem.dataset("chat")
    before = snapshot(db_url)
    with llm_client(fake) as client, pytest.raises(ExtractionError, match="HTTP 500"):
        ds.memorize(session_doc(TURNS, 8), extractor="llm", llm=client)
    assert snapshot(db_url) == before


def test_in_a_batch_the_failed_document_is_reported_and_the_others_written(
    mem: Memory, db_url: str, fake: FakeOpenAI
) -> None:
    ds = mem.dataset("chat")
    fake.script_chat(ChatJson(llm_reply("one")))  # then the server answers 500
    with llm_client(fake) as client:
        report = ds.memorize(
            [session_doc(TURNS, 8, "one"), session_doc(TURNS, 9, "two")],
            extractor="llm",
            llm=client,
        )
    ok, failed = report.documents
    assert (ok.status, ok.extractor, ok.llm_calls) == ("written", "llm", 1)
    assert ok.tokens > 0 and ok.facets == 1 and ok.facet_points >= 1
    points = {
        r[0] for r in rows(db_url, "SELECT search_text FROM memflow.node WHERE kind='FacetPoint'")
    }
    assert "Rosalind ran 5 km in 31 minutes" in points
    assert failed.status == "failed" and failed.error_type == "ExtractionError"
    assert failed.id is not None and "HTTP 500" in (failed.error or "")
    assert rows(db_url, "SELECT count(*) FROM memflow.document") == [(1,)]
    assert rows(db_url, "SELECT name FROM memflow.node WHERE kind='Episode'") == [
        ("one: Wren and Rosalind catch up",)
    ]
    assert report.totals()["failed"] == 1 and report.totals()["llm_calls"] >= 1


@pytest.mark.parametrize("stage", ["after_nodes", "mid_embeddings", "before_commit"])
def test_a_write_failure_leaves_every_table_as_it_was(mem: Memory, db_url: str, stage: str) -> None:
    ds = mem.dataset("notes")
    ds.memorize(json.dumps(CONVERSATION))
    before = snapshot(db_url)

    def fault(at: str) -> None:
        if at == stage:
            raise DatabaseError(f"injected at {at}")

    mem.fault = fault
    with pytest.raises(DatabaseError, match="injected"):
        ds.memorize(MEMO)
    assert snapshot(db_url) == before
    mem.fault = None
    assert ds.memorize(MEMO).documents[0].status == "written"
