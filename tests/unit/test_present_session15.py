"""Facts that change, session 15: two sources answering one question with different values
(the newer placed first, the older not marked); a change of another attribute or of another
labelled item outdates no answer; a statement that gives no answer of the kind asked is taken
up by nothing; Chinese totals without a unit and counted things."""

from __future__ import annotations

from memflow.recall.config import RecallConfig
from memflow.recall.present import outdated_points
from memflow.recall.types import Subgraph
from memflow.text.conflict import asked_kinds
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
        ("Sports day is on 14 May (Thursday), on the school field.", OLD_DAY, 0.05, "notice"),
        ("Sports day moves to the county stadium; coaches back at four.", NEW_DAY, 0.06, "chat"),
    ])  # fmt: skip
    graph = Subgraph(nodes=graph.nodes, times=graph.times, links={new: [(old, "restates")]})
    assert old not in outdated_points("When is sports day?", graph, scores, RecallConfig())
    got = outdated_points("Where is sports day?", graph, scores, RecallConfig())
    assert old in got and got[old].how == "link" and got[old].marked


def test_a_change_of_another_labelled_item_outdates_no_answer() -> None:
    graph, scores, (old, new) = _graph([
        ("Deposit £300, payable now; balance £900 due in June.", OLD_DAY, 0.05, "booking"),
        ("With the sauna added, the balance comes to £1,020.", NEW_DAY, 0.06, "update"),
    ])  # fmt: skip
    deposit = "How much is the deposit for the lodge?"
    assert old not in outdated_points(deposit, graph, scores, RecallConfig())
    got = outdated_points("How much is the balance for the lodge?", graph, scores, RecallConfig())
    assert old in got and got[old].newer == new


def test_a_statement_with_no_answer_of_the_kind_asked_is_taken_up_by_nothing() -> None:
    graph, scores, (_, thanks, _) = _graph([
        ("大舅: 年夜饭我订了，松鹤楼，5桌", OLD_DAY, 0.05, "family chat"),
        ("小姨: 辛苦大舅！", OLD_DAY, 0.07, "family chat"),
        ("坚果礼盒两箱，酒让大舅自己挑。", NEW_DAY, 0.09, "shopping"),
    ])  # fmt: skip
    got = outdated_points("年夜饭订了几桌？", graph, scores, RecallConfig())
    assert thanks not in got, got


def test_chinese_totals_and_counted_things_are_values() -> None:
    assert [(v.kind, v.norm) for v in values("一共9350，纱窗也含在里面")][:1] == [
        ("amount:money", "9350 元")
    ]
    assert [(v.kind, v.norm) for v in values("年夜饭：松鹤楼 7桌")] == [("count", "7")]
    assert "count" in asked_kinds("年夜饭订了几桌？")
    assert asked_kinds("几点开始？") == frozenset({"when"})


def test_a_statement_is_taken_up_only_by_another_value_of_a_kind_it_gives() -> None:
    graph, scores, (day, bins, now, _) = _graph([
        ("Recycling goes out on Tuesday, every other week.", OLD_DAY, 0.05, "leaflet"),
        ("Put the bins out by 7am, handles to the road.", OLD_DAY, 0.10, "leaflet"),
        ("So it's Thursdays for us now.", NEW_DAY, 0.12, "street chat"),
        ("Anyone else's bin not emptied?", NEW_DAY, 0.13, "street chat"),
    ])  # fmt: skip
    got = outdated_points("Which day is the recycling collected?", graph, scores, RecallConfig())
    assert day in got and got[day].newer == now
    assert bins not in got, got


def test_a_weekday_every_other_week_is_a_routine_of_its_own() -> None:
    said = {
        "Recycling goes on Tuesday, every other week.": "fortnightly tues",
        "The choir meets every other Friday.": "fortnightly fri",
        "Bins are collected fortnightly on Mondays.": "fortnightly mon",
        "So it's Thursdays for us now.": "weekly thurs",
    }
    for text, norm in said.items():
        assert [v.norm for v in values(text)] == [norm], text


def test_per_is_a_percent_only_before_cent() -> None:
    assert [v.kind for v in values("Rooms are shared (two per barn).")] == []
    assert [v.norm for v in values("Service is 12 per cent.")] == ["12 percent"]


def test_a_person_named_after_their_role_is_a_name() -> None:
    assert [v.norm for v in values("门禁卡找行政滕晓芸（分机 8021）")][:1] == ["滕晓芸"]
    assert [v.norm for v in values("行政部门周五发通知")] == []
    assert list(values("客服部主管是谁？")) == []
    assert all(v.norm != "我就行" for v in values("以后这些事情找我就行"))


def test_a_pronoun_with_its_is_stands_before_a_value() -> None:
    from memflow.text.conflict import stated

    text = "So it's Thursdays for us now."
    assert stated(text, values(text)[0])


def test_a_room_label_with_its_number_is_a_code_listed_in_a_terse_note() -> None:
    from memflow.text.conflict import answers_differ

    old = "From next week the planning review is 10-11am in room 3D-21 (third floor)."
    new = "Planning rev Tue 10am, 5A-04, bring the numbers."
    assert [v.norm for v in values(old) if v.kind == "code"] == ["3d-21"]
    assert [v.norm for v in values(new) if v.kind == "code"] == ["5a-04"]
    got = answers_differ(new, old, asked_kinds("Which room is the planning review in?"))
    assert got is not None and got.head > 0


def test_asked_who_a_person_a_later_statement_is_about_answers() -> None:
    from memflow.text.conflict import answers_differ

    old = "Pottery club: Mondays 6-8pm in the annexe, run by Aurelio Banfield."
    new = "Mrs Quennell took pottery tonight, she's doing Mondays until Easter."
    assert [v.kind for v in values(new)][:1] == ["name:person"]
    assert answers_differ(new, old, asked_kinds("Who runs the pottery club?"), who=True)
    # not asked who: the person the statement is about answers no "when"
    assert answers_differ(new, old, asked_kinds("When is the pottery club?")) is None


def test_another_persons_row_outdates_no_row_of_the_person_asked_of() -> None:
    graph, scores, (mine, theirs, new) = _graph([
        ("蒋澄：B区 07号", OLD_DAY, 0.05, "座位表"),
        ("柏舟：B区 08号", OLD_DAY, 0.08, "座位表"),
        ("新同事莫辞下周一入职，工位 B区 09号", NEW_DAY, 0.06, "群聊"),
    ])  # fmt: skip
    for older, newer in ((mine, new), (theirs, new)):
        graph.links.setdefault(newer, []).append((older, "restates"))
    got = outdated_points("蒋澄的工位是几号？", graph, scores, RecallConfig())
    assert mine not in got, got


def test_a_row_of_the_person_asked_of_is_outdated_by_what_they_say_themself() -> None:
    from memflow.recall.types import GraphNode

    graph, scores, (old, new) = _graph([
        ("我们用飞书管理任务。", OLD_DAY, 0.05, "chat 1"),
        ("我们把任务管理换成Trello了。", NEW_DAY, 0.06, "chat 2"),
    ])  # fmt: skip
    for p in (old, new):
        n = graph.nodes[p]
        graph.nodes[p] = GraphNode(p, n.kind, search_text=n.search_text, created_at=n.created_at,
                                   sources=n.sources, speaker="祁远")  # fmt: skip
    got = outdated_points("祁远的团队用什么工具管理任务？", graph, scores, RecallConfig())
    assert old in got and got[old].newer == new
