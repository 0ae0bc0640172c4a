"""A later source that takes the best answer up again (i26-facts4): asked in the present tense,
a later statement among the best recalled that names what the best answer's source says beyond
the question's words, and states another value of a kind that source states, comes first with
its source's other answers (those not naming the old answer first); the older is marked
(RecallConfig.present_mention). Side remarks, proposals and the same value again move nothing."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from memflow.recall.config import RecallConfig
from memflow.recall.present import outdated_points
from memflow.recall.types import GraphNode, Subgraph

OLD_DAY, NEW_DAY = datetime(2025, 2, 3, tzinfo=UTC), datetime(2025, 3, 17, tzinfo=UTC)
QUERY = "Where do crash reports go?"
OLD = "Crash reports from every service are sent to Bugsnag, key in the shared vault."


def _graph(
    texts: list[str], days: list[datetime], dist: list[float], docs: list[str]
) -> tuple[Subgraph, dict[uuid.UUID, float], list[uuid.UUID]]:
    ids = [uuid.uuid4() for _ in texts]
    nodes = {
        i: GraphNode(i, "FacetPoint", search_text=t, created_at=d, sources=[["k", doc, doc, None]])
        for i, t, d, doc in zip(ids, texts, days, docs, strict=True)
    }
    times = {i: {"recorded_at": d} for i, d in zip(ids, days, strict=True)}
    return Subgraph(nodes=nodes, times=times), dict(zip(ids, dist, strict=True)), ids


def test_a_later_source_naming_the_answer_with_another_value_comes_first() -> None:
    new = "The old Bugsnag key in the vault was revoked last week."
    fresh = "Since the audit all crash reports go to Sentry instead."
    graph, scores, (old, named, first) = _graph(
        [OLD, new, fresh], [OLD_DAY, NEW_DAY, NEW_DAY], [0.05, 0.15, 0.17], ["a", "b", "b"]
    )
    got = outdated_points(QUERY, graph, scores, RecallConfig())
    assert set(got) == {old} and got[old].how == "taken up", got
    # The statement that gives the new value without naming the old one leads.
    assert got[old].order == (first, named)
    alone = outdated_points(QUERY, graph, scores, RecallConfig(present_mention=False))
    assert all(o.how != "taken up" for o in alone.values())


def test_side_remarks_proposals_and_the_past_tense_move_nothing() -> None:
    for new in (
        "The Bugsnag dashboard is pinned in the vault channel.",  # no other value
        "If we sent crash reports to Sentry, the Bugsnag key could go.",  # a proposal
    ):
        graph, scores, _ = _graph([OLD, new], [OLD_DAY, NEW_DAY], [0.05, 0.12], ["a", "b"])
        assert outdated_points(QUERY, graph, scores, RecallConfig()) == {}, new
    new = "Since the audit the Bugsnag key is revoked; everything is sent to Sentry."
    graph, scores, _ = _graph([OLD, new], [OLD_DAY, NEW_DAY], [0.05, 0.12], ["a", "b"])
    asked_then = "Where did crash reports go in January?"
    assert all(o.how != "taken up" for o in outdated_points(asked_then, graph, scores,
                                                             RecallConfig()).values())  # fmt: skip


def test_only_the_best_answers_source_is_taken_up() -> None:
    # The best answer is another note: a later note naming the second one's words moves nothing.
    best = "Crash reports go through the error pipeline described in the runbook."
    new = "Since the audit the Bugsnag key is revoked; everything is sent to Sentry."
    graph, scores, _ = _graph(
        [best, OLD, new], [NEW_DAY, OLD_DAY, NEW_DAY], [0.03, 0.10, 0.12], ["r", "a", "b"]
    )
    got = outdated_points(QUERY, graph, scores, RecallConfig())
    assert all(o.how != "taken up" for o in got.values()), got


def test_a_question_naming_a_time_a_plan_was_said_before_asks_what_holds_for_it() -> None:
    query = "What is the reporting plan for Q3?"
    old = "Q3 reporting plan: build our own dashboards, two engineers on it."
    new = "Settled: we buy Lumenboard instead of building our own dashboards."
    may, july = datetime(2025, 5, 20, tzinfo=UTC), datetime(2025, 7, 15, tzinfo=UTC)
    q3 = datetime(2025, 7, 1, tzinfo=UTC)
    graph, scores, (older, _) = _graph([old, new], [may, july], [0.05, 0.12], ["a", "b"])
    got = outdated_points(query, graph, scores, RecallConfig(), dated=True, named=q3)
    assert set(got) == {older}, got
    off = RecallConfig(present_planned=False)
    assert outdated_points(query, graph, scores, off, dated=True, named=q3) == {}
    assert outdated_points(query, graph, scores, RecallConfig(), dated=True) == {}
    # The older said within the time asked about: that time decides, nothing moves.
    graph, scores, _ = _graph([old, new], [july, july.replace(day=20)], [0.05, 0.12], ["a", "b"])
    assert outdated_points(query, graph, scores, RecallConfig(), dated=True, named=q3) == {}


def test_a_modifier_or_another_subject_is_not_another_answer() -> None:
    # "the Stripe account" gives no value of anything; "Rana flies …" is another person's trip.
    for query, old, new in (
        ("Who owns the payroll exports?", "Noor owns the payroll exports for EU and US.",
         "Noor: EU exports run again now that the Stripe account is verified."),
        ("When does Ivo fly to Oslo?", "Ivo flies to Oslo on 3 June for the vendor audit.",
         "Rana flies to Oslo on 5 June for the vendor audit."),
    ):  # fmt: skip
        graph, scores, _ = _graph([old, new], [OLD_DAY, NEW_DAY], [0.05, 0.12], ["a", "b"])
        got = outdated_points(query, graph, scores, RecallConfig())
        assert all(o.how != "taken up" for o in got.values()), (query, got)


def test_a_past_tense_question_naming_a_time_is_left_to_that_time() -> None:
    old = "Q3 reporting plan: build our own dashboards, two engineers on it."
    new = "Settled: we buy Lumenboard instead of building our own dashboards."
    may, july = datetime(2025, 5, 20, tzinfo=UTC), datetime(2025, 7, 15, tzinfo=UTC)
    graph, scores, _ = _graph([old, new], [may, july], [0.05, 0.12], ["a", "b"])
    q3 = datetime(2025, 7, 1, tzinfo=UTC)
    asked = "What did we plan for reporting in Q3?"
    assert outdated_points(asked, graph, scores, RecallConfig(), dated=True, named=q3) == {}
