"""Facts that change, session 16: two sources answering one question with different values mark
the older when they share a word (one thing told twice), and only order it when they share
none; Chinese values stated per head or per unit ("人均200"), versions stated where they are
released ("发布 v1.9.0"), and rooms by floor and number ("5楼0512", "1203室")."""

from __future__ import annotations

from datetime import UTC, datetime

from memflow.recall.config import RecallConfig
from memflow.recall.present import outdated_points
from memflow.text.conflict import answers_differ, asked_kinds
from memflow.text.dating import text_time
from memflow.text.values import values

from .test_present_sources import NEW_DAY, OLD_DAY, _graph


def test_two_sources_sharing_a_word_mark_the_older() -> None:
    query = "Who teaches the Saturday pottery class?"
    said = [
        ("Pottery class: Saturdays 10-12 in the barn studio, taught by Imre Solvang.", OLD_DAY,
         0.10, "leaflet"),
        ("Clay and glazes are included; aprons on the hooks.", OLD_DAY, 0.15, "leaflet"),
        ("Odile took the class today and says she has Saturdays until the summer; Imre is away.",
         NEW_DAY, 0.14, "chat"),
    ]  # fmt: skip
    graph, scores, (old, _, new) = _graph(said)
    got = outdated_points(query, graph, scores, RecallConfig())
    assert old in got and got[old].newer == new and got[old].how == "rival"
    assert got[old].marked


def test_an_amount_per_head_is_stated() -> None:
    money = asked_kinds("聚餐人均多少钱？")
    assert answers_differ(
        "聚餐预算定了，人均200，多的自己出", "地点：江边餐厅 人均预算：260元，含酒水", money
    )
    # a per-head figure the older gives as well is no new value
    assert not answers_differ(
        "聚餐预算定了，人均260，多的自己出", "地点：江边餐厅 人均预算：260元", money
    )


def test_a_version_after_its_release_is_stated() -> None:
    which = asked_kinds("支付服务现在是哪个版本？")
    assert answers_differ(
        "晚上十点 支付服务发布 v1.9.0 开始灰度", "当前版本：支付服务 v1.8.2", which
    )


def test_a_room_by_floor_and_number_is_a_code() -> None:
    assert [(v.kind, v.norm) for v in values("周会：周二上午十点，5楼0512，自带电脑")][-1] == (
        "code",
        "5楼0512",
    )
    assert ("code", "1203") in [(v.kind, v.norm) for v in values("面试改在1203室")]
    # a floor alone, or a count of floors, names no room
    assert not [v for v in values("公司在5楼") if v.kind == "code"]
    which = asked_kinds("周会在哪个会议室？")
    assert answers_differ(
        "周会：周二上午十点，5楼0512，自带电脑",
        "周会定在周二上午十点，3楼0308会议室，每人讲5分钟",
        which,
    )


def test_thousands_written_k_in_a_chinese_chat_are_money() -> None:
    assert [(v.kind, v.norm) for v in values("刚交了学费，3.1k，说是")] == [
        ("amount:money", "3100 元")
    ]
    assert [(v.kind, v.norm) for v in values("房租涨到3.5k")] == [("amount:money", "3500 元")]


def test_a_version_after_a_name_the_older_gives_is_stated() -> None:
    which = asked_kinds("点餐系统是哪个版本？")
    new, old = "点餐系统 v2.3.0 今天上线", "系统：点餐系统 | 版本：v2.2.5 | 备注：月初升级"
    assert answers_differ(new, old, which)
    # after a name the older does not give: another thing's version
    assert not answers_differ("会员系统 v2.3.0 今天上线", old, which)


def test_a_value_of_another_row_named_again_outdates_no_row() -> None:
    graph, scores, (ours, theirs, named) = _graph([
        ("系统：库存系统 | 版本：v5.0.1 | 备注：每晚同步", OLD_DAY, 0.06, "table"),
        ("系统：点餐系统 | 版本：v2.2.5 | 备注：月初升级", OLD_DAY, 0.05, "table"),
        ("v2.2.5 之后不再提供补丁。", NEW_DAY, 0.07, "notes"),
    ])  # fmt: skip
    got = outdated_points("库存系统是哪个版本？", graph, scores, RecallConfig())
    assert ours not in got and theirs not in got
    # a version nobody's row gives is a new value of the row asked of
    graph, scores, (ours, _, named) = _graph([
        ("系统：库存系统 | 版本：v5.0.1 | 备注：每晚同步", OLD_DAY, 0.06, "table"),
        ("系统：点餐系统 | 版本：v2.2.5 | 备注：月初升级", OLD_DAY, 0.05, "table"),
        ("库存系统 v5.1.0 今天推送。", NEW_DAY, 0.04, "notes"),
    ])  # fmt: skip
    got = outdated_points("库存系统是哪个版本？", graph, scores, RecallConfig())
    assert ours in got and got[ours].newer == named


