"""Changes told in words the rules missed (issue 26, session 12), on invented notes: a form's
field label names nobody; "awaiting" is a state; a number of things named by one word is a count
of them; a version number said without its product is that product's version; "scratch that"
corrects and "X is fine" agrees to X; a product answers no "who"; a statement of another year
than the question's outdates nothing."""

from __future__ import annotations

from memflow.recall.config import RecallConfig
from memflow.recall.present import outdated_points
from memflow.text.conflict import answers_differ, asked_kinds, told_over
from memflow.text.values import values

from .test_present_sources import NEW_DAY, OLD_DAY, _graph


def _kinds(text: str) -> list[tuple[str, str]]:
    return [(v.kind, v.norm) for v in values(text)]


def test_a_field_label_names_nobody_a_speaker_still_does() -> None:
    assert ("name", "deadline") not in _kinds("Deadline: 12 March 2026, noon.")
    assert ("name", "summary") not in _kinds("Summary: laptop will not boot")
    assert ("name", "ben") in _kinds("Ben: the van is booked")
    when = asked_kinds("When is the deadline for the bursary form?")
    got = answers_differ(
        "Oskar checked with the office: forms are now accepted until 2 April.",
        "Deadline: 12 March 2026, noon.",
        when,
    )
    assert got is not None  # "Deadline" is no other subject than Oskar


def test_awaiting_is_a_state() -> None:
    assert ("status", "pending") in _kinds("Status: Awaiting surveyor visit")
    status = asked_kinds("What's the status of the boiler claim?")
    assert answers_differ(
        "boiler claim approved, payout next week", "Status: Awaiting surveyor visit", status
    )


def test_a_number_of_things_named_by_one_word_is_counted() -> None:
    count = asked_kinds("How many Planly licenses do we have?")
    assert answers_differ(
        "Your Planly plan covers 60 licenses from 1 March.", "We have 35 licenses on Planly.", count
    )
    # numbers of two different things are no change of either
    assert not answers_differ(
        "Your Planly plan covers 60 users from 1 March.", "We have 35 licenses on Planly.", count
    )


def test_a_bare_version_number_is_its_products_version() -> None:
    which = asked_kinds("Which version of the maps SDK does the app use?")
    assert told_over(
        "maps SDK is on v5.2.0 now, v4.9.3 leaked memory",
        "Both apps pin Atlasly SDK v4.9.3 in the lockfile",
        which,
    )
    # a version of another product named beside it is no change
    assert not told_over(
        "maps SDK is on v4.9.3, Crashly 2.1.0 is next",
        "Both apps pin Atlasly SDK v4.9.3 in the lockfile",
        which,
    )


def test_a_correction_idiom_and_an_agreed_value_tell_a_change() -> None:
    who = asked_kinds("Who is on call this weekend?")
    got = answers_differ(
        "scratch that - Rosa Lind is on call this weekend, Tamsin is away",
        "On call this weekend: Tamsin Greaves.",
        who,
    )
    assert got is not None and got.cued and not got.agreed
    when = asked_kinds("When is the boiler service?")
    got = answers_differ(
        "Thursday 9 May is fine, I'll be in", "Boiler service booked for 2 May", when
    )
    assert got is not None and got.agreed  # counts only against the best answer (present.py)


def test_a_product_answers_no_who_question() -> None:
    who = asked_kinds("Who owns the payments migration?")
    old = "PAY-12 payments migration Owner: Dana Holt"
    new = "For the business case: Paylane's fee is 1.2% for UK cards."
    assert answers_differ(new, old, who, who=True) is None
    assert ("name", "paylane") in _kinds(new)  # a possessive is no part of the name


def test_another_year_outdates_nothing() -> None:
    graph, scores, (asked, _next) = _graph([
        ("Travel budget for 2031: £4,200 for the team.", OLD_DAY, 0.08, "plan"),
        ("For 2032 I have asked for £5,000 for travel.", NEW_DAY, 0.10, "mail"),
    ])  # fmt: skip
    got = outdated_points("How much is the 2031 travel budget?", graph, scores, RecallConfig())
    assert asked not in got, got
