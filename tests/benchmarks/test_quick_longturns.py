"""Smoke test of benchmarks/longturns.py --quick (this tree on both sides, hash embedder), and the
generated chat: long answers, one evidence sentence each at the start, middle or end."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import longturns


def test_the_chat_hides_each_fact_where_its_question_says() -> None:
    text, questions = longturns.chat(2, 3)
    messages = {m["id"]: m["text"] for s in json.loads(text)["sessions"] for m in s["messages"]}
    assert {q["language"] for q in questions} == {"en", "zh"}
    assert {q["position"] for q in questions} == set(longturns.POSITIONS)
    assert len({q["question"] for q in questions}) == len(questions)
    for q in questions:
        answer = messages[q["evidence"]]
        at = answer.index(q["fact"])
        size = len(answer.split()) if q["language"] == "en" else len(answer) / 2
        assert size >= q["answer_words"] >= 300
        where = at / len(answer)
        expected = {
            "start": where == 0,
            "middle": 0.3 < where < 0.7,
            "end": at + len(q["fact"]) == len(answer),
        }
        assert expected[q["position"]], (q["position"], where)


def test_quick_longturns_writes_recall_for_both_sides(pg_admin_url: str, tmp_path: Path) -> None:
    data = longturns.main(["--quick", "--database-url", pg_admin_url, "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "longturns.json").read_text())
    assert saved["questions"] == data["questions"] == 4
    for side in ("before", "after"):
        assert saved[side]["provenance"] == ["citations"]  # this tree cites documents
        for mode in longturns.MODES:
            recall = saved[side]["modes"][mode]["recall"]["all"]
            assert set(recall) == {str(b) for b in longturns.BUDGETS}
            assert all(0.0 <= v <= 1.0 for v in recall.values())
            # Monotonic packing: a larger budget never loses a question's evidence.
            assert saved[side]["modes"][mode]["monotonic_violations"] == []
            assert recall["500"] <= recall["1000"] <= recall["2000"]
    assert saved["after"]["facet_points"] > saved["questions"] * 2  # long answers cut in pieces
    md = (tmp_path / "longturns.md").read_text()
    assert "| after | episodic |" in md and "sentence@2000" in md
