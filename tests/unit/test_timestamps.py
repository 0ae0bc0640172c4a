"""Message and session times in common formats (memflow.text.timestamps, parse_when)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest

from memflow.errors import InvalidInput
from memflow.ingest.parse import parse_input, parse_when
from memflow.text.timestamps import parse_timestamp

REF = datetime(2024, 3, 1, 8, 0, tzinfo=UTC)
PLUS8 = timezone(timedelta(hours=8))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # year-first numeric dates, with a weekday in parentheses, 24- and 12-hour times
        ("2023/05/20 (Sat) 02:21", datetime(2023, 5, 20, 2, 21, tzinfo=UTC)),
        ("2023/05/20 (Sat) 2:21 pm", datetime(2023, 5, 20, 14, 21, tzinfo=UTC)),
        ("2023/5/20", datetime(2023, 5, 20, tzinfo=UTC)),
        ("2023.05.20 23:59:59", datetime(2023, 5, 20, 23, 59, 59, tzinfo=UTC)),
        ("2023年5月20日（周六）14:05", datetime(2023, 5, 20, 14, 5, tzinfo=UTC)),
        # ISO-8601
        ("2023-05-20T02:21:00Z", datetime(2023, 5, 20, 2, 21, tzinfo=UTC)),
        ("2023-05-20 02:21", datetime(2023, 5, 20, 2, 21, tzinfo=UTC)),
        ("2023-05-20T10:21:00+08:00", datetime(2023, 5, 20, 10, 21, tzinfo=PLUS8)),
        # RFC 2822 (e-mail)
        ("Sat, 20 May 2023 02:21:00 +0000", datetime(2023, 5, 20, 2, 21, tzinfo=UTC)),
        ("20 May 2023 10:21 +0800", datetime(2023, 5, 20, 10, 21, tzinfo=PLUS8)),
        # Unix seconds
        ("1684549260", datetime(2023, 5, 20, 2, 21, tzinfo=UTC)),
        # month names, 12-hour clocks, zones
        ("8:56 pm on 20 May, 2023", datetime(2023, 5, 20, 20, 56, tzinfo=UTC)),
        ("12:05 am on 1 June, 2023", datetime(2023, 6, 1, 0, 5, tzinfo=UTC)),
        ("Saturday, May 20, 2023 at 9 pm", datetime(2023, 5, 20, 21, tzinfo=UTC)),
        ("May 20, 2023 10:00 UTC+8", datetime(2023, 5, 20, 10, tzinfo=PLUS8)),
        ("2023/05/20 02:21 GMT", datetime(2023, 5, 20, 2, 21, tzinfo=UTC)),
        ("2023/05/20 10:21 +08:00", datetime(2023, 5, 20, 10, 21, tzinfo=PLUS8)),
        # a time alone is on the reference's day
        ("14:05", datetime(2024, 3, 1, 14, 5, tzinfo=UTC)),
        ("9 am", datetime(2024, 3, 1, 9, tzinfo=UTC)),
        # not dates
        ("2023/13/01", None),
        ("25:00", None),
        ("13 pm", None),
        ("not a date", None),
        ("", None),
    ],
)
def test_common_formats(text: str, expected: datetime | None) -> None:
    assert parse_timestamp(text, REF) == expected
    assert parse_when(text, REF) == expected


def test_zoneless_times_take_the_reference_zone() -> None:
    ref = datetime(2024, 3, 1, tzinfo=PLUS8)
    assert parse_timestamp("2023/05/20 (Sat) 02:21", ref) == datetime(
        2023, 5, 20, 2, 21, tzinfo=PLUS8
    )
    assert parse_timestamp("14:05") is None  # no reference, no day


def test_a_session_date_in_a_common_format_is_accepted() -> None:
    chat = {
        "sessions": [
            {
                "date_time": "2023/05/20 (Sat) 02:21",
                "messages": [
                    {"speaker": "Lin", "text": "我们周六去爬山吧。", "ts": "1684549320"},
                    {"speaker": "Ravi", "text": "Sounds good, I'll bring water."},
                ],
            }
        ]
    }
    [doc] = parse_input(json.dumps(chat), source="hike.json")
    assert doc.sessions[0].started_at == datetime(2023, 5, 20, 2, 21, tzinfo=UTC)
    assert doc.chunks[0].timestamp == datetime(2023, 5, 20, 2, 22, tzinfo=UTC)
    chat["sessions"][0]["date_time"] = "the day after the picnic"
    with pytest.raises(InvalidInput, match="RFC 2822"):
        parse_input(json.dumps(chat), source="hike.json")
