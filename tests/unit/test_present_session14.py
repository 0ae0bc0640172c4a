"""Facts that change, session 14: points of equal score are ordered by what they say, not by an
id drawn anew at each ingest; "no problem" agrees to a proposal."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from memflow.recall.config import RecallConfig
from memflow.recall.present import outdated_points

from .test_present_sources import NEW_DAY, OLD_DAY, _graph


def test_a_proposal_agreed_to_with_no_problem_states_its_value() -> None:
    query = "When is the kiln firing?"
    at = datetime(2031, 5, 2, 18, 0, tzinfo=UTC)
    for reply, outdates in (
        ("no problem", True),
        ("No objections from me", True),
        ("no, the kiln is booked that day", False),
    ):
        graph, scores, (old, new, *_) = _graph([
            ("Kiln firing every Saturday at 9:00.", OLD_DAY, 0.05, "studio rules"),
            ("could we do the kiln firing at 14:00 instead?", at, 0.06, "chat"),
            (reply, at + timedelta(minutes=3), 0.3, "chat"),
        ])  # fmt: skip
        got = outdated_points(query, graph, scores, RecallConfig())
        assert (old in got) is outdates, reply
        if outdates:
            assert got[old].newer == new


def test_points_of_equal_score_are_ordered_by_what_they_say() -> None:
    """Two lines of one letter tie; which one is its answer must not depend on the ids."""
    said = [
        ("Contact for freight invoices: Mirela Tosh.", OLD_DAY, 0.10, "letter"),
        ("Copy freight invoices to Ottilie Brand.", OLD_DAY, 0.10, "letter"),
        ("Freight invoices go to Benedikt Arland from now on.", NEW_DAY, 0.12, "chat"),
    ]
    seen = set()
    for _ in range(24):  # each draw gives the points new random ids
        graph, scores, ids = _graph(said)
        got = outdated_points("Who gets the freight invoices?", graph, scores, RecallConfig())
        seen.add(frozenset(ids.index(p) for p in got))
    assert len(seen) == 1 and seen != {frozenset()}, seen


def test_two_dates_said_as_limits_are_of_one_thing() -> None:
    from memflow.text.conflict import answers_differ, asked_kinds

    kinds = asked_kinds("When is the deadline for the allotment renewal?")
    old = "Renewal deadline: 31 March."
    for new, differ in (
        ("Good news from the committee, forms are now taken until 14 April this year.", True),
        ("Bring the renewal forms to the shed by 14 April.", True),
        ("The committee meets on 14 April.", False),  # a meeting, not a limit
    ):
        got = answers_differ(new, old, kinds)
        assert (got is not None and got.head > 0) is differ, new
    zh = asked_kinds("续租什么时候截止？")
    got = answers_differ("续租材料请在4月14日前交齐", "续租截止日期：3月31日", zh)
    assert got is not None and got.head > 0


def test_one_vocabulary_holds_a_statement_back_on_both_paths() -> None:
    from memflow.text.conflict import unsure
    from memflow.text.supersede import PointFact, superseded_by_rules

    def fact(text: str, month: int) -> PointFact:
        return PointFact(uuid.uuid4(), text, recorded_at=datetime(2031, month, 1, tzinfo=UTC))

    for was, changed, held_back in (
        (
            "The choir concert is on 12 May.",
            "The choir concert moved to 19 May.",
            "Moving the choir concert to 19 May was voted down.",
        ),
        (
            "合唱音乐会定在5月12日。",
            "合唱音乐会改到5月19日。",
            "有人提议把合唱音乐会改到5月19日，没通过，维持原样。",
        ),
    ):
        old = [fact(was, 1)]
        assert not unsure(changed) and superseded_by_rules(fact(changed, 2), old) != []
        # the read path: it states no value; the write path: it closes nothing
        assert unsure(held_back) and superseded_by_rules(fact(held_back, 2), old) == [], held_back


def test_a_value_settled_in_the_end_is_a_change() -> None:
    from memflow.text.conflict import answers_differ, asked_kinds

    kinds = asked_kinds("How many tents does the scout camp get?")
    old = "The scout camp gets 6 tents."
    got = answers_differ("The scout camp got 9 tents in the end.", old, kinds)
    assert got is not None and got.cued
    zh = asked_kinds("培训室要几台投影仪？")
    asked = "申请投影仪 2台，用于培训室。"
    got = answers_differ("培训室的投影仪最后批了3台，周五送到", asked, zh)
    assert got is not None and got.cued
    # "最后一次" is the last time, not the outcome
    last = answers_differ("最后一次培训用了3台投影仪", asked, zh)
    assert last is None or not last.cued


def test_a_tag_question_agreed_to_states_its_value() -> None:
    query = "When is the pottery class?"
    at = datetime(2031, 5, 2, 18, 0, tzinfo=UTC)
    for proposal in (
        "pottery class at 18:30 from next week, ok?",
        "陶艺课从下周开始放到18:30好吗？",
    ):
        rule = (
            "陶艺课每周四17:00上课。"
            if "陶" in proposal
            else "Pottery class every Thursday at 17:00."
        )
        graph, scores, (old, new, *_) = _graph([
            (rule, OLD_DAY, 0.05, "studio rules"),
            (proposal, at, 0.06, "chat"),
            ("可以的" if "陶" in proposal else "sure", at + timedelta(minutes=3), 0.3, "chat"),
        ])  # fmt: skip
        got = outdated_points(query, graph, scores, RecallConfig())
        assert old in got and got[old].newer == new, proposal


def test_times_of_day_in_words() -> None:
    from memflow.text.values import values

    def clocks(text: str) -> list[str]:
        return [v.norm for v in values(text) if v.kind == "clock"]

    assert clocks("Rehearsal starts at half past seven.") == ["07:30"]
    assert clocks("Be there by ten to six, doors at quarter past six") == ["05:50", "06:15"]
    assert clocks("We open at half eight and close at noon.") == ["08:30", "12:00"]
    assert clocks("Bell rings at nine o'clock in the evening") == ["21:00"]
    assert clocks("from five to ten people came, half an hour late") == []


def test_which_place_and_a_code_ask_for_their_kind() -> None:
    from memflow.text.conflict import answers_differ, asked_kinds
    from memflow.text.values import values

    assert "name" in asked_kinds("Which ward is Aunt Rhona on?")
    assert asked_kinds("What's the gate code for the allotments?") >= {"code"}
    assert asked_kinds("仓库门禁密码是多少？") >= {"code"}
    assert [(v.kind, v.norm) for v in values("仓库门禁密码：5183#")] == [("code", "5183")]
    kinds = asked_kinds("仓库门禁密码是多少？")
    got = answers_differ("仓库门禁密码6620#，记一下", "仓库门禁密码：5183#", kinds)
    assert got is not None and got.head > 0


def test_a_phone_number_is_stated_wherever_it_stands() -> None:
    from memflow.text.conflict import stated
    from memflow.text.values import values

    said = "Please save this number, 07700 900 812 - my old phone died."
    phone = next(v for v in values(said) if v.kind == "phone")
    assert stated(said, phone)


def test_one_speakers_own_thing_is_not_the_value_asked_of_another() -> None:
    query = "When is Oriel's thesis due?"
    for said, speaker, outdates in (
        ("Mine is due 9 June now, the extension came through", "Bram", False),
        ("Mine is due 9 June now, the extension came through", "Oriel", True),
    ):
        graph, scores, (old, new) = _graph([
            ("Thesis due 14 May (submit through the portal).", OLD_DAY, 0.05, "plan"),
            (said, NEW_DAY, 0.06, "chat"),
        ])  # fmt: skip
        graph.nodes[new].speaker = speaker
        got = outdated_points(query, graph, scores, RecallConfig())
        assert (old in got) is outdates, speaker


def test_a_value_said_again_as_said_before_outdates_nothing() -> None:
    query = "When does the lease end?"
    for said, outdates in (
        ("As I said, the lease ends on 30 June; the van goes back in May.", False),
        ("The lease ends on 31 July now.", True),
    ):
        graph, scores, (old, *_) = _graph([
            ("Lease: ends 30 June.", OLD_DAY, 0.05, "contract"),
            (said, NEW_DAY, 0.06, "chat"),
        ])  # fmt: skip
        got = outdated_points(query, graph, scores, RecallConfig())
        assert (old in got) is outdates, said


def test_another_teams_date_is_not_a_change() -> None:
    from memflow.recall.present import _another_subject, _zh_subjects

    asked = _zh_subjects("设计组哪天提测？")
    assert asked == {"设计"}
    assert _another_subject("开发组这边提测放到9月19日", asked)
    assert not _another_subject("设计组这边提测放到9月19日", asked)
    assert _zh_subjects("设计组长 葛秋：没变") == set()  # a team's lead is no team


def test_another_persons_number_passed_on_is_no_change() -> None:
    query = "What's Keverne's phone number?"
    for said, outdates in (
        ("fyi Morvah's got a new number, 07700 900 377, she asked me to pass it on", False),
        ("Keverne's got a new number, 07700 900 377", True),
    ):
        graph, scores, (old, new) = _graph([
            ("Keverne's mobile: 07700 900 145", OLD_DAY, 0.05, "contacts"),
            (said, NEW_DAY, 0.06, "chat"),
        ])  # fmt: skip
        graph.nodes[new].speaker = "Keverne"
        got = outdated_points(query, graph, scores, RecallConfig())
        assert (old in got) is outdates, said


def test_an_exception_said_as_one_outdates_no_standing_value() -> None:
    query = "What time does the swap shop open on Sundays?"
    for said, outdates in (
        ("This Sunday only we open at 11, the road is closed for the parade.", False),
        ("We open at 11am on Sundays from now on.", True),
    ):
        graph, scores, (old, *_) = _graph([
            ("Swap shop opens every Sunday at 9am.", OLD_DAY, 0.05, "rules"),
            (said, NEW_DAY, 0.06, "chat"),
        ])  # fmt: skip
        got = outdated_points(query, graph, scores, RecallConfig())
        assert (old in got) is outdates, said
    from memflow.recall.present import _period

    assert _period("本周日例外，11点开门，下周恢复正常", NEW_DAY, 7) is not None
