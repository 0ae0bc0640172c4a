"""Changes told in words no change rule names (issue 26, session 11), on invented notes: a
newer statement naming the old value and the new one; phone numbers, booking sizes and numbered
rooms as values; a statement about another period than the question's answers nothing of it; a
change of one item of a quote leaves its other items alone; a repeated greeting outdates nothing;
a note's period heading does not move the day the note was written."""

from __future__ import annotations

from datetime import UTC, datetime

from memflow.recall.config import RecallConfig
from memflow.recall.present import outdated_points
from memflow.text.conflict import asked_kinds, told_over
from memflow.text.dating import source_dated
from memflow.text.document import Chunk
from memflow.text.values import values

from .test_present_sources import NEW_DAY, OLD_DAY, _graph


def _kinds(text: str) -> list[tuple[str, str]]:
    return [(v.kind, v.norm) for v in values(text)]


def test_phone_numbers_are_values_with_a_telephone_named() -> None:
    assert _kinds("Ring the depot on 0161-555-0199 before noon.") == [
        ("phone", "01615550199"),
        ("clock", "12:00"),  # (a time of day in words)
    ]
    assert ("phone", "13800001111") in _kinds("前台电话 138 0000 1111，工作日有人")
    assert ("phone", "13800001111") in _kinds("新号码13800001111")
    # digits in groups that no telephone word names, and years, are no phone
    assert not [k for k, _ in _kinds("batches 4411 2290 were late") if k == "phone"]
    assert not [k for k, _ in _kinds("the 2027 2028 2029 plans") if k == "phone"]
    assert "phone" in asked_kinds("What is the plumber's phone number?")
    assert "phone" in asked_kinds("前台的电话是多少？")


def test_a_booking_size_and_a_numbered_room_are_values() -> None:
    assert ("count", "7") in _kinds("Booked the Lantern for Friday, table for 7")
    assert ("code", "3.14") in _kinds("Retro in room 3.14 this week")
    assert not [k for k, _ in _kinds("Retro in room 3.14 this week") if k == "version"]


def test_a_newer_statement_naming_both_values_tells_a_change() -> None:
    count = asked_kinds("How many seats are booked?")
    assert told_over("they moved us to a table for 11 instead of the table for 8",
                     "booked the Lantern, table for 8", count)  # fmt: skip
    room = asked_kinds("Which room is the retro in?")
    assert told_over("retro in 1.09 from now on, 3.14 is taken by finance",
                     "Retro: Thursdays, room 3.14", room)  # fmt: skip
    phone = asked_kinds("前台的电话是多少？")
    assert told_over("前台换号了，以后打 139 2222 3333，原来 138 0000 1111 不用了",
                     "前台电话 138 0000 1111", phone)  # fmt: skip
    # a hedge or a question states nothing; a quote of three prices changes none of them
    when = asked_kinds("When is the fair?")
    assert not told_over("is the fair still on the 9th? it might move to the 16th",
                         "The fair is on the 9th.", when)  # fmt: skip
    money = asked_kinds("How much is the desk?")
    assert not told_over("desk £420, chair £180, lamp £60", "desk £420", money)
    # names are not numbers: a product named beside another is no change of owner
    who = asked_kinds("Who owns billing?")
    assert not told_over("Android build works now that the Google key is back.",
                         "Priya owns billing for Android.", who)  # fmt: skip


def test_another_period_answers_nothing_of_the_one_asked() -> None:
    graph, scores, (asked, _other) = _graph([
        ("Q3 training budget: $12,000.", OLD_DAY, 0.08, "plan"),
        ("Q2 training spend closed at $9,870.", NEW_DAY, 0.10, "actuals"),
    ])  # fmt: skip
    got = outdated_points("How much is the Q3 training budget?", graph, scores, RecallConfig())
    assert asked not in got, got


