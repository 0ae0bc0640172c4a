"""memflow.bounds: what memflow takes from outside (issue 25), checked without a database."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from memflow.bounds import (
    MAX_JSON_DEPTH,
    check_dataset_name,
    check_json,
    check_label,
    check_text,
    check_time,
    escape_unsafe,
    from_epoch,
    load_json,
    parse_iso,
)
from memflow.db.filters import check_metadata, compile_where
from memflow.errors import InvalidInput
from memflow.text.timeparse import parse_time


def _deep(depth: int) -> Any:
    out: Any = 1
    for _ in range(depth):
        out = {"a": out}
    return out


@pytest.mark.parametrize(
    "when",
    [
        datetime(9999, 12, 31, tzinfo=UTC),
        datetime(9999, 1, 1),
        datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14))),
        datetime(2, 1, 1, tzinfo=timezone(timedelta(hours=1))),  # 0001-12-31T23:00Z
    ],
)
def test_times_outside_the_range_are_refused(when: datetime) -> None:
    with pytest.raises(InvalidInput, match=r"reference_time .* outside the times memflow takes"):
        check_time(when, "reference_time")


def test_times_inside_the_range_survive_every_zone_and_a_year_more() -> None:
    for when in (check_time(datetime(2, 1, 1), "t"), check_time(datetime(9998, 12, 31, 23), "t")):
        for hours in (-14, 14):
            when.astimezone(timezone(timedelta(hours=hours)))  # no OverflowError
        when.replace(year=when.year + 1 if when.year > 5000 else when.year - 1)
    assert parse_iso("2024-05-08Z", "now") == datetime(2024, 5, 8, tzinfo=UTC)
    with pytest.raises(InvalidInput, match="now '10000-01-01' is not an ISO 8601 time"):
        parse_iso("10000-01-01", "now")


@pytest.mark.parametrize("seconds", [1e20, -1e15, float("nan"), float("inf"), 10**400])
def test_unix_seconds_outside_the_range_are_refused(seconds: float) -> None:
    with pytest.raises(InvalidInput, match=r"ts .* outside the times"):
        from_epoch(seconds, "ts")
    assert from_epoch(1715176560, "ts") == datetime(2024, 5, 8, 13, 56, tzinfo=UTC)


def test_relative_dates_next_to_the_end_of_the_calendar() -> None:
    """'next year' said in 9998 would end in 10000: left out, not an OverflowError."""
    late = datetime(9998, 12, 30, tzinfo=UTC)
    found = parse_time("we meet next year, tomorrow and in 3 years", late)
    assert {t.text for t in found} == {"tomorrow"}
    with pytest.raises(InvalidInput, match="now"):
        parse_time("tomorrow", datetime(9999, 12, 31))


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ({"k": "a\x00b"}, r"metadata\['k'\] holds a NUL"),
        ({"\ud800": 1}, "key '\\\\ud800' holds a lone surrogate"),
        ({"k": ["\udfff"]}, r"metadata\['k'\]\[0\] holds a lone surrogate"),
        ({"k": 10**400}, "about 401 digits"),
        ({"k": -(10**309)}, "within ±1e308"),
        ({"k": float("nan")}, "finite"),
        ({"k": float("-inf")}, "finite"),
        ({1: "x"}, "not a string"),
        (_deep(MAX_JSON_DEPTH + 1), "nested deeper than 64 levels"),
    ],
)
def test_json_values_are_checked_without_recursion(value: Any, needle: str) -> None:
    with pytest.raises(InvalidInput, match=needle):
        check_json(value, "metadata")


def test_json_at_the_bounds_is_taken() -> None:
    check_json({"big": 10**300, "f": 1e308, "deep": _deep(MAX_JSON_DEPTH - 1)}, "metadata")
    check_json(_deep(100_000), "x", max_depth=100_001)  # no RecursionError


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[" * 5000 + "]" * 5000, "nested deeper"),
        ("[" * 100 + "]" * 100, "nested deeper than 64"),
        ('{"n": ' + "1" * 5000 + "}", "cannot read"),
        ('{"messages": [{"text": "a\\u0000"}]}', r"notes.json: messages\[0\].text holds a NUL"),
        ('{"s": "\\ud83d"}', "lone surrogate"),
        ('{"n": NaN}', "finite"),
        ("{x", "malformed JSON at line 1 column 2"),
    ],
)
def test_load_json_refuses_what_it_cannot_keep(text: str, needle: str) -> None:
    with pytest.raises(InvalidInput, match=needle):
        load_json(text, "notes.json")


def test_a_valid_surrogate_pair_is_text() -> None:
    assert load_json('{"s": "\\ud83d\\ude80"}', "x") == {"s": "🚀"}
    assert check_text("🚀 launch", "x") == "🚀 launch"


@pytest.mark.parametrize(
    "name", ["notes", "数据集", "🚀 launch", "o'brien", "100%", "_", "a -- b", "back\\slash",
             "semi;colon?#frag", "Ｆｕｌｌ－ｗｉｄｔｈ", "n" * 200, "zero\u200bwidth", "👩‍💻"],
)  # fmt: skip
def test_dataset_names_in_any_script_are_taken(name: str) -> None:
    assert check_dataset_name(name) == name


@pytest.mark.parametrize(
    "name", ["tab\tname", "new\nline", "esc\x1b[31m", "del\x7f", "csi\x9b", "rtl\u202eexe",
             "line\u2028sep", "team/notes", ".", "..", "n" * 201, "", "   ", "x\ud800"],
)  # fmt: skip
def test_dataset_names_a_terminal_or_a_url_would_misread_are_refused(name: str) -> None:
    with pytest.raises(InvalidInput, match="dataset name"):
        check_dataset_name(name)


def test_labels_say_what_is_allowed() -> None:
    with pytest.raises(InvalidInput, match=r"scope 'user' 'a\\x1b' holds '\\x1b': use at most"):
        check_label("a\x1b", "scope 'user'")


def test_escape_unsafe_keeps_text_and_json() -> None:
    assert escape_unsafe("ok 数据 🚀") == "ok 数据 🚀"
    assert escape_unsafe("a\x1b[2Jb\tc\nd\u202e") == "a\\x1b[2Jb\\tc\\nd\\u202e"
    assert escape_unsafe("a\tb\nc\x1b", "\n\t") == "a\tb\nc\\x1b"
    payload = {"name": "old\x1b[31m\x7f\x9b\u2028\u202e", "n": 1}
    dumped = escape_unsafe(json.dumps(payload, ensure_ascii=False, indent=2), "\n", json_text=True)
    assert json.loads(dumped) == payload
    assert not any(ch in dumped for ch in "\x1b\x7f\x9b\u2028\u202e")


@pytest.mark.parametrize(
    ("metadata", "needle"),
    [
        ({"due": "294276-12-31T23:59:59-15:00"}, "'due'.* past year 9999"),
        ({"due": "+10000-01-01"}, "past year 9999"),
        ({"k": "x" * 270_000}, "bytes as JSON"),
    ],
)
def test_metadata_bounds(metadata: dict[str, Any], needle: str) -> None:
    with pytest.raises(InvalidInput, match=needle):
        check_metadata(metadata)


def test_metadata_dates_python_reads_are_taken() -> None:
    kept = {"due": "9999-12-31T23:59:59-15:00", "v": "2024-13-45 build", "start": "0001-01-01"}
    assert check_metadata(kept) == kept


@pytest.mark.parametrize(
    ("where", "needle"),
    [
        ({"or": [{"k": i} for i in range(40_000)]}, "bytes as JSON"),
        ({"or": [{"k": i} for i in range(300)]}, "more than 256 conditions"),
        ({"k": {"in": list(range(1001))}}, "1,001 values"),
        ({"n": 10**400}, r"where\['n'\] is an integer"),
        ({"n": {"gte": 10**400}}, r"where\['n'\]\['gte'\]"),
        ({"a": {"in": [_deep(200)]}}, "nested deeper"),
    ],
)
def test_filter_bounds(where: dict[str, Any], needle: str) -> None:
    with pytest.raises(InvalidInput, match=needle):
        compile_where(where)


def test_date_ranges_cast_only_what_the_database_reads() -> None:
    """A stored value that reads as a timestamp but not as a timestamptz (past its range once
    its offset applies) must not reach the timestamptz cast."""
    sql = compile_where({"due": {"gte": "2026-01-01"}}).sql
    cast = sql.index("AS timestamptz)")
    assert sql.rfind("pg_input_is_valid((d.metadata ->> :w0), 'timestamptz')", 0, cast) != -1
