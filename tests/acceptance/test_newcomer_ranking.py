"""What a newcomer hits in the answers (issue 13), with the real default embedder: the section the
question names wins, a highly_related context keeps to the evidence, decisions rank as evidence."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from memflow.embed.local import LocalEmbedder
from memflow.memory import Memory

from ..conftest import REPO

KAFKA = """# Kafka retention review

The platform team met on 14 October 2024 to review how long the `events` topic keeps data.
Storage on the Kafka cluster grew 40% this quarter and the compliance team asked for a shorter
window.
Next step: book the on-call rotation for the week of the switch.
Decision: we adopt 90 days starting 1 November 2024.
Lena Park owns the change; Omar reviews the broker configuration.
"""
TRIP = [
    {"role": "Mia", "content": "Are we still going to Kyoto in April?"},
    {"role": "Teo", "content": "Yes, I reserved the ryokan close to Gion for three nights."},
    {"role": "Mia", "content": "Great, I will buy the rail passes and plan the temple visits."},
    {"role": "Teo", "content": "Let's see the bamboo forest early, before the crowds."},
]
CONSTRAINTS = ("鉴权中间件不能改", "旧客户端不支持 SSE", "网关的单连接超时是 60 秒")


@pytest.fixture(scope="module")
def store(pg_admin_url: str, template_db: str) -> Iterator[Any]:
    from ..conftest import _scratch_database

    with (
        _scratch_database(pg_admin_url, "memflow_test_template") as url,
        Memory.open(url, embedder=LocalEmbedder()) as mem,
    ):
        yield mem


SAMPLES = REPO / "memflow" / "samples"


@pytest.mark.parametrize(
    "question", ["API 流式返回改造有哪些约束？", "API 流式返回那个任务有哪些约束？"]
)
def test_the_section_the_question_names_answers_it(store: Any, question: str) -> None:
    ds = store.dataset("samples")
    for name in ("api-streaming.zh.md", "db-migration.en.md"):
        ds.memorize(SAMPLES / name)
    top = ds.search(question, top_k=1).results[0]
    assert top.name == "API 流式返回改造"
    facets = [s.text for s in top.path if s.node_kind == "Facet" and s.kind == "node"]
    assert facets == ["约束"], top.path
    # The demo's own evidence call: the three constraints come first, all of them.
    evidence = ds.search(question, top_k=3, display="highly_related", budget_tokens=60).context
    lines = evidence.splitlines()[1:4]
    assert all(any(c in line for line in lines) for c in CONSTRAINTS), evidence


def test_highly_related_keeps_to_the_evidence_and_ranks_the_decision(store: Any) -> None:
    ds = store.dataset("kafka-and-kyoto")
    ds.memorize(KAFKA)
    ds.memorize(json.dumps(TRIP))
    question = "How long do we keep data in the Kafka events topic?"
    full = ds.search(question, display="highly_related").context  # the default 500 tokens
    assert "Decision: we adopt 90 days" in full
    assert "Kyoto" not in full and "ryokan" not in full and "bamboo" not in full, full
    short = ds.search(question, display="highly_related", budget_tokens=40).context
    assert "Decision: we adopt 90 days" in short, short
    assert "book the on-call rotation" not in short, short
