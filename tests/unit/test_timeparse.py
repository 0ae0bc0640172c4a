"""Table-driven tests of the rule-based time parser (relative ones against a fixed ``now``)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from memflow.errors import InvalidInput
from memflow.text.timeparse import TimeMatch, best_time, parse_time, resolve_tz, shift_month

TZ = "Asia/Shanghai"
NOW = datetime(2024, 5, 15, 10, 30)  # a Wednesday, read in TZ

# text, expected matched text, first day, day after the last day, confidence
CASES: list[tuple[str, str, date, date, float]] = [
    # explicit dates
    ("2024-03-15", "2024-03-15", date(2024, 3, 15), date(2024, 3, 16), 0.95),
    ("deadline 2024/3/15 noon", "2024/3/15", date(2024, 3, 15), date(2024, 3, 16), 0.95),
    ("2024.12.31", "2024.12.31", date(2024, 12, 31), date(2025, 1, 1), 0.95),
    ("2024-03-15T09:30 开会", "2024-03-15T09:30", date(2024, 3, 15), date(2024, 3, 16), 0.95),
    ("2024年3月15日上线", "2024年3月15日", date(2024, 3, 15), date(2024, 3, 16), 0.95),
    ("3月15日的会议", "3月15日", date(2024, 3, 15), date(2024, 3, 16), 0.95),
    ("十二月二十五号", "十二月二十五号", date(2024, 12, 25), date(2024, 12, 26), 0.95),
    ("去年5月3日", "去年5月3日", date(2023, 5, 3), date(2023, 5, 4), 0.95),
    ("May 7, 2023", "May 7, 2023", date(2023, 5, 7), date(2023, 5, 8), 0.95),
    ("on 7 May 2023 we met", "7 May 2023", date(2023, 5, 7), date(2023, 5, 8), 0.95),
    ("8 May, 2023", "8 May, 2023", date(2023, 5, 8), date(2023, 5, 9), 0.95),
    ("1:56 pm on 8 May, 2023", "1:56 pm on 8 May, 2023", date(2023, 5, 8), date(2023, 5, 9), 0.95),
    (
        "10:37 am on 27 June, 2023",
        "10:37 am on 27 June, 2023",
        date(2023, 6, 27),
        date(2023, 6, 28),
        0.95,
    ),
    (
        "Monday, March 4th, 2024",
        "Monday, March 4th, 2024",
        date(2024, 3, 4),
        date(2024, 3, 5),
        0.95,
    ),
    ("the 8th of May 2023", "the 8th of May 2023", date(2023, 5, 8), date(2023, 5, 9), 0.95),
    ("Sept 3", "Sept 3", date(2024, 9, 3), date(2024, 9, 4), 0.95),
    ("3/15/2024", "3/15/2024", date(2024, 3, 15), date(2024, 3, 16), 0.9),
    ("15/3/2024", "15/3/2024", date(2024, 3, 15), date(2024, 3, 16), 0.9),
    # months
    ("May 2023", "May 2023", date(2023, 5, 1), date(2023, 6, 1), 0.9),
    ("in February, 2020", "February, 2020", date(2020, 2, 1), date(2020, 3, 1), 0.9),
    ("2023年5月", "2023年5月", date(2023, 5, 1), date(2023, 6, 1), 0.9),
    ("2023-05 report", "2023-05", date(2023, 5, 1), date(2023, 6, 1), 0.9),
    ("what happened in May?", "in May", date(2024, 5, 1), date(2024, 6, 1), 0.9),
    ("in mid-December", "in mid-December", date(2024, 12, 1), date(2025, 1, 1), 0.9),
    ("三月份的预算", "三月份", date(2024, 3, 1), date(2024, 4, 1), 0.9),
    ("last May", "last May", date(2023, 5, 1), date(2023, 6, 1), 0.85),
    ("last March", "last March", date(2024, 3, 1), date(2024, 4, 1), 0.85),
    ("next January", "next January", date(2025, 1, 1), date(2025, 2, 1), 0.85),
    # years
    ("2024年", "2024年", date(2024, 1, 1), date(2025, 1, 1), 0.85),
    (
        "How many 5 star reviews did Kofi get in 2023?",
        "in 2023",
        date(2023, 1, 1),
        date(2024, 1, 1),
        0.85,
    ),
    ("in 2022", "in 2022", date(2022, 1, 1), date(2023, 1, 1), 0.85),
    ("the summer of 1999", "of 1999", date(1999, 1, 1), date(2000, 1, 1), 0.85),
    ("去年", "去年", date(2023, 1, 1), date(2024, 1, 1), 0.85),
    ("前年的事", "前年", date(2022, 1, 1), date(2023, 1, 1), 0.85),
    ("今年", "今年", date(2024, 1, 1), date(2025, 1, 1), 0.9),
    ("last year", "last year", date(2023, 1, 1), date(2024, 1, 1), 0.85),
    ("this year", "this year", date(2024, 1, 1), date(2025, 1, 1), 0.9),
    ("the year before last", "the year before last", date(2022, 1, 1), date(2023, 1, 1), 0.8),
    # quarters and halves
    ("Q3 2024", "Q3 2024", date(2024, 7, 1), date(2024, 10, 1), 0.9),
    ("2023 Q4", "2023 Q4", date(2023, 10, 1), date(2024, 1, 1), 0.9),
    (
        "the first quarter of 2022",
        "the first quarter of 2022",
        date(2022, 1, 1),
        date(2022, 4, 1),
        0.9,
    ),
    ("2024年第三季度", "2024年第三季度", date(2024, 7, 1), date(2024, 10, 1), 0.9),
    ("第一季度", "第一季度", date(2024, 1, 1), date(2024, 4, 1), 0.8),
    ("Q2", "Q2", date(2024, 4, 1), date(2024, 7, 1), 0.8),
    ("上季度", "上季度", date(2024, 1, 1), date(2024, 4, 1), 0.85),
    ("last quarter", "last quarter", date(2024, 1, 1), date(2024, 4, 1), 0.85),
    ("2023年下半年", "2023年下半年", date(2023, 7, 1), date(2024, 1, 1), 0.85),
    # relative days
    ("昨天开会说了什么", "昨天", date(2024, 5, 14), date(2024, 5, 15), 0.9),
    ("前天", "前天", date(2024, 5, 13), date(2024, 5, 14), 0.9),
    ("大前天", "大前天", date(2024, 5, 12), date(2024, 5, 13), 0.85),
    ("今天", "今天", date(2024, 5, 15), date(2024, 5, 16), 0.9),
    ("明天", "明天", date(2024, 5, 16), date(2024, 5, 17), 0.9),
    ("yesterday", "yesterday", date(2024, 5, 14), date(2024, 5, 15), 0.9),
    (
        "the day before yesterday",
        "the day before yesterday",
        date(2024, 5, 13),
        date(2024, 5, 14),
        0.9,
    ),
    ("tomorrow", "tomorrow", date(2024, 5, 16), date(2024, 5, 17), 0.9),
    ("last night", "last night", date(2024, 5, 14), date(2024, 5, 15), 0.85),
    ("3 days ago", "3 days ago", date(2024, 5, 12), date(2024, 5, 13), 0.8),
    ("a day ago", "a day ago", date(2024, 5, 14), date(2024, 5, 15), 0.8),
    ("a couple of days ago", "a couple of days ago", date(2024, 5, 13), date(2024, 5, 14), 0.8),
    ("三天前", "三天前", date(2024, 5, 12), date(2024, 5, 13), 0.8),
    ("10天前", "10天前", date(2024, 5, 5), date(2024, 5, 6), 0.8),
    ("the day before", "the day before", date(2024, 5, 14), date(2024, 5, 15), 0.6),
    # relative weeks (weeks start on Monday; 2024-05-13 is this week's Monday)
    ("上周三", "上周三", date(2024, 5, 8), date(2024, 5, 9), 0.85),
    ("上个星期五", "上个星期五", date(2024, 5, 10), date(2024, 5, 11), 0.85),
    ("上周", "上周", date(2024, 5, 6), date(2024, 5, 13), 0.85),
    ("上上周", "上上周", date(2024, 4, 29), date(2024, 5, 6), 0.8),
    ("这周", "这周", date(2024, 5, 13), date(2024, 5, 20), 0.9),
    ("下周一", "下周一", date(2024, 5, 20), date(2024, 5, 21), 0.85),
    ("周五开会", "周五", date(2024, 5, 10), date(2024, 5, 11), 0.6),
    ("last week", "last week", date(2024, 5, 6), date(2024, 5, 13), 0.85),
    ("next week", "next week", date(2024, 5, 20), date(2024, 5, 27), 0.85),
    ("the week before", "the week before", date(2024, 5, 6), date(2024, 5, 13), 0.6),
    ("the week before last", "the week before last", date(2024, 4, 29), date(2024, 5, 6), 0.8),
    ("two weeks ago", "two weeks ago", date(2024, 4, 29), date(2024, 5, 6), 0.75),
    ("两周前", "两周前", date(2024, 4, 29), date(2024, 5, 6), 0.75),
    ("last Friday", "last Friday", date(2024, 5, 10), date(2024, 5, 11), 0.8),
    ("last Wednesday", "last Wednesday", date(2024, 5, 8), date(2024, 5, 9), 0.8),
    ("this Friday", "this Friday", date(2024, 5, 17), date(2024, 5, 18), 0.8),
    ("next Monday", "next Monday", date(2024, 5, 20), date(2024, 5, 21), 0.75),
    ("on Wednesday", "on Wednesday", date(2024, 5, 15), date(2024, 5, 16), 0.65),
    ("last weekend", "last weekend", date(2024, 5, 11), date(2024, 5, 13), 0.8),
    ("上周末", "上周末", date(2024, 5, 11), date(2024, 5, 13), 0.8),
    ("past 3 weeks", "past 3 weeks", date(2024, 4, 24), date(2024, 5, 16), 0.8),
    ("the past week", "the past week", date(2024, 5, 8), date(2024, 5, 16), 0.8),
    # relative months and years
    ("本月", "本月", date(2024, 5, 1), date(2024, 6, 1), 0.9),
    ("上个月的预算", "上个月", date(2024, 4, 1), date(2024, 5, 1), 0.85),
    ("下个月", "下个月", date(2024, 6, 1), date(2024, 7, 1), 0.85),
    ("last month", "last month", date(2024, 4, 1), date(2024, 5, 1), 0.85),
    ("next month", "next month", date(2024, 6, 1), date(2024, 7, 1), 0.85),
    ("two months ago", "two months ago", date(2024, 3, 1), date(2024, 4, 1), 0.75),
    ("7 months ago", "7 months ago", date(2023, 10, 1), date(2023, 11, 1), 0.75),
    ("两个月前", "两个月前", date(2024, 3, 1), date(2024, 4, 1), 0.75),
    ("三年前", "三年前", date(2021, 1, 1), date(2022, 1, 1), 0.75),
    ("a year ago", "a year ago", date(2023, 1, 1), date(2024, 1, 1), 0.75),
    ("最近7天", "最近7天", date(2024, 5, 8), date(2024, 5, 16), 0.8),
    ("近三个月", "近三个月", date(2024, 2, 15), date(2024, 5, 16), 0.8),
    ("the month before", "the month before", date(2024, 4, 1), date(2024, 5, 1), 0.6),
    # fuzzy
    ("recently", "recently", date(2024, 4, 15), date(2024, 5, 16), 0.5),
    ("最近怎么样", "最近", date(2024, 4, 15), date(2024, 5, 16), 0.5),
    ("a few days ago", "a few days ago", date(2024, 5, 8), date(2024, 5, 15), 0.5),
    ("前几天", "前几天", date(2024, 5, 8), date(2024, 5, 15), 0.5),
    ("lately", "lately", date(2024, 4, 15), date(2024, 5, 16), 0.45),
    ("the other day", "the other day", date(2024, 5, 8), date(2024, 5, 15), 0.45),
    ("a few months ago", "a few months ago", date(2023, 11, 17), date(2024, 4, 15), 0.4),
]


@pytest.mark.parametrize(("text", "matched", "first", "after", "confidence"), CASES)
def test_cases(text: str, matched: str, first: date, after: date, confidence: float) -> None:
    tm = best_time(text, NOW, TZ)
    assert tm is not None, text
    tz = ZoneInfo(TZ)
    assert tm.text == matched
    assert text[tm.pos[0] : tm.pos[1]] == matched
    assert tm.start == datetime.combine(first, datetime.min.time(), tzinfo=tz)
    assert tm.end == datetime.combine(after, datetime.min.time(), tzinfo=tz)
    assert tm.confidence == pytest.approx(confidence)
    assert tm.start.utcoffset() == timedelta(hours=8)


@pytest.mark.parametrize(
    "text",
    [
        "5 star",
        "500ms",
        "40万",
        "3个月",
        "我们有 2023 个用户",
        "version 1.2.3",
        "5 may be enough",
        "the cost by may be higher",
        "I may go",
        "每周一次",
        "上周期",
        "it costs 2024 dollars",
        "在 10:30 开会",
        "room 1204",
    ],
)
def test_no_false_positives(text: str) -> None:
    assert parse_time(text, NOW, TZ) == []


def test_this_week_busy_is_the_week_not_monday() -> None:
    tm = best_time("这周一直很忙", NOW, TZ)
    assert tm is not None and tm.text == "这周"


def test_several_matches_in_order_and_best() -> None:
    text = "上周三说过，2024年3月15日要上线，最近还在改"
    matches = parse_time(text, NOW, TZ)
    assert [m.text for m in matches] == ["上周三", "2024年3月15日", "最近"]
    assert [m.kind for m in matches] == ["relative", "date", "fuzzy"]
    best = best_time(text, NOW, TZ)
    assert best is not None and best.text == "2024年3月15日"


def test_best_time_ties_prefer_earliest() -> None:
    best = best_time("2023-01-02 and 2023-01-01", NOW, TZ)
    assert best is not None and best.pos == (0, 10)


def test_since_extends_to_now() -> None:
    for text in ("since 2021", "2021年以来", "since last week"):
        tm = best_time(text, NOW, TZ)
        assert tm is not None
        assert tm.end == NOW.replace(tzinfo=ZoneInfo(TZ)), text
    tm = best_time("自从去年", NOW, TZ)
    assert tm is not None and tm.text == "自从去年" and tm.start.year == 2023
    tm = best_time("数据来自2023年", NOW, TZ)
    assert tm is not None and tm.text == "2023年" and tm.end.year == 2024


def test_ranges_merge() -> None:
    tm = best_time("from 2024-03-01 to 2024-03-05", NOW, TZ)
    assert tm is not None and tm.kind == "range"
    assert (tm.start.date(), tm.end.date()) == (date(2024, 3, 1), date(2024, 3, 6))
    tm = best_time("from May 3 to May 7, 2023", NOW, TZ)
    assert tm is not None and tm.text == "May 3 to May 7, 2023"
    assert (tm.start.date(), tm.end.date()) == (date(2023, 5, 3), date(2023, 5, 8))
    tm = best_time("3月到5月", NOW, TZ)
    assert tm is not None and (tm.start.date(), tm.end.date()) == (
        date(2024, 3, 1),
        date(2024, 6, 1),
    )


def test_relative_resolves_in_the_given_time_zone() -> None:
    now_utc = datetime(2024, 5, 15, 20, 0, tzinfo=UTC)  # already 16 May in Shanghai
    sh = best_time("yesterday", now_utc, "Asia/Shanghai")
    utc = best_time("yesterday", now_utc, "UTC")
    assert sh is not None and utc is not None
    assert sh.start.date() == date(2024, 5, 15)
    assert utc.start.date() == date(2024, 5, 14)
    fixed = best_time("今天", now_utc, "+08:00")
    assert fixed is not None and fixed.start.date() == date(2024, 5, 16)
    assert fixed.start.utcoffset() == timedelta(hours=8)


def test_naive_now_is_read_in_tz_and_spans_are_aware() -> None:
    tm = best_time("today", datetime(2024, 1, 1, 23, 0), "America/New_York")
    assert tm is not None and tm.start.tzinfo is not None
    assert tm.start == datetime(2024, 1, 1, tzinfo=ZoneInfo("America/New_York"))


def test_every_span_is_half_open_and_nonempty() -> None:
    for text, *_ in CASES:
        for tm in parse_time(text, NOW, TZ):
            assert tm.start < tm.end, text


def test_resolve_tz() -> None:
    assert resolve_tz("UTC") is UTC
    assert resolve_tz("UTC+8").utcoffset(None) == timedelta(hours=8)
    assert resolve_tz("-05:30").utcoffset(None) == -timedelta(hours=5, minutes=30)
    with pytest.raises(InvalidInput):
        resolve_tz("Mars/Olympus")


def test_shift_month() -> None:
    assert shift_month(2024, 1, -1) == (2023, 12)
    assert shift_month(2024, 11, 3) == (2025, 2)
    assert shift_month(2024, 5, -17) == (2022, 12)


def test_to_span_round_trip() -> None:
    tm = best_time("2024年3月15日", NOW, TZ)
    assert isinstance(tm, TimeMatch)
    span = tm.to_span()
    assert (span.start, span.end, span.text) == (tm.start, tm.end, "2024年3月15日")
    assert span.confidence == pytest.approx(0.95)


def test_invalid_dates_are_ignored() -> None:
    assert parse_time("2023-02-30", NOW, TZ) == []
    assert parse_time("13月5日", NOW, TZ) == []
    assert parse_time("February 30, 2023", NOW, TZ) == []
