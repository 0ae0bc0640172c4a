"""Typed values and "another value for the same thing" (issue 26, part 3): memflow.text.values
and memflow.text.conflict, English and Chinese. Statements invented here."""

from __future__ import annotations

import pytest

from memflow.text.conflict import difference
from memflow.text.tense import asks_in_the_past
from memflow.text.values import masked, values


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("The first release moves from 15 November to 29 November.", ["date", "date"]),
        ("My rent is 1200 euros a month.", ["amount:money"]),
        ("The budget is $40k.", ["amount:money"]),
        ("Our standup is at 9:30.", ["clock"]),
        ("We upgraded production to PostgreSQL 16.", ["version"]),
        ("API v2 is now generally available.", ["version", "status"]),
        ("The team has six engineers.", ["count"]),
        ("Priya owns the data migration.", ["name:person"]),
        ("We moved from Redis to Postgres LISTEN/NOTIFY.", ["name:place", "name:product"]),
        ("上线时间从11月15日推迟到11月29日。", ["date", "date"]),
        ("预算涨到25万元了。", ["amount:money"]),
        ("团队现在有十二个人。", ["count"]),
        ("站会改到上午十点半。", ["clock"]),
        ("推送通知现在由李雷负责。", ["name:person"]),
        ("我们改用Kafka做消息队列。", ["name:product"]),
    ],
)
def test_values_are_typed(text: str, kinds: list[str]) -> None:
    assert [v.kind for v in values(text)] == kinds


def test_the_same_date_written_two_ways_is_one_value() -> None:
    (a,) = values("The launch is on 29 November.")
    (b,) = values("The launch is on November 29.")
    assert a.norm == b.norm
    assert masked("The launch is on 29 November.") == "The launch is on [date]."


CHANGES = [
    # (older, newer, how): the newer gives another value and says (or shows) it changed
    (
        "We will use Redis pub/sub for notifications.",
        "We moved from Redis to Postgres LISTEN/NOTIFY.",
        "departure",
    ),
    (
        "We will use Redis pub/sub for notifications.",
        "Redis is no longer part of the design.",
        "departure",
    ),
    (
        "The first release is planned for 15 November.",
        "The first release moves from 15 November to 29 November.",
        "departure",
    ),
    ("My rent is 1200 euros a month.", "The landlord raised my rent to 1350 euros.", "change"),
    ("Our standup is at 9:30.", "We moved the standup to 10:15.", "change"),
    ("We run PostgreSQL 15 in production.", "We upgraded production to PostgreSQL 16.", "change"),
    ("The API v2 is in beta.", "API v2 is now generally available.", "change"),
    ("The team has six engineers.", "We are nine engineers now.", "change"),
    (
        "Priya owns the data migration.",
        "Tom has taken over the data migration from Priya.",
        "departure",
    ),
    ("Priya owns the data migration.", "Tom owns the data migration now.", "change"),
    ("The offsite is in Lisbon.", "The offsite moved to Porto.", "change"),
    ("上线时间是11月15日。", "上线时间从11月15日推迟到11月29日。", "departure"),
    ("我们用Redis做消息队列。", "我们不再用Redis了，改用Kafka。", "departure"),
    ("负责人是王芳。", "这个项目现在由李雷负责。", "change"),
    ("预算是20万元。", "预算涨到25万元了。", "change"),
    ("团队有八个人。", "团队现在有十二个人。", "change"),
    ("周会在三楼会议室开。", "周会改到五楼会议室开。", "change"),
]


@pytest.mark.parametrize(("old", "new", "how"), CHANGES)
def test_a_changed_value_is_found(old: str, new: str, how: str) -> None:
    d = difference(new, old)
    assert d is not None and d.how == how and d.cued, d


NOT_CHANGES = [
    # the newcomer's false closure: a status of iOS push, not who owns push notifications
    (
        "Kenji owns push notifications for iOS and Android.",
        "iOS push works now that the Apple account is renewed.",
    ),
    (
        "The iOS release is on 15 November.",
        "The Android release moves from 20 November to 2 December.",
    ),
    ("The design review is on 3 October.", "The code review moved to 5 October."),
    ("I live in Leeds.", "We might move to Bristol next year."),
    ("Priya owns the data migration.", "Priya reviewed the migration plan with Tom."),
    ("I ran 5 km yesterday.", "I ran 8 km today."),
    ("王芳负责推送通知。", "王芳说iOS推送现在正常了。"),
    ("上线时间是11月15日吗？", "上线时间改到11月29日。"),
]


@pytest.mark.parametrize(("old", "new"), NOT_CHANGES)
def test_other_things_questions_and_events_are_no_change(old: str, new: str) -> None:
    d = difference(new, old)
    assert d is None or not d.cued, d