def test_a_source_answers_by_its_best_line_giving_a_value_asked() -> None:
    query = "How much is a term of judo at the Harbour club now?"
    said = [
        ("Judo (Harbour club, Level 3, Tue 6pm): £84 for the term, pay by 3 Oct", NEW_DAY,
         0.06, "mail"),
        ("Harbour Judo Club", OLD_DAY, 0.10, "leaflet"),
        ("Autumn term (10 weeks) for Level 2 is £70, due by 1 May.", OLD_DAY, 0.15,
         "leaflet"),
    ]  # fmt: skip
    graph, scores, (new, _, old) = _graph(said)
    got = outdated_points(query, graph, scores, RecallConfig())
    assert old in got and got[old].newer == new


def test_which_kind_of_tool_asks_for_a_name() -> None:
    for query in (
        "Which ticketing system does support use?",
        "What CI do the mobile repos run on?",
        "Which shipping courier do we use for returns?",
    ):
        assert "name" in asked_kinds(query), query
    # a thing of no such kind, or "what" far from the noun, asks for no name
    assert asked_kinds("Which book did she like best?") == frozenset()
    assert asked_kinds("What did Ines say about the system?") == frozenset()
    graph, scores, (old, new) = _graph([
        ("Support tickets go through Deskwell; ask Omar for a seat.", OLD_DAY, 0.10, "wiki"),
        ("Ops: fyi support moved to Tiketto today, Deskwell seats end Friday.", NEW_DAY, 0.11,
         "chat"),
    ])  # fmt: skip
    got = outdated_points("Which ticketing system does support use?", graph, scores,
                          RecallConfig())  # fmt: skip
    assert old in got and got[old].newer == new and got[old].marked


def test_chinese_values_after_a_label_folded_to_ascii_punctuation() -> None:
    # notes come NFKC-folded: a full-width colon, comma and brackets are ASCII ones
    assert [v.norm for v in values("二、开放时间:9:30—17:00") if v.kind == "clock"] == [
        "09:30",
        "17:00",
    ]
    assert ("amount:money", "13800 元") in [
        (v.kind, v.norm) for v in values("项目: 厨房改造 | 金额(元): 13,800 | 备注: 含台面")
    ]
    assert ("amount:money", "38000 元") in [(v.kind, v.norm) for v in values("合计: 38,000")]
    # a comma groups thousands only before three digits: two numbers, not one
    assert [(v.kind, v.norm) for v in values("地砖 600×600,42元/片")] == [("amount:money", "42 元")]


def test_a_chinese_person_in_a_form_field_or_before_a_title() -> None:
    assert [(v.kind, v.norm) for v in values("医生:林青禾(副主任医师)")] == [
        ("name:person", "林青禾")
    ]
    assert ("name:person", "蒙晓舟") in [
        (v.kind, v.norm) for v in values("下周复查,我约了蒙晓舟医生的号")
    ]
    who = asked_kinds("复诊看哪位医生？")
    assert answers_differ("下周复查,我约了蒙晓舟医生的号", "医生:林青禾(副主任医师)", who)


def test_two_sources_sharing_only_the_questions_words_only_order() -> None:
    query = "Where does the choir rehearse on Mondays?"
    said = [
        ("Mae: choir tonight 7pm at the Marlow Hall, side room, I've booked it", OLD_DAY, 0.10,
         "chat"),
        ("Bring water.", OLD_DAY, 0.15, "chat"),
        ("Name ideas: Choir Pressure, Vocal Point, Treble Makers.", NEW_DAY, 0.12, "notes"),
    ]  # fmt: skip
    graph, scores, (old, _, new) = _graph(said)
    got = outdated_points(query, graph, scores, RecallConfig())
    assert old in got and got[old].newer == new and got[old].how == "rival"
    assert not got[old].marked


def test_a_yearless_heading_takes_its_year_from_the_file_name() -> None:
    now = datetime(2032, 1, 5, tzinfo=UTC)
    got = text_time(["Roster (10 Nov)", None, "2030-11-10 roster.md"], "Desk: Ana", now)
    assert got is not None and got.start.date().isoformat() == "2030-11-10"


def test_a_title_naming_a_period_yields_to_the_day_the_mail_was_sent() -> None:
    now = datetime(2032, 1, 5, tzinfo=UTC)
    sent = datetime(2030, 12, 8, 2, tzinfo=UTC)
    got = text_time(["【通知】2030年度聚餐安排"], "聚餐定于2031年1月10日晚", now, written=sent)
    assert got is not None and got.start.date().isoformat() == "2030-12-08"
