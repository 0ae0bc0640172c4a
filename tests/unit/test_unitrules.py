"""Query-aware unit rules (memflow.recall.unitrules) and their effect on evidence_units."""

from __future__ import annotations

import pytest

from memflow.recall.config import RecallConfig
from memflow.recall.render import evidence_units
from memflow.recall.scoring import RelationshipIndex
from memflow.recall.unitrules import QueryRules, content_terms, split_speaker, stem

from .test_render import G, bundle, nid

CFG = RecallConfig()
TURNS = [
    "Melanie: I painted a lake at sunrise last week.",
    "Caroline: Thanks, Melanie! That sounds lovely.",
    "Melanie: Did you go to the support group?",
    "a note without a speaker",
]


@pytest.mark.parametrize(
    ("word", "stemmed"), [("Painting", "paint"), ("Melanie's", "melan"), ("lake", "lake")]
)
def test_stem(word: str, stemmed: str) -> None:
    assert stem(word) == stemmed


def test_split_speaker() -> None:
    assert split_speaker(TURNS[0]) == ("Melanie", "I painted a lake at sunrise last week.")
    assert split_speaker(TURNS[3]) == (None, TURNS[3])
    assert split_speaker("http://x.org: a link") == (None, "http://x.org: a link")


def test_content_terms_drop_stop_words_and_excluded_names() -> None:
    assert content_terms("What did Melanie paint at the lake?", ["Melanie"]) == {"paint", "lake"}
    assert content_terms("Melanie's paintings") == {"melan", "paint"}


def test_query_rules_name_speakers_and_keep_content_terms() -> None:
    rules = QueryRules.build("What did Melanie paint at the lake?", TURNS)
    assert rules.named == {"Melanie"}
    assert "melan" not in rules.terms and {"paint", "lake"} <= rules.terms


def test_adjustments() -> None:
    rules = QueryRules.build("What did Melanie paint at the lake?", TURNS)
    # The named speaker's factual turn shares two terms (painted, lake): -2 x 0.02.
    assert rules.adjustment(TURNS[0], CFG) == pytest.approx(-0.04)
    # Another speaker's turn that only names her: +0.05.
    assert rules.adjustment(TURNS[1], CFG) == pytest.approx(0.05)
    # A question turn of the named speaker: +0.02.
    assert rules.adjustment(TURNS[2], CFG) == pytest.approx(0.02)
    # No speaker prefix: never treated as another speaker's turn.
    assert rules.adjustment(TURNS[3], CFG) == 0.0
    # The cap counts at most term_overlap_cap shared words.
    capped = RecallConfig(term_overlap_cap=1)
    assert rules.adjustment(TURNS[0], capped) == pytest.approx(-0.02)
    off = RecallConfig(speaker_penalty=0, term_overlap_bonus=0, question_turn_penalty=0)
    assert all(rules.adjustment(t, off) == 0.0 for t in TURNS)


def test_no_speaker_named_no_speaker_penalty() -> None:
    rules = QueryRules.build("Who painted the lake?", TURNS)
    assert rules.named == frozenset()
    assert rules.adjustment(TURNS[1], CFG) == 0.0


def _one_facet_graph() -> tuple[RelationshipIndex, dict[object, float]]:
    g = G()
    g.node("Ep", "Episode")
    g.node("f", "Facet", "chat")
    g.edge("Ep", "has_facet", "f")
    for i, turn in enumerate(TURNS[:3]):
        g.node(f"p{i}", "FacetPoint", turn)
        g.edge("f", "has_point", f"p{i}")
    # The vocative turn is the closest by embedding, the factual one the farthest.
    dist = {nid("p0"): 0.30, nid("p1"): 0.27, nid("p2"): 0.28}
    return RelationshipIndex.build(g.sub()), dist  # type: ignore[return-value]


def test_rules_reorder_evidence_units_only_when_a_query_is_given() -> None:
    index, dist = _one_facet_graph()
    plain = evidence_units([bundle("Ep", 0.1)], index, dist, CFG, dist)  # type: ignore[arg-type]
    assert [u.node_id for u in plain] == [nid("p1"), nid("p2"), nid("p0")]
    ruled = evidence_units(
        [bundle("Ep", 0.1)],
        index,
        dist,  # type: ignore[arg-type]
        CFG,
        dist,  # type: ignore[arg-type]
        query="What did Melanie paint at the lake?",
    )
    # p0: 0.30 - 0.04 = 0.26 first; p2: 0.28 + 0.02 = 0.30; p1: 0.27 + 0.05 = 0.32 last.
    assert [u.node_id for u in ruled] == [nid("p0"), nid("p2"), nid("p1")]
