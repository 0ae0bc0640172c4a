"""Query-aware unit rules (memflow.recall.unitrules) with parsed speakers in English and Chinese,
and their effect through the pipeline's evidence on evidence_units."""

from __future__ import annotations

import pytest

from memflow.recall.config import RecallConfig
from memflow.recall.pipeline import score_hits
from memflow.recall.render import evidence_units
from memflow.recall.scoring import RelationshipIndex, score_bundles
from memflow.recall.types import Bundle, Hit
from memflow.recall.unitrules import (
    QueryRules,
    body_of,
    is_decision,
    is_small_talk,
    title_matches,
)
from memflow.text.terms import content_terms

from .test_scoring import G, nid

CFG = RecallConfig()
ADA, TOMAS = "Dr Ada Lin", "Tomas Berg"
WANG, LI = "王芳", "李雷"
SPEAKERS = [ADA, TOMAS, WANG, LI, None]

FACT = ("Dr Ada Lin: I painted the harbour at dawn.", ADA)
VOCATIVE = ("Tomas Berg: Thanks, Ada! Lovely work.", TOMAS)
QUESTION = ("Dr Ada Lin: Are you coming tomorrow?", ADA)
DOCUMENT = ("Owner: Priya owns the migration.", None)


def adjust(query: str, unit: tuple[str, str | None], config: RecallConfig = CFG) -> float:
    return QueryRules.build(query, SPEAKERS).adjustment(unit[0], unit[1], config)


def test_body_of_strips_only_the_parsed_speaker() -> None:
    assert body_of(FACT[0], ADA) == "I painted the harbour at dawn."
    assert body_of("王芳：我周末在海边画了日出。", WANG) == "我周末在海边画了日出。"
    assert body_of(DOCUMENT[0], None) == DOCUMENT[0]
    assert body_of(VOCATIVE[0], ADA) == VOCATIVE[0]  # another speaker's prefix stays
    assert body_of("Dr Ada Linton: hello", ADA) == "Dr Ada Linton: hello"


def test_build_names_speakers_and_keeps_content_terms() -> None:
    rules = QueryRules.build("What did Ada paint at the harbour?", SPEAKERS)
    assert rules.named == {ADA}
    assert rules.terms == {"paint", "harbo"}  # the name's terms are not content
    assert QueryRules.build("What did Tomas Berg buy?", SPEAKERS).named == {TOMAS}
    assert QueryRules.build("王芳周末在海边画了什么？", SPEAKERS).named == {WANG}
    assert QueryRules.build("王芳和李雷聊了什么？", SPEAKERS).named == {WANG, LI}
    assert QueryRules.build("Who painted the harbour?", SPEAKERS).named == frozenset()


def test_english_adjustments() -> None:
    q = "What did Ada paint at the harbour?"
    assert adjust(q, FACT) == pytest.approx(-0.04)  # painted, harbour: 2 x -0.02
    assert adjust(q, VOCATIVE) == pytest.approx(0.05)  # another speaker names her
    assert adjust(q, QUESTION) == pytest.approx(0.02)  # the named speaker only asks
    # A document line: "Owner:" is not a parsed speaker, and a line without one is never
    # penalised, not even as a question; shared terms still count (that it records an owner
    # counts among the evidence units only).
    assert adjust(q, DOCUMENT) == 0.0
    assert adjust("Who owns the migration, Ada?", DOCUMENT) == pytest.approx(-0.04)
    assert adjust(q, ("Is the harbour open?", None)) == pytest.approx(-0.02)


def test_chinese_adjustments() -> None:
    q = "王芳周末在海边画了什么？"
    fact = ("王芳：我周末在海边画了日出。", WANG)
    vocative = ("李雷：王芳，画得真好！", LI)
    question = ("王芳：你明天来吗？", WANG)
    # 周末, 在海, 海边, 边画, 画了 … shared: capped at 2 terms
    assert adjust(q, fact) == pytest.approx(-0.04)
    assert adjust(q, vocative) == pytest.approx(0.05)
    assert adjust(q, question) == pytest.approx(0.02)  # a full-width question mark
    assert adjust("谁在海边画画？", vocative) == 0.0  # nobody named, nothing shared
    assert adjust("谁在海边画画？", ("海边的日出很美。", None)) == pytest.approx(-0.02)


def test_only_turns_with_a_speaker_are_question_turns() -> None:
    q = "Who painted the harbour?"  # nobody named: no speaker penalty either
    assert adjust(q, ("Tomas Berg: Are you free on Friday?", TOMAS)) == pytest.approx(0.02)
    assert adjust(q, ("Are you free on Friday?", None)) == 0.0
    assert adjust(q, VOCATIVE) == 0.0


def test_rules_follow_the_config() -> None:
    q = "What did Ada paint at the harbour?"
    assert adjust(q, FACT, RecallConfig(term_overlap_cap=1)) == pytest.approx(-0.02)
    assert adjust(q, FACT, RecallConfig(term_overlap_cap=0)) == 0.0
    assert adjust(q, VOCATIVE, RecallConfig(speaker_penalty=0.2)) == pytest.approx(0.2)
    off = RecallConfig(
        speaker_penalty=0, term_overlap_bonus=0, question_turn_penalty=0, decision_bonus=0
    )
    for unit in (FACT, VOCATIVE, QUESTION, DOCUMENT):
        assert adjust(q, unit, off) == 0.0


