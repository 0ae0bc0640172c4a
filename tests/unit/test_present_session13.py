"""Values and pairs people write (issue 26, session 13), on invented notes: "7.30-9.30pm" is two
times of the evening, not a version and "30pm", and the point inside a time or a decimal ends no
clause, so what a value is the value of is still read in front of it. A newer statement about a
short period that is over (a holiday's hours) outdates no standing value. A question naming a
quarter asks what holds until it ends. A change voted down closes nothing; a time of day is no
other date; a venue is a place, and a field naming a place answers "where". A proposal others
agreed to states its value. "去年检" (go for the annual inspection) names no last year. More
values (British mobiles, a sum named by what it pays, a clinic); "new number" and "新号" change
the number. A weekday that comes back ("every Tuesday", "每周二") is the day of a routine."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memflow.recall.config import RecallConfig
from memflow.recall.pipeline import asked
from memflow.recall.preprocess import preprocess
from memflow.recall.present import outdated_points
from memflow.text.conflict import answers_differ, asked_kinds, labelled_place
from memflow.text.values import values

from .test_present_sources import NEW_DAY, OLD_DAY, TODAY, _graph


def _kinds(text: str) -> list[tuple[str, str]]:
    return [(v.kind, v.norm) for v in values(text)]


def test_a_time_with_a_point_and_a_span_sharing_pm() -> None:
    assert _kinds("Choir meets 6.45-8.15pm on Thursdays") == [
        ("clock", "18:45"),
        ("clock", "20:15"),
        ("weekday", "weekly thurs"),
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


def test_a_short_period_that_is_over_outdates_no_standing_value() -> None:
    usual = "Weekdays: the pool opens at 07:00, Sundays at 09:00."
    holiday = "Over the spring break (5 April – 20 April) the pool opens at 10:00."
    query = "What time does the pool open?"
    graph, scores, (old, new) = _graph([
        (usual, OLD_DAY, 0.05, "a"),
        (holiday, NEW_DAY, 0.05, "b"),
    ])  # fmt: skip
    # long over (and the period is the pool's spring break only): the usual hours stand
    assert outdated_points(query, graph, scores, RecallConfig(), now=TODAY) == {}
    # within the break, its hours are today's
    during = datetime(2031, 4, 12, tzinfo=UTC)
    got = outdated_points(query, graph, scores, RecallConfig(), now=during)
    assert set(got) == {old} and got[old].newer == new
    # a year's period is a change, not an exception ("covers 40 seats from 1 May 2031 to …")
    year = "From 10 April 2031 to 9 April 2032 the pool opens at 10:00."
    graph, scores, (old, new) = _graph([(usual, OLD_DAY, 0.05, "a"), (year, NEW_DAY, 0.05, "b")])
    got = outdated_points(query, graph, scores, RecallConfig(), now=TODAY)
    assert set(got) == {old}
    # off: the short period outdates the usual hours as any newer value
    graph, scores, (old, new) = _graph([(usual, OLD_DAY, 0.05, "a"), (holiday, NEW_DAY, 0.05, "b")])
    off = RecallConfig(present_passing_days=0)
    assert set(outdated_points(query, graph, scores, off, now=TODAY)) == {old}


def test_a_plan_said_within_the_time_asked_about_is_outdated_by_a_later_one() -> None:
    # said in the quarter asked about, before it ended: a later statement outdates it
    in_q2 = datetime(2031, 5, 4, tzinfo=UTC)
    later = datetime(2031, 6, 1, tzinfo=UTC)
    graph, scores, (old, new) = _graph([
        ("The Q2 town hall is on 11 June in the Larch auditorium.", in_q2, 0.05, "a"),
        ("The Q2 town hall is in the Fernhill Room instead.", later, 0.05, "b"),
    ])  # fmt: skip
    q2_end = datetime(2031, 7, 1, tzinfo=UTC)
    got = outdated_points(
        "Where is the Q2 town hall?", graph, scores, RecallConfig(), dated=True, named=q2_end
    )
    assert set(got) == {old} and got[old].newer == new
    # said after the quarter: a report of it, which a later one does not outdate so
    graph, scores, (old, new) = _graph([
        ("The Q2 town hall was in the Larch auditorium.", datetime(2031, 7, 3, tzinfo=UTC), 0.05, "a"),
        ("The Q2 town hall is in the Fernhill Room instead.", datetime(2031, 7, 9, tzinfo=UTC), 0.05, "b"),
    ])  # fmt: skip
    got = outdated_points(
        "Where is the Q2 town hall?", graph, scores, RecallConfig(), dated=True, named=q2_end
    )
    assert got == {}


def test_a_question_naming_a_quarter_asks_until_its_end() -> None:
    pq = preprocess("Where is the Q2 town hall?", now=datetime(2031, 9, 1, tzinfo=UTC))
    got = asked(pq, RecallConfig())
    assert got["dated"] and got["named"] == datetime(2031, 7, 1, tzinfo=UTC)


def test_a_change_voted_down_closes_nothing() -> None:
    import uuid

    from memflow.text.supersede import PointFact, superseded_by_rules

    old = PointFact(uuid.uuid4(), "例会固定在每周三上午10点，二号会议室。", None, OLD_DAY, OLD_DAY)
    for said in (
        "之前有人提议例会改到周五，投票没通过，维持原样",
        "The proposal to move the review to Fridays was voted down",
    ):
        new = PointFact(uuid.uuid4(), said, "Ines", NEW_DAY, NEW_DAY)
        assert superseded_by_rules(new, [old]) == [], said
    moved = PointFact(uuid.uuid4(), "例会改到每周五上午10点", "Ines", NEW_DAY, NEW_DAY)
    assert superseded_by_rules(moved, [old]) != []


def test_a_time_of_day_is_no_other_date() -> None:
    when = asked_kinds("龙湖半马是哪天？")
    assert (
        answers_differ(
            "组委会通知：今年起跑时间提前到6点半", "比赛日期：10月18日，起点体育中心东门", when
        )
        is None
    )
    assert answers_differ(
        "组委会通知：比赛日期改到10月25日", "比赛日期：10月18日，起点体育中心东门", when
    )


def test_a_venue_is_a_place_and_a_field_naming_a_place_answers_where() -> None:
    assert ("name:place", "松涛酒店") in _kinds("团建暂定在湖滨的松涛酒店多功能厅，两天一晚")
    query = "团建在哪儿办？"
    new, old = "场地：云栖会展中心二楼，合同已签", "团建暂定在湖滨的松涛酒店多功能厅，两天一晚"
    assert labelled_place(new, old, query)
    assert not labelled_place(new, old, "团建是哪天？")  # it asks when
    assert labelled_place(
        "Venue: the Corn Exchange, Ashby Road",
        "Dinner is at Marlowe's Bistro",
        "Where is the dinner?",
    )
    assert not labelled_place(
        "Venue: Marlowe's Bistro, back room",
        "Dinner is at Marlowe's Bistro",
        "Where is the dinner?",
    )


def test_a_statement_told_of_those_days_outdates_nothing() -> None:
    query = "报销用什么系统？"
    now_ = "所有报销都走云栈OA（去年从快批换过来的），手机上也能批。"
    for said, outdates in (
        ("想当年用快批的时候，报销动不动就卡住", False),
        ("那时候用快批，现在报销改用青禾了", True),
    ):
        # (the older the best answer: scores apart, so no tie between ids decides the order)
        graph, scores, (old, _new) = _graph(
            [(now_, OLD_DAY, 0.05, "a"), (said, NEW_DAY, 0.06, "b")]
        )
        got = outdated_points(query, graph, scores, RecallConfig())
        assert (old in got) is outdates, said


def test_a_proposal_agreed_to_states_its_value() -> None:
    query = "What time is the design sync?"
    rule = "Design sync 10:30 on Tuesdays, in the big room."
    at = datetime(2031, 4, 9, 9, 0, tzinfo=UTC)
    for replies, outdates in (
        (["+1", "fine by me"], True),
        (["+1", "no, 11:15 clashes with the ops call"], False),
        ([], False),
    ):
        said = [
            (rule, OLD_DAY, 0.05, "norms"),
            (
                "could we do the design sync at 11:15? 10:30 clashes with school drop-off",
                at,
                0.06,
                "chat",
            ),
        ]
        said += [(r, at + timedelta(minutes=i + 1), 0.3, "chat") for i, r in enumerate(replies)]
        graph, scores, (old, new, *_) = _graph(said)
        got = outdated_points(query, graph, scores, RecallConfig())
        assert (old in got) is outdates, replies
        if outdates:
            assert got[old].newer == new


def test_going_for_the_annual_inspection_is_not_last_year() -> None:
    from memflow.text.tense import asks_about_the_past, asks_in_the_past
    from memflow.text.timeparse import parse_time

    now_ = datetime(2031, 7, 1, tzinfo=UTC)
    assert not asks_about_the_past("车什么时候去年检？")
    assert not asks_in_the_past("车什么时候去年检？")
    assert parse_time("车什么时候去年检？", now_) == []
    assert asks_in_the_past("去年的年会在哪儿办的？")
    assert [t.start.year for t in parse_time("去年的年会在哪儿办的？", now_)] == [2030]


def test_more_values_people_write() -> None:
    # a British mobile needs no telephone word; a number after a colon is still one
    assert ("phone", "07700900456") in _kinds("Manager: Idris Vaughan - 07700 900 456")
    assert ("phone", "13822187706") in _kinds("保姆 邹阿姨:138 2218 7706(周一上午)")
    # a sum named by what it pays, its unit unsaid; a year is none
    assert _kinds("月租 5200，押金 5200，11月1日起租")[:2] == [
        ("amount:money", "5200 元"),
        ("amount:money", "5200 元"),
    ]
    assert ("amount:money", "10400 元") in _kinds("押金是两个月的，10400，押二付一")
    assert not [k for k in _kinds("预算 2027 年再批") if k[0] == "amount:money"]
    # a place after "在 " with a space, a clinic or a centre by what it is
    assert ("name:place", "安和门诊部") in _kinds("今年体检在 安和门诊部（滨江店）")


def test_a_new_number_is_a_change_of_the_number() -> None:
    phone = asked_kinds("What's Idris's phone number?")
    got = answers_differ(
        "Morning all, new number: 07700 900 789. The old one is gone",
        "Manager: Idris Vaughan - 07700 900 456 (text first)",
        phone,
    )
    assert got is not None and got.cued
    zh = asked_kinds("邹阿姨的电话是多少？")
    got = answers_differ(
        "我换号了，新号 139 0571 2290，以前那个不用了", "保姆 邹阿姨：138 2218 7706", zh
    )
    assert got is not None and got.cued


def test_a_weekday_that_comes_back_answers_which_day() -> None:
    assert ("weekday", "weekly tues") in _kinds("Bins: general waste every Tuesday")
    assert ("weekday", "weekly thurs") in _kinds("周会固定在每周四下午3点")
    day = asked_kinds("Which day is the paper recycling collected?")
    got = answers_differ(
        "From 2 March your paper recycling will be collected on Thursdays.",
        "Bins: paper recycling every Monday, glass every other week",
        day,
    )
    assert got is not None and got.head > 0  # the weekday, not the date it starts from
    zh = asked_kinds("周会是周几开？")
    assert zh == frozenset({"when"})
    assert answers_differ(
        "周会从下周起改到每周四下午3点", "周会固定在每周二下午3点，三号会议室", zh
    )
