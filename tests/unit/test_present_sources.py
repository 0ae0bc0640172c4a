"""Which statements a newer one outdates for a present question (memflow.recall.present), on
invented notes: a status question asks about now; another value outdates one answer per older
source (not its greeting or signature); a value the question names is its subject, not an
answer; a count with its measure word counts what the noun in front of it names; and sources
memorised today without a date of their own are ordered by the day their episodes start."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from memflow.recall.config import RecallConfig
from memflow.recall.present import outdated_points
from memflow.recall.types import GraphEdge, GraphNode, Subgraph
from memflow.text.conflict import answers_differ, asked_kinds

OLD_DAY, NEW_DAY = datetime(2031, 3, 2, tzinfo=UTC), datetime(2031, 4, 9, tzinfo=UTC)
TODAY = datetime(2032, 1, 5, 12, tzinfo=UTC)


def _graph(
    said: list[tuple[str, datetime, float, str]],
) -> tuple[Subgraph, dict[uuid.UUID, float], list[uuid.UUID]]:
    """Points (text, day, score, document) in one subgraph, each document a source."""
    ids = [uuid.uuid4() for _ in said]
    nodes = {
        i: GraphNode(i, "FacetPoint", search_text=t, created_at=d, sources=[["k", doc, doc, d]])
        for i, (t, d, _, doc) in zip(ids, said, strict=True)
    }
    times = {i: {"recorded_at": d} for i, (_, d, _, _) in zip(ids, said, strict=True)}
    scores = {i: s for i, (_, _, s, _) in zip(ids, said, strict=True)}
    return Subgraph(nodes=nodes, times=times), scores, ids


def test_a_status_question_asks_about_now() -> None:
    graph, scores, (old, new, other) = _graph([
        ("Harbour survey: crew booked, starts on the 14th.", OLD_DAY, 0.06, "a"),
        ("Harbour survey: findings delivered to the board.", NEW_DAY, 0.05, "b"),
        ("The ferry timetable changes in spring.", NEW_DAY, 0.2, "c"),
    ])  # fmt: skip
    for query in (
        "Where are we with the harbour survey?",
        "What's the status of the harbour survey?",
    ):
        got = outdated_points(query, graph, scores, RecallConfig())
        assert set(got) == {old} and got[old].newer == new, (query, got)
    assert outdated_points("Who runs the harbour survey?", graph, scores, RecallConfig()) == {}
    assert other not in outdated_points("Where are we with the harbour survey?", graph, scores,
                                        RecallConfig())  # fmt: skip


def test_another_value_outdates_one_answer_per_older_source() -> None:
    graph, scores, (answer, greeting, signature, again, new) = _graph([
        ("Mirela Tosh is your contact for freight invoices this year.", OLD_DAY, 0.10, "letter"),
        ("Dear Lantern Cargo team,", OLD_DAY, 0.20, "letter"),
        ("Ottilie Brand", OLD_DAY, 0.21, "letter"),
        ("Escalations: Mirela Tosh as well.", OLD_DAY, 0.22, "letter"),
        ("Freight invoices go to Benedikt Arland from now on.", NEW_DAY, 0.12, "chat"),
    ])  # fmt: skip
    got = outdated_points("Who do we send freight invoices to?", graph, scores, RecallConfig())
    # the letter's answer, and its line naming the same person again; not its greeting or
    # its signature
    assert set(got) == {answer, again}, got
    assert all(o.newer == new for o in got.values())
    assert greeting not in got and signature not in got


def test_a_value_the_question_names_is_its_subject_not_an_answer() -> None:
    kinds = asked_kinds("Which version fixes TCK-4410?")
    new = "TCK-4410 moved to 5.2.1, the 5.2.0 build only carries the security patch."
    other_ticket = "TCK-4417 refund mails print the amount without decimals."
    assert answers_differ(new, other_ticket, kinds, frozenset({"tck-4410"})) is None
    # the same pair read as two tickets' versions: another version of one ticket still differs
    old = "Fix version: 5.2.0."
    assert answers_differ(new, old, kinds, frozenset({"tck-4410"})) is not None


def test_a_chinese_count_counts_the_noun_in_front_of_its_measure_word() -> None:
    kinds = asked_kinds("新仓要接入多少家供应商？")
    old = "范围：预计接入供应商 40 家，覆盖西南。"
    new = "一期只接26家供应商（成都全部），其余放二期。"
    got = answers_differ(new, old, kinds)
    assert got is not None and got.head == 1.0


def _episode_graph(
    said: list[tuple[str, datetime, datetime, float]],
) -> tuple[Subgraph, dict[uuid.UUID, float], list[uuid.UUID]]:
    """Points memorised at ``written`` (record time = write time: no date of their own), each
    in an episode starting on its day: (text, episode day, written, score)."""
    nodes: dict[uuid.UUID, GraphNode] = {}
    edges, times, scores, ids = [], {}, {}, []
    for text, day, written, score in said:
        ep, facet, p = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
        nodes[ep] = GraphNode(ep, "Episode", name="ticket", time_start=day, created_at=written)
        nodes[facet] = GraphNode(facet, "Facet", name="ticket", created_at=written)
        nodes[p] = GraphNode(p, "FacetPoint", search_text=text, created_at=written,
                             sources=[["k", str(ep), "t", None]])  # fmt: skip
        edges += [GraphEdge(ep, "has_facet", facet), GraphEdge(facet, "has_point", p)]
        times[p] = {"recorded_at": written}
        scores[p] = score
        ids.append(p)
    return Subgraph(nodes=nodes, edges=edges, times=times), scores, ids


def test_undated_sources_are_ordered_by_the_day_their_episodes_start() -> None:
    # The later ticket was memorised first (a folder's order): its write time is earlier.
    graph, scores, (new, old) = _episode_graph([
        ("Going with Vector -> Loki for the app logs now.", NEW_DAY, TODAY, 0.05),
        ("App logs go to Splunk via HEC from every node.", OLD_DAY,
         TODAY.replace(second=30), 0.06),
    ])  # fmt: skip
    got = outdated_points("What do we use for app logs now?", graph, scores, RecallConfig())
    assert set(got) == {old} and got[old].newer == new, got
    assert got[old].day == NEW_DAY.date().isoformat()


def test_numbered_labels_are_values_and_one_form_names_one_kind_of_thing() -> None:
    from memflow.text.values import values

    assert [(v.text, v.family) for v in values("The review is in room 7C, not 7A.")] == [
        ("7C", "code"), ("7A", "code")]  # fmt: skip
    assert [(v.text, v.family) for v in values("评审在6号会议室")] == [("6号", "code")]
    # a day of the month stays a day, with what may follow one
    assert [v.family for v in values("每月18号（原来是22号）")] == ["when", "when"]
    assert [v.family for v in values("请在22号之前交")] == ["when"]
    # a name with a label inside stays one name
    assert [v.text for v in values("new hires get the Lenovo Yoga C9 laptop")][:1] != ["C9"]
    kinds = asked_kinds("周会在哪个会议室？")
    got = answers_differ("不好意思写错了，是8号会议室！", "周会下午三点，在6号会议室", kinds)
    assert got is not None and got.head == 1.0
    got = answers_differ(
        "Apologies, my error: the review is in room 7C, not 7A.",
        "The review meets Friday in room 7A.",
        asked_kinds("Which room is the review in?"),
    )
    assert got is not None


def test_a_subject_named_short_is_the_same_subject() -> None:
    kinds = asked_kinds("When is the Marlow Fund progress report due?")
    new = "Ines says the Fund gave us till Nov 3 for the progress report."
    assert answers_differ(new, "Marlow Fund progress report due 15 October.", kinds) is not None
    # a possessive is the name ("Dr Oduya's practice" / "Dr Oduya")
    moved = "Hi Ana, Dr Oduya is away that week, we've rebooked you for Tue 9 June at 15:10."
    first = "Rang Dr Oduya's practice, got the first slot they had: Thu 4 June, 9:40."
    assert answers_differ(moved, first, asked_kinds("When is my dentist appointment?")) is not None
    # another subject altogether still is another
    other = "Ines says the Harbour Board gave us till Nov 3 for their survey."
    assert answers_differ(other, "Marlow Fund progress report due 15 October.", kinds) is None


def test_a_later_line_recalling_an_earlier_year_outdates_nothing() -> None:
    graph, scores, _ = _graph([
        ("Boat mooring: £310 a quarter, paid on the 2nd.", OLD_DAY, 0.05, "budget"),
        ("Can't believe the mooring was £180 when we first got the boat in 2027.", NEW_DAY, 0.07,
         "chat"),
    ])  # fmt: skip
    assert outdated_points("How much is the mooring?", graph, scores, RecallConfig()) == {}


def test_an_amount_with_its_unit_is_no_word_another_line_item_shares() -> None:
    # a later note raising another line item of the budget does not take up this one
    graph, scores, (travel, *_) = _graph([
        ("差旅：6万元", OLD_DAY, 0.06, "budget"),
        ("设计部 2031年度预算", OLD_DAY, 0.07, "budget"),
        ("团建：2万元", OLD_DAY, 0.12, "budget"),
        ("财务: 培训预算追加到9万元了，已经在系统里调好", NEW_DAY, 0.11, "chat"),
    ])  # fmt: skip
    got = outdated_points("设计部差旅预算多少？", graph, scores, RecallConfig())
    assert travel not in got, got


def test_a_chinese_change_said_of_another_named_thing_closes_nothing() -> None:
    from memflow.text.supersede import PointFact, superseded_by_rules

    old = PointFact(uuid.uuid4(), "目标：11月8日全量上线。", None, OLD_DAY, OLD_DAY)
    other = PointFact(
        uuid.uuid4(), "同步一下：智能排班项目推迟到12月2日上线", "PMO", NEW_DAY, NEW_DAY
    )
    assert superseded_by_rules(other, [old]) == []
    # said of the thing itself, it still closes
    same = PointFact(uuid.uuid4(), "目标推迟到12月2日上线", "PMO", NEW_DAY, NEW_DAY)
    assert superseded_by_rules(same, [old]) != []


def test_which_asks_for_a_name_and_a_day_may_recur_every_month() -> None:
    assert "name" in asked_kinds("我们仓库发货用哪家物流？")
    got = answers_differ("下周一开始发货都走青鸟物流，面单机已经装好", "发货：继续走远帆快运，首重6元",
                         asked_kinds("我们仓库发货用哪家物流？"))  # fmt: skip
    assert got is not None
    got = answers_differ("从本月起报表截止日提前为每月18号（原来是22号）。",
                         "每月报表请在22号之前交到财务。", asked_kinds("每月报表最晚几号交？"))  # fmt: skip
    assert got is not None and got.cued
