"""Facts that change, session 15: two sources answering one question with different values
(the newer placed first, the older not marked); a change of another attribute or of another
labelled item outdates no answer; a statement is taken up only by another value of a kind it
gives; one person's row of a list; new value forms (Chinese totals and counted things, persons
after their role, weekdays every other week, room labels)."""

from __future__ import annotations

from memflow.recall.config import RecallConfig
from memflow.recall.present import outdated_points
from memflow.recall.types import GraphNode, Subgraph
from memflow.text.conflict import answers_differ, asked_kinds, stated
from memflow.text.values import values

from .test_present_sources import NEW_DAY, OLD_DAY, _graph


def test_two_sources_answering_differently_put_the_newer_first_unmarked() -> None:
    query = "Where is the team dinner?"
    said = [
        ("Dinner Fri 3 May: the Copper Kettle, 7pm, set menu.", OLD_DAY, 0.10, "plan"),
        ("Coach leaves the depot at 17:30.", OLD_DAY, 0.14, "plan"),
        ("Booked a table for 12 at Marchetti's on Quay Street, 7 Friday.", NEW_DAY, 0.12, "mail"),
    ]
    graph, scores, (old, _, new) = _graph(said)
    got = outdated_points(query, graph, scores, RecallConfig())
    assert old in got and got[old].newer == new and got[old].how == "rival"
    assert not got[old].marked and got[old].near
    off = RecallConfig(present_rival=0)
    assert old not in outdated_points(query, graph, scores, off)
    # a newer source far from the question is no rival answer
    far = [said[0], said[1], (said[2][0], NEW_DAY, 0.30, "mail")]
    graph, scores, (old, _, _) = _graph(far)
    assert old not in outdated_points(query, graph, scores, RecallConfig())


def test_a_change_of_another_attribute_outdates_no_answer() -> None:
    graph, scores, (old, new) = _graph([
        ("The book fair is on 9 June (Tuesday), in the main hall.", OLD_DAY, 0.05, "newsletter"),
        ("The book fair moves to the library annexe; doors shut at five.", NEW_DAY, 0.06, "chat"),
    ])  # fmt: skip
    graph = Subgraph(nodes=graph.nodes, times=graph.times, links={new: [(old, "restates")]})
    assert old not in outdated_points("When is the book fair?", graph, scores, RecallConfig())
    got = outdated_points("Where is the book fair?", graph, scores, RecallConfig())
    assert old in got and got[old].how == "link" and got[old].marked


def test_a_change_of_another_labelled_item_outdates_no_answer() -> None:
    graph, scores, (old, new) = _graph([
        ("Booking fee £40 paid; remaining £360 due on arrival.", OLD_DAY, 0.05, "cabin"),
        ("With the extra night, the remaining amount is now £420.", NEW_DAY, 0.06, "update"),
    ])  # fmt: skip
    fee = "How much is the booking fee for the cabin?"
    assert old not in outdated_points(fee, graph, scores, RecallConfig())
    rest = "How much is the remaining amount for the cabin?"
    got = outdated_points(rest, graph, scores, RecallConfig())
    assert old in got and got[old].newer == new


def test_a_statement_with_no_answer_of_the_kind_asked_is_taken_up_by_nothing() -> None:
    graph, scores, (_, thanks, _) = _graph([
        ("老周: 团建大巴我约好了，宏达客运，2辆", OLD_DAY, 0.05, "团建群"),
        ("小米: 辛苦老周！", OLD_DAY, 0.07, "团建群"),
        ("矿泉水三箱，零食让老周自己挑。", NEW_DAY, 0.09, "采购单"),
    ])  # fmt: skip
    got = outdated_points("团建订了几辆大巴？", graph, scores, RecallConfig())
    assert thanks not in got, got


def test_a_statement_is_taken_up_only_by_another_value_of_a_kind_it_gives() -> None:
    graph, scores, (day, slip, now, _) = _graph([
        ("The fish van comes on Wednesday, every other week.", OLD_DAY, 0.05, "flyer"),
        ("Have the order slip ready by 9am, on the doormat.", OLD_DAY, 0.10, "flyer"),
        ("So it's Fridays for the fish van now.", NEW_DAY, 0.12, "street chat"),
        ("Anyone else's order not delivered?", NEW_DAY, 0.13, "street chat"),
    ])  # fmt: skip
    got = outdated_points("Which day does the fish van come?", graph, scores, RecallConfig())
    assert day in got and got[day].newer == now
    assert slip not in got, got