def test_a_value_restated_without_a_change_word_is_an_uncued_change() -> None:
    d = difference(
        "The billing review is planned for 15 October.",
        "The billing review is planned for 3 October.",
    )
    assert d is not None and d.how == "change" and not d.cued  # a link, never a closure


@pytest.mark.parametrize(
    ("question", "past"),
    [
        ("Which broker do we use for notifications?", False),
        ("When is the first release?", False),
        ("Who owns push notifications now?", False),
        ("When did Ilona go to the climbing gym?", True),
        ("What was the budget before the cut?", True),
        ("上线时间是哪天？", False),
        ("以前用的是什么消息队列？", True),
    ],
)
def test_the_tense_of_a_question(question: str, past: bool) -> None:
    assert asks_in_the_past(question) is past


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("We tried four different ones so far.", ["count"]),  # a describing word, then a plural
        ("It takes 5 more minutes.", ["amount:duration"]),
        ("The ones I like are blue.", []),  # "ones" is not "one" and a unit
    ],
)
def test_counts_and_number_words(text: str, kinds: list[str]) -> None:
    assert [v.kind for v in values(text)] == kinds


def test_a_question_in_a_turn_holds_back_only_its_own_sentence() -> None:
    from memflow.text.conflict import answers_differ, asked_kinds

    kinds = asked_kinds("How many bakeries have I tried?")
    old = "Have you tried any bakeries lately? I've tried three different ones this year."
    new = "Any tips for sourdough? Also, have you tried bakeries near me? I've tried five different ones so far."
    got = answers_differ(new, old, kinds)
    assert got is not None and got.head > 0
    # a statement that only asks still answers nothing
    assert answers_differ("Have you tried five different ones?", old, kinds) is None


def test_how_long_asks_for_a_duration_and_a_dash_ends_a_question_clause() -> None:
    from memflow.text.conflict import answers_differ, asked_kinds

    kinds = asked_kinds("How long have I had my bike?")
    assert "amount:duration" in kinds
    old = "I've had my bike for 6 months now - do you know a good shop to service it?"
    new = "Funny, I've had my bike for 9 months now, time flies!"
    assert answers_differ(new, old, kinds) is not None


def test_a_past_tense_question_gets_the_present_unless_it_asks_when() -> None:
    from memflow.recall.config import RecallConfig
    from memflow.recall.present import applies

    cfg = RecallConfig()
    assert applies("How many films did I watch this year?", False, cfg)
    assert applies("Did I finish reading the novel?", False, cfg)
    assert not applies("When did I move to Lisbon?", False, cfg)
    assert not applies("Where did I live before the move?", False, cfg)
    assert not applies("How many films did I watch?", False, cfg.model_copy(
        update={"present_past_tense": False}))  # fmt: skip


def test_a_question_naming_no_kind_pairs_by_any_kind_both_state() -> None:
    from memflow.text.conflict import any_kind, asked_kinds

    assert asked_kinds("What type of model am I building?") == frozenset()
    assert {"name", "count", "when", "amount:mass"} <= any_kind()


def test_a_count_is_the_count_of_what_follows_it() -> None:
    """ "keeps 3 lab technicians" answers "how many lab technicians" as "5 lab technicians" did,
    wherever the count stands; a count of another thing does not."""
    from memflow.text.conflict import answers_differ, asked_kinds

    kinds = asked_kinds("How many lab technicians is Chemistry hiring?")
    old = "Signed off: 5 lab technicians, 2 glassware assistants."
    got = answers_differ("Chemistry keeps 3 lab technicians plus the assistant.", old, kinds)
    assert got is not None and got.head == 1.0
    assert answers_differ("Chemistry keeps 3 glass cabinets in the store room.", old, kinds) is None


def test_one_chinese_statement_but_for_a_name_is_another_answer() -> None:
    from memflow.text.conflict import aligned_change

    assert aligned_change("茶饮项目：负责人 吴瑾", "茶饮项目：负责人 周明远") == ("周明远", "吴瑾")
    assert aligned_change("茶饮项目：负责人 吴瑾", "茶饮项目：负责人 吴瑾") is None
    assert aligned_change("茶饮项目：预算 5 万", "茶饮项目：预算 8 万") is None  # a number
    assert aligned_change("负责人 吴瑾", "负责人 周明远") is None  # too short to say of what
    assert aligned_change("Tea project lead: Wu", "Tea project lead: Zhou") is None  # a value
    assert aligned_change("茶饮项目：负责人 吴瑾", "包装设计：外包给 松果工作室") is None
