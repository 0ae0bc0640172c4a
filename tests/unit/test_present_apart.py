"""Two answers to one question worded apart (i26-facts3): the two best recalled statements,
standing apart from the rest, that give different values of the kind asked (a name when the
question names no kind) are two answers (RecallConfig.present_apart); a Chinese amount written
with its sign and a Chinese "extended to" are values and changes (memflow.text)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from memflow.recall.config import RecallConfig
from memflow.recall.present import outdated_points
from memflow.recall.types import GraphNode, Subgraph
from memflow.text.conflict import answers_differ, asked_kinds
from memflow.text.values import values

OLD_DAY, NEW_DAY = datetime(2025, 2, 3, tzinfo=UTC), datetime(2025, 3, 17, tzinfo=UTC)


def _graph(
    texts: list[str], days: list[datetime], dist: list[float]
) -> tuple[Subgraph, dict[uuid.UUID, float], list[uuid.UUID]]:
    ids = [uuid.uuid4() for _ in texts]
    nodes = {
        i: GraphNode(i, "FacetPoint", search_text=t, created_at=d)
        for i, t, d in zip(ids, texts, days, strict=True)
    }
    times = {i: {"recorded_at": d} for i, d in zip(ids, days, strict=True)}
    return Subgraph(nodes=nodes, times=times), dict(zip(ids, dist, strict=True)), ids


OLD = "For the design interns: each one is given a Wacom Intuos Pro on day one."
NEW = "Heads-up for the summer cohort onwards: they receive a Huion Kamvas Pro instead."
OTHER = "Design interns sit with the brand team on the second floor."
QUERY = "What tablet are design interns given?"
# The mechanism alone: the newer also names the older's "Pro" (a source taking it up).
ALONE = RecallConfig(present_mention=False)


def test_the_two_best_answers_apart_from_the_rest_are_two_answers() -> None:
    days = [OLD_DAY, NEW_DAY, NEW_DAY]
    graph, scores, (old, new, _) = _graph([OLD, NEW, OTHER], days, [0.10, 0.14, 0.22])
    got = outdated_points(QUERY, graph, scores, ALONE)
    assert set(got) == {old} and got[old].newer == new and got[old].how == "apart", got
    assert (
        outdated_points(QUERY, graph, scores, ALONE.model_copy(update={"present_apart": 0})) == {}
    )


def test_an_unrelated_newer_statement_close_to_the_answer_never_overtakes_it() -> None:
    # A third statement as near as the two: they no longer stand apart, nothing moves.
    days = [OLD_DAY, NEW_DAY, NEW_DAY]
    graph, scores, _ = _graph([OLD, NEW, OTHER], days, [0.10, 0.14, 0.15])
    assert outdated_points(QUERY, graph, scores, ALONE) == {}
    # The best two apart, the newer naming nothing: no value, no pair.
    graph, scores, _ = _graph([OLD, OTHER, NEW], days, [0.10, 0.14, 0.22])
    assert outdated_points(QUERY, graph, scores, ALONE) == {}
    # The same day: not two dates, not a change.
    graph, scores, _ = _graph([OLD, NEW, OTHER], [OLD_DAY] * 3, [0.10, 0.14, 0.22])
    assert outdated_points(QUERY, graph, scores, ALONE) == {}
    # With every mechanism on, the unrelated statement still never comes first.
    graph, scores, (_, other, _) = _graph([OLD, OTHER, NEW], days, [0.10, 0.14, 0.15])
    assert all(
        o.newer != other for o in outdated_points(QUERY, graph, scores, RecallConfig()).values()
    )


def test_a_chinese_amount_with_its_sign_is_money_and_a_change() -> None:
    assert [(v.kind, v.norm) for v in values("仓库租金 ¥8,400，含物业")] == [
        ("amount:money", "8400")
    ]
    assert [v.kind for v in values("押金 ¥500 元")] == ["amount:money"]  # once, by its unit
    old, new = "阿彬: 仓库租金 ¥8,400，含物业", "阿彬: 续约以后改成 ¥7,600/月，物业另算"
    assert answers_differ(new, old, asked_kinds("仓库每月租金多少？")) is not None


def test_a_chinese_deadline_extended_to_another_day_is_a_change() -> None:
    old = "报名截止：5月9日 18:00，线上提交。"
    new = "主办方来信，报名时间延至5月16日18:00，名额不变。"
    got = answers_differ(new, old, asked_kinds("夏令营报名什么时候截止？"))
    assert got is not None and got.cued


def test_a_chinese_person_who_takes_a_role_or_leads_is_a_name() -> None:
    old = "通知:仓储组组长由邱雨桐担任,下月生效"
    new = "下周一起仓储组这边由葛一鸣带,雨桐去做采购了"
    assert [v.norm for v in values(old) if v.kind == "name:person"] == ["邱雨桐"]
    assert [v.norm for v in values(new) if v.kind == "name:person"] == ["葛一鸣"]
    assert answers_differ(new, old, asked_kinds("仓储组组长是谁？")) is not None