def test_a_changed_item_leaves_the_other_items_of_a_quote_alone() -> None:
    graph, scores, (desk, _lamp, _change) = _graph([
        ("walnut desk, assembled: £640", OLD_DAY, 0.09, "quote"),
        ("Anglepoise lamp: £95", OLD_DAY, 0.19, "quote"),
        ("The lamp maker raised prices, so the Anglepoise lamp is now £120.", NEW_DAY, 0.15, "mail"),
    ])  # fmt: skip
    got = outdated_points("How much is the desk in the office quote?", graph, scores,
                          RecallConfig())  # fmt: skip
    assert desk not in got, got


def test_a_greeting_said_again_outdates_nothing() -> None:
    graph, scores, (hi_old, _hi_new) = _graph([
        ("Hi Marguerite,", OLD_DAY, 0.10, "first"),
        ("Hi Marguerite,", NEW_DAY, 0.11, "second"),
    ])  # fmt: skip
    got = outdated_points("Who is the contact?", graph, scores, RecallConfig())
    assert hi_old not in got, got


def test_a_period_heading_does_not_move_the_day_a_note_was_written() -> None:
    chunks = [Chunk(index=0, key="s0", text="Budget ask: $30k.", section="Planning > Q3")]
    (got,) = source_dated(chunks, ["Planning", "2031-05-06 planning.md"], NEW_DAY)
    assert got.timestamp is not None and got.timestamp.date().isoformat() == "2031-05-06"
    # a note dated by a year only: the section's period says when more precisely
    (got,) = source_dated(chunks, ["Planning", "2031 planning.md"], NEW_DAY)
    assert got.timestamp is not None and got.timestamp.date().isoformat() == "2031-07-01"


def test_words_read_as_they_are_meant() -> None:
    from memflow.text.conflict import difference
    from memflow.text.dating import document_head

    # "still missing Oona's list": something of hers is awaited, she did not leave
    got = difference("still missing Oona's list for the trip", "Going: Oona, Piet, Saar")
    assert got is None or got.how != "departure", got
    left = difference("still missing Oona for the trip", "Going: Oona, Piet, Saar")
    assert left is not None and left.how == "departure", left
    # 改签 rebooks a ticket; no contract was signed
    assert not [k for k, _ in _kinds("车票改签了，周五走") if k == "status"]
    assert asked_kinds("周五回杭州坐哪趟车？") >= {"name"}
    # a weekday is no name ("open later on Thursdays")
    assert not [
        k for k, _ in _kinds("we start at 8 now, open later on Thursdays") if k.startswith("name")
    ]
    head = document_head("工单 OPS-12 扩容\n创建：2031-02-03  申请人：某人\n\n申请 4 台机器。")
    assert (
        head is not None
        and head.written is not None
        and head.written.date().isoformat() == "2031-02-03"
    )


def test_a_later_day_of_a_chat_is_no_other_item_of_it() -> None:
    mid = datetime(2031, 3, 20, tzinfo=UTC)
    graph, scores, (old, _new, _later) = _graph([
        ("I pay 40 euros a month for the climbing gym.", OLD_DAY, 0.05, "chat"),
        ("The climbing gym put its card up, it is 55 euros now.", mid, 0.07, "chat"),
        ("55 euros a month for the card, still worth it.", NEW_DAY, 0.06, "chat"),
    ])  # fmt: skip
    got = outdated_points("How much does the climbing gym cost each month?", graph, scores,
                          RecallConfig())  # fmt: skip
    assert old in got, got


def test_a_helper_and_another_project_answer_nothing() -> None:
    graph, scores, (owner, _helper) = _graph([
        ("Vendor review: owner Ines Halloran.", OLD_DAY, 0.08, "register"),
        ("Hi all, Bartek will help me with the vendor review this month.", NEW_DAY, 0.10, "mail"),
    ])  # fmt: skip
    assert owner not in outdated_points("Who owns the vendor review?", graph, scores,
                                        RecallConfig())  # fmt: skip
    graph, scores, (target, _other) = _graph([
        ("目标：11月3日上线。", OLD_DAY, 0.08, "plan"),
        ("同步：票务系统推迟到12月1日上线。", NEW_DAY, 0.09, "chat"),
    ])  # fmt: skip
    assert target not in outdated_points("门店会员项目什么时候上线？", graph, scores,
                                         RecallConfig())  # fmt: skip
