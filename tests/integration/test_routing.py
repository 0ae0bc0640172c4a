"""Routing: a new episode merges into an existing one, or starts its own (real PostgreSQL)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from memflow import Memory
from memflow.ingest.route import Candidate, RouteSettings, choose_target
from memflow.llm.client import LlmClient, LlmSettings
from memflow.store.merge import ANCHOR_MAX_CHARS, derive_anchor, derive_summary
from tests.integration.test_memorize import CONVERSATION, MEMO, rows
from tests.support.fake_openai import ChatJson, FakeOpenAI

UPDATE = """# Orders database migration

## Decision
The platform team confirmed PostgreSQL 16 again on 2 April 2024. Priya Raman still owns the migration.

## Plan
Dual writes start on April 8, 2024. The read cut-over is planned for May 20, 2024.
"""

UNRELATED = """# Team offsite

## Venue
The offsite is at the lake house near Sintra. Marta books the bus.
"""

EAGER = RouteSettings(min_similarity=0.0, min_shared_entities=1)


def cand(sim: float, shared: int) -> Candidate:
    return Candidate(uuid.uuid4(), "n", "s", sim, shared)


# ---------------------------------------------------------------- pure rules


def test_threshold_needs_similarity_and_a_shared_entity() -> None:
    s = RouteSettings()
    assert choose_target([cand(0.95, 0), cand(0.91, 0)], s) is None
    assert choose_target([cand(0.89, 3)], s) is None
    hit = cand(0.9, 1)
    assert choose_target([cand(0.97, 0), hit], s) is hit


def test_llm_decides_among_the_nearest_candidates_only() -> None:
    s = RouteSettings(llm_min_similarity=0.5, llm_max_calls=2)
    asked: list[float] = []

    def ask(c: Candidate) -> bool:
        asked.append(c.similarity)
        return c.similarity < 0.7

    cands = [cand(0.9, 0), cand(0.8, 0), cand(0.6, 0)]
    assert choose_target(cands, s, ask) is None  # the third is never asked: two calls at most
    assert asked == [0.9, 0.8]
    asked.clear()
    near = cand(0.65, 0)
    assert choose_target([near, cand(0.4, 0)], s, ask) is near
    assert asked == [0.65]


def test_routing_is_off_for_dialog_sessions_by_default() -> None:
    s = RouteSettings()
    assert s.active_for("markdown") and s.active_for("text") and s.active_for("draft")
    assert not s.active_for("conversation") and not s.active_for("dialog")
    assert RouteSettings(enabled=True).active_for("dialog")
    assert not RouteSettings(enabled=False).active_for("markdown")


def test_derived_texts_are_bounded_and_never_repeat_a_contribution() -> None:
    facets = [(f"topic {i}", "word " * 200) for i in range(30)]
    summary = derive_summary(facets, max_chars=1200)
    assert len(summary) <= 1200 + 40 and summary.startswith("【topic 0】word")
    assert summary.endswith("more)")
    assert derive_summary([("Plan", "Ship it.")]) == "【Plan】Ship it."
    base = "The base text."
    assert derive_anchor(base, ["Added.", "Added.", "The base text."]) == "The base text.\nAdded."
    grown = derive_anchor(base, ["x" * 5000, "y" * 5000])
    assert len(grown) <= ANCHOR_MAX_CHARS and grown.startswith(base)
    assert derive_anchor(None, ["Only this."]) == "Only this."


# ---------------------------------------------------------------- against the database


def test_an_update_merges_into_the_existing_episode(mem: Memory, db_url: str) -> None:
    ds = mem.dataset("notes")
    first = ds.memorize(MEMO).documents[0]
    second = ds.memorize(UPDATE, routing=EAGER).documents[0]
    assert second.status == "written" and second.merged == 1
    assert second.episode_ids == first.episode_ids  # written under the existing episode id

    [(ep_id, name, summary, props)] = rows(
        db_url, "SELECT id, name, summary, props FROM memflow.node WHERE kind = 'Episode'"
    )
    assert name == "Orders database migration"
    # Re-summarised from all facets, old and new, in reading order.
    assert summary.split("\n")[0].startswith("【Decision】On 12 March 2024")
    assert [line[: line.index("】") + 1] for line in summary.split("\n")] == [
        "【Decision】",
        "【Risks】",
        "【Plan】",
    ]
    assert [d[0] for d in props["merge"]["docs"]] == [str(second.id)]
    facets = dict(
        rows(db_url, "SELECT search_text, anchor_text FROM memflow.node WHERE kind = 'Facet'")
    )
    assert set(facets) == {"Decision", "Risks", "Plan"}
    # The facet with the same handle absorbed the new text after its own.
    assert facets["Decision"].startswith("On 12 March 2024")
    assert "confirmed PostgreSQL 16 again on 2 April 2024" in facets["Decision"]
    # Embeddings follow the merged texts.
    assert rows(db_url, "SELECT text FROM memflow.episode_summary") == [(summary,)]
    anchors = dict(
        rows(
            db_url,
            "SELECT n.search_text, a.text FROM memflow.facet_anchor_text a "
            "JOIN memflow.node n ON n.id = a.node_id",
        )
    )
    assert anchors == facets
    # Both documents support the merged episode; provenance reaches the new sentences.
    assert rows(db_url, "SELECT count(*) FROM memflow.node_source WHERE node_id = %s", ep_id) == [
        (2,)
    ]
    keys = rows(
        db_url,
        "SELECT c.key FROM memflow.node_chunk nc JOIN memflow.chunk c ON c.id = nc.chunk_id "
        "JOIN memflow.node f ON f.id = nc.node_id WHERE f.search_text = 'Decision' ORDER BY c.idx, c.key",
    )
    assert len(keys) == 4  # two sentences from each document


def test_merging_again_keeps_the_texts_bounded(mem: Memory, db_url: str) -> None:
    ds = mem.dataset("notes")
    ds.memorize(MEMO)
    for i in range(12):
        text = (
            UPDATE.replace("2 April 2024", f"{i + 2} April 2024") + f"\nNote {i}: " + "detail " * 60
        )
        assert ds.memorize(text, routing=EAGER).documents[0].merged == 1
    [(summary, props)] = rows(
        db_url, "SELECT summary, props FROM memflow.node WHERE kind = 'Episode'"
    )
    assert len(summary) <= 1300 and len(props["merge"]["docs"]) == 12
    for (anchor,) in rows(db_url, "SELECT anchor_text FROM memflow.node WHERE kind = 'Facet'"):
        assert len(anchor) <= ANCHOR_MAX_CHARS


def test_unrelated_or_dissimilar_documents_start_their_own_episode(
    mem: Memory, db_url: str
) -> None:
    ds = mem.dataset("notes")
    ds.memorize(MEMO)
    # No shared entity: never merged, however low the similarity bar.
    assert ds.memorize(UNRELATED, routing=EAGER).documents[0].merged == 0
    # Default thresholds: the update is similar, but not 0.9-similar under the hash embedder.
    assert ds.memorize(UPDATE).documents[0].merged == 0
    assert rows(db_url, "SELECT count(*) FROM memflow.node WHERE kind = 'Episode'") == [(3,)]
    assert rows(db_url, "SELECT count(*) FROM memflow.node WHERE props ? 'merge'") == [(0,)]


def later_session(day: int) -> str:
    session = {
        "started_at": f"2024-06-{day:02d}T09:00:00Z",
        "messages": [
            {"speaker": "Ana", "text": f"Day {day}: the Lisbon talk went well."},
            {"speaker": "Ben", "text": "Great, the latency charts landed."},
        ],
    }
    return json.dumps({"title": "Ana and Ben", "sessions": [session]})


def test_dialog_sessions_are_not_routed_by_default(mem: Memory, db_url: str) -> None:
    ds = mem.dataset("chat")
    ds.memorize(json.dumps(CONVERSATION))
    eager = RouteSettings(min_similarity=0.0)
    assert ds.memorize(later_session(14), routing=eager).documents[0].merged == 0
    assert rows(db_url, "SELECT count(*) FROM memflow.node WHERE kind = 'Episode'") == [(3,)]
    # Switched on, a session sharing the speakers merges into an earlier one.
    forced = RouteSettings(enabled=True, min_similarity=0.0)
    assert ds.memorize(later_session(15), routing=forced).documents[0].merged == 1
    assert rows(db_url, "SELECT count(*) FROM memflow.node WHERE kind = 'Episode'") == [(3,)]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def test_an_llm_router_decides_when_configured(mem: Memory, db_url: str, fake: FakeOpenAI) -> None:
    ds = mem.dataset("notes")
    ds.memorize(MEMO, extractor="rules")
    fake.script_chat(
        ChatJson({"same_event": False, "reason": "different"}),
        ChatJson({"same_event": True, "reason": "same migration"}),
    )
    settings = RouteSettings(llm_min_similarity=-1.0)
    with LlmClient(LlmSettings(base_url=fake.base_url, model="m", api_key="k")) as client:
        no = ds.memorize(UPDATE, extractor="rules", llm=client, routing=settings).documents[0]
        yes = ds.memorize(
            UPDATE + "\nOne more line.", extractor="rules", llm=client, routing=settings
        ).documents[0]
    assert (no.merged, no.llm_calls) == (0, 1)
    assert (yes.merged, yes.llm_calls) == (1, 1)
    prompt: Any = fake.chat_requests[0].prompt_text
    assert "Orders database migration" in prompt
    assert rows(db_url, "SELECT count(*) FROM memflow.node WHERE kind = 'Episode'") == [(2,)]
