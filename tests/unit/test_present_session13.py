"""Times written with a point (issue 26, session 13), on invented notes: "7.30-9.30pm" is two
times of the evening, not a version and "30pm"; and the point inside a time or a decimal ends no
clause, so what a value is the value of is still read in front of it."""

from __future__ import annotations

from memflow.text.conflict import answers_differ, asked_kinds
from memflow.text.values import values


def _kinds(text: str) -> list[tuple[str, str]]:
    return [(v.kind, v.norm) for v in values(text)]


def test_a_time_with_a_point_and_a_span_sharing_pm() -> None:
    assert _kinds("Choir meets 6.45-8.15pm on Thursdays") == [
        ("clock", "18:45"),
        ("clock", "20:15"),
    ]
    assert ("clock", "21:30") in _kinds("doors close at 9.30pm")
    assert _kinds("open 6-8 pm") == [("clock", "18:00"), ("clock", "20:00")]
    assert ("clock", "10:30") in _kinds("stand-up at 10:30 am")
    # no "am"/"pm": still a number of its own kind, not a time
    assert ("clock", "07:30") not in _kinds("release 7.30 is out")


def test_a_point_inside_a_time_ends_no_clause() -> None:
    where = asked_kinds("Where does the chess club meet?")
    got = answers_differ(
        "from next month (3 March) club nights are at the Alder Road Library, upstairs",
        "Club nights start on Monday 2 February, 6.45-8.15pm at Hollybush Community Centre.",
        where,
    )
    # "club nights" in front of both places: the same thing's value
    assert got is not None and got.head > 0
