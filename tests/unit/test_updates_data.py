"""The generator of benchmarks/updates (issue 12, item 7): conversations in which a fact changes."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks.updates_data import SLOTS, conversation, conversations
from memflow.ingest.parse import parse_input


def test_the_set_covers_languages_kinds_and_change_counts() -> None:
    convs = conversations()
    assert len(convs) >= 50
    assert Counter(c.lang for c in convs) == {"en": 30, "zh": 30}
    assert {c.slot for c in convs} == set(SLOTS)
    assert {c.changes for c in convs} == {0, 1, 2, 3}
    for lang in ("en", "zh"):
        assert sum(1 for c in convs if c.lang == lang and c.changes == 0) >= 5
    assert len({c.cid for c in convs}) == len(convs)


def test_generation_is_deterministic_and_the_seed_matters() -> None:
    assert conversations(10)[3].document() == conversations(10)[3].document()
    assert conversations(10, seed=1)[3].document() != conversations(10, seed=2)[3].document()


def test_values_change_and_each_statement_names_its_value() -> None:
    for conv in conversations():
        assert len(conv.values) == conv.changes + 1
        for a, b in zip(conv.values, conv.values[1:], strict=False):
            assert a != b
        for key, i in conv.value_of.items():
            said = conv.texts[key]
            if conv.slot != "diet":
                assert conv.values[i] in said, (conv.cid, said)
        # Every value is said once as it begins and restated at least once (additively).
        for i in range(len(conv.values)):
            assert sum(1 for v in conv.value_of.values() if v == i) >= 2
        turns = [m["text"] for s in conv.sessions for m in s["messages"]]
        stated = [conv.texts[k].split(": ", 1)[1] for k in conv.value_of]
        assert len(set(stated)) == len(stated)  # no statement repeats word for word
        assert all(t.strip() for t in turns)


def test_questions_point_at_the_right_turns_and_times() -> None:
    for conv in conversations():
        kinds = Counter(q.kind for q in conv.questions)
        assert kinds["past"] == conv.changes
        assert kinds["current" if conv.changes else "control"] == 1
        last = len(conv.values) - 1
        for q in conv.questions:
            assert q.expected and q.expected <= q.value_keys == set(conv.value_of)
            if q.as_of is None:
                assert {conv.value_of[k] for k in q.expected} == {last}
                continue
            (old,) = {conv.value_of[k] for k in q.expected}
            assert old < last
            starts = [s["started_at"] for s in conv.sessions]
            said = min(starts[int(k.split(":")[0][1:]) - 1] for k in q.expected)
            changed = min(
                starts[int(k.split(":")[0][1:]) - 1]
                for k, v in conv.value_of.items()
                if v == old + 1
            )
            assert said <= q.as_of.isoformat() < changed
        assert conv.superseded_keys() == {k for k, v in conv.value_of.items() if v < last}


def test_a_generated_conversation_parses_with_its_turn_ids() -> None:
    conv = conversation(5, "zh", "city", 2, seed=3)
    (doc,) = parse_input(conv.document(), source=conv.cid, content_type="conversation")
    assert len(doc.sessions) == len(conv.sessions) >= 4
    assert {c.key for c in doc.chunks} == set(conv.texts)
    assert json.loads(conv.document())["title"] == conv.cid
    sessions = [s["started_at"] for s in conv.sessions]
    assert sessions == sorted(sessions)