def test_rules_reorder_evidence_units_through_the_pipeline() -> None:
    g = G()
    g.node("Ep", "Episode")
    g.node("f", "Facet")
    g.edge("Ep", "has_facet", "f")
    turns = {"p0": FACT, "p1": VOCATIVE, "p2": QUESTION, "p3": DOCUMENT}
    # The vocative turn is the closest by embedding, the factual one the farthest.
    dist = {"p0": 0.30, "p1": 0.27, "p2": 0.28, "p3": 0.29}
    hits = []
    for name, (text, speaker) in turns.items():
        g.node(name, "FacetPoint", search_text=text, speaker=speaker)
        g.edge("f", "has_point", name)
        hits.append(
            Hit(
                collection="FacetPoint_search_text",
                node_id=nid(name),
                text=text,
                distance=dist[name],
            )
        )
    scored = score_hits(hits, None, CFG)
    index = RelationshipIndex.build(g.sub())
    bundles = [Bundle(episode_id=nid("Ep"), score=0.0, best_path="point")]
    plain = evidence_units(bundles, index, scored.evidence(g.sub(), None, CFG), CFG)
    # Without a query only the owner's statement moves: 0.29 - 0.05 (decision_bonus).
    assert [u.node_id for u in plain] == [nid("p3"), nid("p1"), nid("p2"), nid("p0")]
    ev = scored.evidence(g.sub(), "What did Ada paint at the harbour?", CFG)
    assert dict(ev.unit_adjust) == {
        nid("p0"): pytest.approx(-0.04),
        nid("p1"): pytest.approx(0.05),
        nid("p2"): pytest.approx(0.02),
    }
    ruled = evidence_units(bundles, index, ev, CFG)
    # p3 0.29 - 0.05 for an owner, p0 0.26, p2 0.30, p1 0.32 (+ the same facet window
    # 0.1 * 0.27 for all)
    assert [u.node_id for u in ruled] == [nid("p3"), nid("p0"), nid("p2"), nid("p1")]
    assert ruled[1].rank_score == pytest.approx(0.26 + 0.027)


@pytest.mark.parametrize(
    "text",
    [
        "Decision: we adopt 90 days starting 1 November 2024.",
        "- Owner: Lena Park",
        "Lena Park owns the change.",
        "We agreed to freeze releases on Fridays.",
        "决定：采用 SSE。",
        "张伟负责服务端改造。",
        "负责人：李娜",
    ],
)
def test_decisions_and_owners_are_recognised(text: str) -> None:
    assert is_decision(text)


@pytest.mark.parametrize(
    "text",
    [
        "Next step: book the on-call rotation for the week of the switch.",
        "I can't decide between the two hotels.",  # no decision recorded
        "The owner's manual is in the drawer.",
        "我们明天去爬山。",
    ],
)
def test_other_statements_are_not_decisions(text: str) -> None:
    assert not is_decision(text)


def test_facet_titles_that_name_the_query_aspect() -> None:
    zh = content_terms("API 流式返回改造有哪些约束？")
    assert title_matches(zh, "约束") and not title_matches(zh, "背景")
    en = content_terms("What are the risks of the migration?")
    assert title_matches(en, "Risks")
    assert not title_matches(en, "Plan") and not title_matches(en, "")
    # A keyword list matches only a query that uses every keyword.
    assert not title_matches(en, "Risks, backfill, night")


def test_a_facet_whose_title_the_query_names_wins_its_episode() -> None:
    g = G()
    g.node("Ep", "Episode")
    for f in ("背景", "约束"):
        g.node(f, "Facet", search_text=f)
        g.edge("Ep", "has_facet", f)
    g.node("pb", "FacetPoint", search_text="本次只改造对外 API。")
    g.node("pc", "FacetPoint", search_text="鉴权中间件不能改。")
    g.edge("背景", "has_point", "pb")
    g.edge("约束", "has_point", "pc")
    hits = [
        Hit(collection="FacetPoint_search_text", node_id=nid("pb"), text="", distance=0.10),
        Hit(collection="FacetPoint_search_text", node_id=nid("pc"), text="", distance=0.14),
    ]
    scored = score_hits(hits, None, CFG)
    index = RelationshipIndex.build(g.sub())
    question = "这个任务有哪些约束？"
    ev = scored.evidence(g.sub(), question, CFG)
    assert dict(ev.facet_adjust) == {nid("约束"): pytest.approx(-CFG.facet_title_bonus)}
    [bundle] = score_bundles(index, ev, CFG)
    assert bundle.best_facet_id == nid("约束") and bundle.best_point_id == nid("pc")
    units = evidence_units([bundle], index, ev, CFG)
    assert [u.node_id for u in units] == [nid("pc"), nid("pb")]
    off = RecallConfig(facet_title_bonus=0)
    [plain] = score_bundles(index, scored.evidence(g.sub(), question, off), off)
    assert plain.best_facet_id == nid("背景")


@pytest.mark.parametrize(
    ("text", "small"),
    [
        ("Hi Tomas, quick update on Kestrel.", True),
        ("Morning Ada, nice weather today!", True),
        ("Thanks, that is really helpful!", True),
        ("大家好，同步一下 Kestrel 的进展。", True),
        ("谢谢！", True),
        # a greeting that carries a fact, a figure or news is not small talk
        ("Hi all, the launch moved to March 4.", False),
        ("Hey! I just got back from Lisbon!", False),
        ("Thanks Ada, the crane is fixed now.", False),
        ("你好，上线时间改到3月4日了。", False),
        ("The launch moved to March 4.", False),
    ],
)
def test_small_talk_is_a_greeting_that_says_nothing_more(text: str, small: bool) -> None:
    assert is_small_talk(text) is small