def test_another_persons_row_outdates_no_row_of_the_person_asked_of() -> None:
    graph, scores, (mine, theirs, new) = _graph([
        ("蒋澄：储物柜 24号", OLD_DAY, 0.05, "储物柜登记"),
        ("柏舟：储物柜 25号", OLD_DAY, 0.08, "储物柜登记"),
        ("新来的实习生莫辞，储物柜 26号", NEW_DAY, 0.06, "群聊"),
    ])  # fmt: skip
    for older in (mine, theirs):
        graph.links.setdefault(new, []).append((older, "restates"))
    got = outdated_points("蒋澄的储物柜是几号？", graph, scores, RecallConfig())
    assert mine not in got, got


def test_a_row_of_the_person_asked_of_is_outdated_by_what_they_say_themself() -> None:
    graph, scores, (old, new) = _graph([
        ("我们用石墨文档写周报。", OLD_DAY, 0.05, "chat 1"),
        ("我们把周报改到语雀上写了。", NEW_DAY, 0.06, "chat 2"),
    ])  # fmt: skip
    for p in (old, new):
        n = graph.nodes[p]
        graph.nodes[p] = GraphNode(p, n.kind, search_text=n.search_text, created_at=n.created_at,
                                   sources=n.sources, speaker="祁远")  # fmt: skip
    got = outdated_points("祁远的团队用什么写周报？", graph, scores, RecallConfig())
    assert old in got and got[old].newer == new


def test_asked_who_a_person_a_later_statement_is_about_answers() -> None:
    old = "Choir: Wednesdays 7-9pm in the chapel, led by Ottavio Brenner."
    new = "Dr Halloran is covering the choir from now on, Wednesdays as before."
    assert [v.kind for v in values(new)][:1] == ["name:person"]
    assert answers_differ(new, old, asked_kinds("Who leads the choir?"), who=True)
    # not asked who: the person the statement is about answers no "when"
    assert answers_differ(new, old, asked_kinds("When does the choir meet?")) is None


def test_chinese_totals_and_counted_things_are_values() -> None:
    assert [(v.kind, v.norm) for v in values("合计12800，含上门安装")][:1] == [
        ("amount:money", "12800 元")
    ]
    assert [(v.kind, v.norm) for v in values("婚宴：锦绣厅 12桌")] == [("count", "12")]
    assert "count" in asked_kinds("婚宴订了几桌？")
    assert asked_kinds("几点开始？") == frozenset({"when"})


def test_a_weekday_every_other_week_is_a_routine_of_its_own() -> None:
    said = {
        "Chess club meets on Monday, every other week.": "fortnightly mon",
        "The choir meets every other Friday.": "fortnightly fri",
        "Bins are collected fortnightly on Tuesdays.": "fortnightly tues",
        "So it's Saturdays for the market now.": "weekly satur",
    }
    for text, norm in said.items():
        assert [v.norm for v in values(text)] == [norm], text


def test_per_is_a_percent_only_before_cent() -> None:
    assert [v.kind for v in values("Tents are shared, three per pitch.")] == []
    assert [v.norm for v in values("Service is 12 per cent.")] == ["12 percent"]


def test_a_person_named_after_their_role_is_a_name() -> None:
    assert [v.norm for v in values("报销单交给会计聂青禾（分机 6102）")][:1] == ["聂青禾"]
    assert [v.norm for v in values("行政部门周五发通知")] == []
    assert all(v.norm != "我就行" for v in values("有问题找我就行，别客气"))
    assert list(values("仓储部经理是谁？")) == []


def test_a_pronoun_with_its_is_stands_before_a_value() -> None:
    text = "So it's Saturdays for the market now."
    assert stated(text, values(text)[0])


def test_a_room_label_with_its_number_is_a_code_listed_in_a_terse_note() -> None:
    old = "From next week the design crit is 3-4pm in room 3D-21 (third floor)."
    new = "Design crit Fri 3pm, 6F-12, bring sketches."
    assert [v.norm for v in values(old) if v.kind == "code"] == ["3d-21"]
    assert [v.norm for v in values(new) if v.kind == "code"] == ["6f-12"]
    got = answers_differ(new, old, asked_kinds("Which room is the design crit in?"))
    assert got is not None and got.head > 0
