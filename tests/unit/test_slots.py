"""Values no form marks (issue 26, memflow.text.slots): a lower-case product or setting in a
value slot, the one span two statements of one thing differ in, and "Owner: X" templates of
two documents about two things. Invented subjects only."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from memflow.recall.config import RecallConfig
from memflow.recall.present import outdated_points
from memflow.recall.types import GraphEdge, GraphNode, Subgraph
from memflow.text.conflict import difference
from memflow.text.slots import aligned_words, same_topic, slot_terms, template

OLD_DAY, NEW_DAY = datetime(2025, 2, 3, tzinfo=UTC), datetime(2025, 3, 17, tzinfo=UTC)


def test_a_lower_case_word_where_a_value_stands_is_a_value() -> None:
    assert [v.norm for v in slot_terms("the nightly export now runs on duckdb")] == ["duckdb"]
    assert [v.norm for v in slot_terms("we switched the cache to valkey last sprint")] == ["valkey"]
    assert [v.norm for v in slot_terms("Uploads go through imgproxy first")] == ["imgproxy"]
    # Typed values, function words and change words are not terms.
    assert slot_terms("The review is on 14 March.") == []
    assert slot_terms("it is now switched off") == []
    assert slot_terms("缩略图任务走 nats") == []  # Chinese: aligned_change reads it


def test_one_statement_but_for_one_span_gives_the_two_values() -> None:
    assert aligned_words("The archive codec is now lz4.", "The archive codec is brotli.") == (
        "brotli",
        "lz4",
    )
    assert aligned_words("Metrics are scraped by vmagent.", "Metrics are scraped by telegraf.")
    # A word in front of a noun is what the statement is about, not its value.
    assert aligned_words("The code freeze is on Friday.", "The design freeze is on Friday.") is None
    assert aligned_words("Metrics are scraped by vmagent.", "Logs are shipped by vector.") is None
    assert aligned_words("codec lz4", "codec brotli") is None  # too short to say of what


def test_a_changed_lower_case_value_is_a_change_of_kind_term() -> None:
    got = difference("The archive codec is now lz4.", "The archive codec is brotli.")
    assert got is not None and (got.kind, got.old, got.new, got.cued) == (
        "term",
        "brotli",
        "lz4",
        True,
    )
    uncued = difference("Metrics are scraped by vmagent.", "Metrics are scraped by telegraf.")
    assert uncued is not None and not uncued.cued and uncued.head == 1.0


def test_an_owner_line_needs_its_documents_to_share_a_topic() -> None:
    assert template("Owner: Baptiste", 2) and template("负责人：欧阳澜", 2)
    assert not template("园区门禁改造：负责人 欧阳澜", 2)
    args = ("Owner: Ottilie", "Owner: Baptiste")
    assert not same_topic(*args, "Canteen menu rotation", "Greenhouse sensor rollout", 2)
    assert same_topic(*args, "Lantern app handover", "Lantern app kickoff", 2)
    assert same_topic(*args, "", "Greenhouse sensor rollout", 2)  # unknown: may be
    # Not one template: a short correction pairs whatever its document.
    assert same_topic("Correction: 10:40, not 10:20.", "Stand-up 10:00 in room 2", "a", "b", 2)


def _graph(
    texts: list[str], days: list[datetime], dist: list[float], titles: list[str]
) -> tuple[Subgraph, dict[uuid.UUID, float], list[uuid.UUID]]:
    ids = [uuid.uuid4() for _ in texts]
    nodes = {
        i: GraphNode(
            i, "FacetPoint", search_text=t, created_at=d, sources=[["k", title, "s", None]]
        )
        for i, t, d, title in zip(ids, texts, days, titles, strict=True)
    }
    edges = []
    for i, title in zip(ids, titles, strict=True):
        ep = uuid.uuid4()
        nodes[ep] = GraphNode(ep, "Episode", name=title)
        edges.append(GraphEdge(ep, "has_point", i))
    times = {i: {"recorded_at": d} for i, d in zip(ids, days, strict=True)}
    return Subgraph(nodes=nodes, edges=edges, times=times), dict(zip(ids, dist, strict=True)), ids


def test_a_lower_case_value_said_to_hold_now_outdates_the_older_one() -> None:
    query = "Which queue do the invoice jobs use?"
    old = "invoice jobs go through beanstalkd, one tube per tenant"
    new = "invoice jobs run on nats now, the beanstalkd box is switched off"
    graph, scores, (older, _) = _graph(
        [old, new], [OLD_DAY, NEW_DAY], [0.05, 0.07], ["billing chat", "billing chat"]
    )
    got = outdated_points(query, graph, scores, RecallConfig())
    assert set(got) == {older}, got
    # An unrelated statement with a word in a slot is not the older value of anything.
    other = "Watch the queue dashboard for ten minutes, tickets in #billing."
    graph, scores, _ = _graph(
        [other, new], [OLD_DAY, NEW_DAY], [0.05, 0.07], ["runbook", "billing chat"]
    )
    assert outdated_points(query, graph, scores, RecallConfig()) == {}


def test_owner_lines_of_two_unrelated_notes_mark_nothing() -> None:
    query = "Who owns the greenhouse sensor rollout?"
    graph, scores, _ = _graph(
        ["Owner: Baptiste", "Owner: Ottilie"],
        [OLD_DAY, NEW_DAY],
        [0.05, 0.06],
        ["Greenhouse sensor rollout", "Canteen menu rotation"],
    )
    assert outdated_points(query, graph, scores, RecallConfig()) == {}
    graph, scores, (older, _) = _graph(
        ["Owner: Baptiste", "Owner: Ottilie"],
        [OLD_DAY, NEW_DAY],
        [0.05, 0.06],
        ["Greenhouse sensor kickoff", "Greenhouse sensor handover"],
    )
    assert set(outdated_points(query, graph, scores, RecallConfig())) == {older}


def test_the_write_path_closes_or_links_a_term_only_when_the_newer_says_it_changed() -> None:
    from memflow.store.conflicts import ConflictSettings, decide

    s = ConflictSettings()
    cued = difference("The archive codec is now lz4.", "The archive codec is brotli.")
    uncued = difference("Metrics are scraped by vmagent.", "Metrics are scraped by telegraf.")
    assert cued is not None and uncued is not None
    assert decide(cued, 0.9, 0.95, s) == "close"
    assert decide(uncued, 0.9, 0.99, s) is None  # "that's great" / "that's awesome": no link


def test_a_link_between_owner_clauses_of_two_unrelated_notes_marks_nothing() -> None:
    """The write path linked "…, owner: X" and "Owner: Y" of two notes about two things (issue
    29, bilingual tune: a budget's owner and a survey's); a clause of each is one template, so
    the newer does not take the older's place, unless the notes share a topic."""
    from memflow.text.slots import _template_clauses

    assert _template_clauses("总额 35万，负责人：欧阳澜。", 2) >= _template_clauses(
        "负责人：田野。", 2
    )
    # as a search reads them (NFKC-folded punctuation)
    assert "负责人:[person]" in _template_clauses("总额 35万,负责人:欧阳澜。", 2)
    assert not same_topic(
        "总额 35万，负责人：欧阳澜。",
        "负责人：田野。",
        "园区食堂预算",
        "数据备份演练",
        2,
        clauses=True,
    )
    # the whole statements are not one template: without clauses they may speak of one thing
    assert same_topic(
        "总额 35万，负责人：欧阳澜。", "负责人：田野。", "园区食堂预算", "数据备份演练", 2
    )
    query = "What does the greenhouse budget pay for?"
    texts = ["Total 12,000 EUR. Owner: Baptiste.", "Owner: Ottilie."]
    for titles, marked in (
        (["Greenhouse budget", "Canteen menu rotation"], False),
        (["Greenhouse budget", "Greenhouse budget review"], True),
    ):
        graph, scores, (older, newer) = _graph(texts, [OLD_DAY, NEW_DAY], [0.05, 0.06], titles)
        graph.links = {older: ((newer, "restated_by"),), newer: ((older, "restates"),)}
        got = outdated_points(query, graph, scores, RecallConfig())
        assert set(got) == ({older} if marked else set()), (titles, got)
