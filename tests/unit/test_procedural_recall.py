"""Pure parts of procedural recall: which queries ask how, and how hits rank procedures."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

from memflow.recall.config import RecallConfig
from memflow.recall.procedural import asks_how, procedure_context, rank


def test_asks_how() -> None:
    for query in (
        "How do we roll back a release?",
        "how to rotate the keys",
        "What are the steps to onboard someone?",
        "回滚发布的步骤是什么？",
        "怎么给供应商付款",
        "如何重启集群",
    ):
        assert asks_how(query), query
    for query in ("Who books the bus?", "How does Nadia feel?", "How did it go?", "预算是多少"):
        assert not asks_how(query), query


def test_a_procedure_costs_its_cheapest_hit_steps_paying_more_than_the_summary() -> None:
    a, b = uuid.UUID(int=1), uuid.UUID(int=2)
    rows = [
        SimpleNamespace(collection="Procedure_summary", procedure_id=a, text="A", distance=0.12),
        SimpleNamespace(collection="Procedure_step_text", procedure_id=b, text="b1", distance=0.1),
        SimpleNamespace(collection="Procedure_step_text", procedure_id=a, text="a1", distance=0.2),
        SimpleNamespace(collection="Procedure_summary", procedure_id=b, text="B", distance=0.3),
    ]
    ranked = rank(rows, RecallConfig())
    assert [h.procedure_id for h in ranked] == [a, b]  # 0.12 < 0.10 + 0.05
    assert ranked[1].collection == "Procedure_step_text" and abs(ranked[1].score - 0.15) < 1e-9


def test_procedure_context_lists_steps_in_order() -> None:
    text = procedure_context("Restart", 2, ["Stop it.", "Start it."])
    assert text.splitlines() == [
        "Procedure: Restart (version 2)",
        "  1. Stop it.",
        "  2. Start it.",
    ]
