"""Dates that are right (issue 12, item 5): a text's own title or heading date comes before any
date in its body (memflow.text.dating, the rules extractor, routing)."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime

import pytest

from memflow.drafts import EpisodeDraft, TimeSpan
from memflow.ingest.parse import parse_input
from memflow.ingest.route import Candidate, same_time
from memflow.ingest.rules import RulesExtractor
from memflow.text.dating import (
    date_drafts,
    day_span,
    document_head,
    source_dated,
    text_time,
    title_time,
)

NOW = datetime(2024, 11, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("title", "day"),
    [
        ("Platform sync — 17 Sep 2024", date(2024, 9, 17)),
        ("2024-03-14 standup", date(2024, 3, 14)),
        ("Weekly notes, March 14, 2024", date(2024, 3, 14)),
        ("2024年3月14日 周会纪要", date(2024, 3, 14)),
        ("周会 — 2024/03/14", date(2024, 3, 14)),
        ("2024-03-14-retro.md", date(2024, 3, 14)),
    ],
)
def test_title_formats(title: str, day: date) -> None:
    found = title_time(title, NOW)
    assert found is not None and found.start.date() == day and found.kind == "date"


def test_titles_without_a_calendar_date() -> None:
    assert title_time("Platform sync", NOW) is None
    assert title_time("Next week's plan", NOW) is None  # relative: not the text's own date
    assert title_time("下周计划", NOW) is None
    assert title_time(None, NOW) is None and title_time("  ", NOW) is None


def test_the_title_date_wins_over_a_body_date() -> None:
    body = "We froze the schema. The next review is planned for 8 Oct 2024."
    got = text_time(["Platform sync — 17 Sep 2024"], body, NOW)
    assert got is not None and got.start.date() == date(2024, 9, 17)
    zh = text_time(["2024年3月14日 周会"], "复查安排在2024年4月2日。", NOW)
    assert zh is not None and zh.start.date() == date(2024, 3, 14)


def test_a_narrower_body_date_inside_the_title_span_refines_it() -> None:
    got = text_time(["March 2024 retro"], "On 14 March 2024 we dropped the cache.", NOW)
    assert got is not None and got.start.date() == date(2024, 3, 14) and got.kind == "date"
    outside = text_time(["March 2024 retro"], "We ship on 2 April 2024.", NOW)
    assert outside is not None and outside.kind == "month" and outside.start.month == 3


def test_without_a_title_date_the_body_decides() -> None:
    got = text_time(["Retro", None], "On 14 March 2024 we dropped the cache.", NOW)
    assert got is not None and got.start.date() == date(2024, 3, 14)
    assert text_time(["Retro"], "Nothing dated here.", NOW) is None
    # The first title that names a date wins (a section heading before the document title).
    first = text_time(["2024-05-02", "Journal 2024"], "", NOW)
    assert first is not None and first.start.date() == date(2024, 5, 2)


def test_the_rules_extractor_dates_a_note_by_its_title() -> None:
    note = (
        "# Platform sync — 17 Sep 2024\n\nWe agreed to freeze the schema. The next review is "
        "planned for 8 Oct 2024.\n\nAna owns the rollout.\n"
    )
    doc = parse_input(note, source="sync.md", reference_time=NOW, filename="sync.md")[0]
    (episode,) = RulesExtractor().extract(doc)
    assert episode.time is not None and episode.time.start.date() == date(2024, 9, 17)
    assert all(
        f.time is not None and f.time.start.date() == date(2024, 9, 17) for f in episode.facets
    )


def test_every_section_of_a_long_journal_is_dated_by_its_heading() -> None:
    days = [date(2024, 1, 1 + i) for i in range(12)]
    parts = ["# Journal\n"]
    for i, d in enumerate(days):
        review = days[(i + 5) % len(days)]
        sentences = " ".join(f"Item {k} of the day went fine." for k in range(8))
        parts.append(
            f"## {d:%Y-%m-%d}\n\n{sentences} We decided to review it on {review:%d %B %Y}.\n"
        )
    text = "\n".join(parts)
    doc = parse_input(text, source="journal.md", reference_time=NOW, filename="journal.md")[0]
    episodes = RulesExtractor(long_document_sentences=40).extract(doc)
    assert len(episodes) == len(days)
    assert [e.time.start.date() if e.time else None for e in episodes] == days


def _draft(day: date | None) -> EpisodeDraft:
    time = None
    if day is not None:
        start = datetime(day.year, day.month, day.day, tzinfo=UTC)
        time = TimeSpan(start=start, end=start.replace(day=day.day + 1))
    return EpisodeDraft(name="standup", summary="we decided things", time=time)


def _cand(day: date | None, end: date | None = None) -> Candidate:
    start = datetime(day.year, day.month, day.day, tzinfo=UTC) if day else None
    stop = datetime(end.year, end.month, end.day, tzinfo=UTC) if end else None
    return Candidate(uuid.uuid4(), "standup (earlier)", "we decided things", 0.95, 1, start, stop)


def test_routing_never_merges_notes_of_two_different_days() -> None:
    assert not same_time(_draft(date(2024, 3, 14)), _cand(date(2024, 3, 15), date(2024, 3, 16)))
    assert same_time(_draft(date(2024, 3, 14)), _cand(date(2024, 3, 14), date(2024, 3, 15)))
    assert same_time(_draft(date(2024, 3, 14)), _cand(date(2024, 3, 1), date(2024, 4, 1)))
    assert same_time(_draft(date(2024, 3, 14)), _cand(date(2024, 3, 14)))  # an instant inside
    assert not same_time(_draft(date(2024, 3, 14)), _cand(date(2024, 3, 20)))
    assert same_time(_draft(None), _cand(date(2024, 3, 20)))
    assert same_time(_draft(date(2024, 3, 14)), _cand(None))
    # The same name restated on another day is an update of the same thing: it may merge.
    same_name = _cand(date(2024, 3, 20)).__class__(
        uuid.uuid4(), "Standup ", "x", 0.95, 1, datetime(2024, 3, 20, tzinfo=UTC)
    )
    assert same_time(_draft(date(2024, 3, 14)), same_name)


def test_undated_drafts_of_a_model_get_the_same_dates() -> None:
    note = "# 2024年3月14日 周会\n\n我们决定下线旧缓存。复查安排在2024年4月2日。\n"
    doc = parse_input(note, source="zh.md", reference_time=NOW, filename="zh.md")[0]
    keys = [c.key for c in doc.chunks]
    drafts = [
        EpisodeDraft(name="周会", summary="下线旧缓存", sources=keys),
        EpisodeDraft(name="no sources", summary="x"),
    ]
    dated = date_drafts(drafts, doc)
    assert dated[0].time is not None and dated[0].time.start.date() == date(2024, 3, 14)
    assert dated[1].time is None
    chat = (
        '{"sessions": [{"started_at": "2024-05-06T20:00:00+08:00", "messages": '
        '[{"speaker": "王芳", "text": "下个月初上线。"}]}]}'
    )
    conv = parse_input(chat, source="chat.json")[0]
    (session,) = date_drafts([EpisodeDraft(name="s", summary="s", sources=["t0"])], conv)
    assert session.time is not None and session.time.start.date() == date(2024, 5, 6)
    kept = EpisodeDraft(name="k", summary="k", sources=keys, time=day_span(NOW))
    assert date_drafts([kept], doc)[0].time == kept.time


# ---------------------------------------------------------------- source dates (issue 26)


def test_front_matter_dates_and_titles_a_note_and_is_not_a_statement() -> None:
    note = "---\ntitle: 'Release plan'\ndate: 2024-09-01\ntags: [a, b]\n---\n\nThe release is on 15 November.\n"
    head = document_head(note)
    assert head is not None and head.kind == "front_matter" and head.title == "Release plan"
    assert head.written == datetime(2024, 9, 1, tzinfo=UTC)
    (doc,) = parse_input(note, source="plan.txt", reference_time=NOW)
    assert doc.title == "Release plan"
    assert [c.text for c in doc.chunks] == ["The release is on 15 November."]
    assert doc.chunks[0].timestamp == datetime(2024, 9, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("mail", "day", "subject"),
    [
        (
            "From: Ana <ana@example.com>\nTo: team\nDate: Mon, 21 Oct 2024 09:00:00 +0000\n"
            "Subject: Release date\n\nHi all,\nthe release moves to 29 November.\n",
            date(2024, 10, 21),
            "Release date",
        ),
        (
            "发件人: 王芳\n收件人: 项目组\n日期: 2024-10-21 09:00\n主题: 上线时间\n\n上线改到11月29日。\n",
            date(2024, 10, 21),
            "上线时间",
        ),
    ],
)
def test_an_email_is_dated_by_its_date_header(mail: str, day: date, subject: str) -> None:
    (doc,) = parse_input(mail, source="mail.txt", reference_time=NOW)
    assert doc.content_type == "text" and doc.title == subject
    assert all(c.timestamp is not None and c.timestamp.date() == day for c in doc.chunks)
    assert not any("From:" in c.text or "发件人" in c.text for c in doc.chunks)


def test_a_dialog_or_a_plain_note_has_no_head() -> None:
    assert document_head("Ana: the release moves.\nBo: ok\nAna: thanks\n") is None
    assert document_head("Date: tomorrow\n\nnothing else") is None  # no sender, subject or to
    assert document_head("---\n\nA rule, then text.\n") is None


def test_each_sentence_takes_its_sections_date_then_the_documents() -> None:
    journal = (
        "# Kiosk journal — March 2024\n\nOpened in March.\n\n## 12 Sep 2024\n\nBuild on Buildkite.\n\n"
        "## Decisions\n\nKeep the pilot.\n"
    )
    (doc,) = parse_input(journal, source="2024-01-05-journal.md", reference_time=NOW)
    when = {c.text: c.timestamp for c in doc.chunks}
    assert when["Build on Buildkite."] == datetime(2024, 9, 12, tzinfo=UTC)
    # The title heading names a month: the sections without a date of their own start with it.
    assert when["Opened in March."] == datetime(2024, 3, 1, tzinfo=UTC)
    assert when["Keep the pilot."] == datetime(2024, 3, 1, tzinfo=UTC)
    (named,) = parse_input("Build on Drone.\n", source="notes/2024-10-02.txt", reference_time=NOW)
    assert named.chunks[0].timestamp == datetime(2024, 10, 2, tzinfo=UTC)
    (undated,) = parse_input("Build on Drone.\n", source="notes.txt", reference_time=NOW)
    assert undated.chunks[0].timestamp is None  # the reference time dates it when stored
    chunks = source_dated(undated.chunks, [None], NOW, written=datetime(2024, 5, 1, tzinfo=UTC))
    assert chunks[0].timestamp == datetime(2024, 5, 1, tzinfo=UTC)


def test_a_heading_naming_a_period_yields_to_the_documents_own_day() -> None:
    # "Q3 roadmap" says what the section is about; the front matter says when it was written.
    note = "---\ndate: 2024-05-20\n---\n# Q3 roadmap\n\nBuild the billing export.\n"
    (doc,) = parse_input(note, source="roadmap.md", reference_time=NOW)
    assert doc.chunks[-1].timestamp == datetime(2024, 5, 20, tzinfo=UTC)
    # A heading naming a day still dates its section.
    note = "---\ndate: 2024-05-20\n---\n# Sync 2024-06-03\n\nBuild the billing export.\n"
    (doc,) = parse_input(note, source="sync.md", reference_time=NOW)
    assert doc.chunks[-1].timestamp == datetime(2024, 6, 3, tzinfo=UTC)
    # A month heading with only a file name date outside it: the heading (as before).
    (doc,) = parse_input("# March 2024\n\nOpened.\n", source="2024-01-05-x.md", reference_time=NOW)
    assert doc.chunks[-1].timestamp == datetime(2024, 3, 1, tzinfo=UTC)
