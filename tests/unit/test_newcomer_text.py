"""What a newcomer sees in names (issue 13): episode names without Markdown markers, entities
that are names, facet names that read as a topic. Invented notes, English and Chinese."""

from __future__ import annotations

import pytest

from memflow.ingest.parse import parse_input


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("# Kafka retention\n\nWe keep data 90 days. Lena owns it.", "Kafka retention"),
        ("## 周会纪要\n\n决定：下周四发布。张伟负责。", "周会纪要"),
        ("   ### Cache rollout   \nThe cache goes live on Monday.", "Cache rollout"),
    ],
)
def test_a_note_that_opens_with_a_heading_is_named_by_it_without_markers(
    text: str, title: str
) -> None:
    [doc] = parse_input(text, source="note")
    assert doc.title == title
    assert doc.content_type == "markdown"
    assert all(not c.text.lstrip().startswith("#") for c in doc.chunks)


def test_a_hashtag_is_no_heading() -> None:
    [doc] = parse_input("#release went fine. Then we had lunch.", source="note")
    assert doc.content_type == "text" and doc.title.startswith("#release")


def test_ticket_and_change_ids_are_one_entity_each() -> None:
    from memflow.ingest.entities import find_mentions

    assert find_mentions("Marco Rossi reviewed PR #4821.") == (
        ("Marco Rossi", "name"),
        ("PR #4821", "id"),
    )
    assert ("HK-5521", "id") in find_mentions("# Incident HK-5521")
    assert ("HK", "term") not in find_mentions("Ticket HK-5521 is still open.")
    assert ("OPS-7", "id") in find_mentions("工单 OPS-7 仍然打开。")


def test_a_short_name_merges_into_the_one_full_name_it_stands_for() -> None:
    from memflow.ingest.entities import name_aliases, rank_entities

    lines = ["Marco Rossi booked Room B.", "Near midnight Marco rolled back the config."]
    assert name_aliases(lines) == {"marco": "Marco Rossi"}
    names = [h.name for h in rank_entities(lines)]
    assert "Marco" not in names and names.count("Marco Rossi") == 1
    # Two full names share the first name: the short one stays itself.
    two = [*lines, "Marco Bianchi joined later."]
    assert "marco" not in name_aliases(two)


def test_facet_names_list_things_not_verbs_or_prepositions() -> None:
    from memflow.ingest.entities import keywords

    turns = [
        "Mia: Yes, I booked the ryokan near Gion for three nights.",
        "Teo: Marco Rossi booked the tea ceremony near the station.",
        "Mia: Booked! Marco says the ryokan has a garden.",
    ]
    words = keywords(turns, exclude=["Mia", "Teo"], limit=4)
    assert "booked" not in words and "near" not in words, words
    assert "Marco Rossi" in words and "marco" not in words and "Marco" not in words
    assert "ryokan" in words


@pytest.mark.parametrize("key", ["speaker", "role", "name", "from", "sender", "author"])
def test_every_documented_speaker_key_keeps_the_speaker(key: str) -> None:
    import json

    from memflow.cli.app import build_parser

    messages = [{key: "Ana", "text": "Did the cache ship?"}, {key: "Ben", "text": "Yes, today."}]
    [doc] = parse_input(json.dumps(messages), source="chat.json", filename="chat.json")
    assert [c.speaker for c in doc.chunks] == ["Ana", "Ben"]
    memorize = build_parser()._subparsers._group_actions[0].choices["memorize"]  # type: ignore[union-attr]
    assert key in (memorize.description or "")
