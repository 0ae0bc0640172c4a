"""Bonuses on raw distances: a bonus is a share of the collection's spread, never below the
collection's best; exact-match threshold; number / English-term bonuses; minima per node."""

from __future__ import annotations

import uuid
from datetime import datetime

import pytest

from memflow.recall.bonus import (
    apply_bonuses,
    best_by_id,
    best_hits,
    collection_bounds,
    edge_hit_map,
    keyword_matches,
    normalize_for_match,
    number_bonus,
    term_bonus,
)
from memflow.recall.config import RecallConfig
from memflow.recall.preprocess import PreprocessedQuery, extract_numbers, preprocess
from memflow.recall.types import Hit

# The keyword, number and term bonuses alone; the cross-language rules (issue 29: language
# shift, literals, words across scripts) are tested on their own below, at their defaults.
CFG = RecallConfig(language_shift=0, literal_bonus=0, cross_term_bonus=0)
NOW = datetime(2031, 5, 15)
POINTS = "FacetPoint_search_text"


def _id(name: str) -> uuid.UUID:
    return uuid.uuid5(uuid.NAMESPACE_URL, name)


def hit(text: str, distance: float, collection: str = POINTS) -> Hit:
    node = None if collection == "Edge_text" else _id(f"{collection}/{text}/{distance}")
    return Hit(collection=collection, node_id=node, text=text, distance=distance)


def query(original: str, keywords: list[str] | None = None) -> PreprocessedQuery:
    return PreprocessedQuery(
        original=original,
        vector_query=original,
        keywords=keywords or [],
        hybrid_reason="short_query" if keywords else None,
        use_hybrid=bool(keywords),
    )


def scores(hits: list[Hit]) -> list[float]:
    return [round(h.score, 6) for h in hits]


def test_collection_bounds() -> None:
    hits = [
        hit("a", 0.4),
        hit("b", 0.2),
        hit("c", 0.3),
        hit("d", 0.9, "Entity_name"),
        hit("e", 0.5, "Edge_text"),
    ]
    assert collection_bounds(hits) == {
        POINTS: (0.2, 0.4),
        "Entity_name": (0.9, 0.9),
        "Edge_text": (0.5, 0.5),
    }
    assert collection_bounds([]) == {}


def test_keyword_bonus_is_a_share_of_the_spread() -> None:
    pq = query("What changed in the Kestrel rollout", ["Kestrel"])
    out = apply_bonuses(
        [
            hit("the old pager rota", 0.25),
            hit("Kestrel rollout moved to Friday", 0.5),
            hit("a lunch order", 0.75),
            hit("kestrel (lower case) counts too", 0.75),
        ],
        pq,
        CFG,
    )
    # spread 0.5; 0.5 sits at 0.5 of it: 0.5 - 0.15 = 0.35 -> 0.25 + 0.35 * 0.5 = 0.425
    assert scores(out) == [0.25, 0.425, 0.75, 0.675]
    assert [h.distance for h in out] == [0.25, 0.5, 0.75, 0.75]  # raw distances kept


def test_a_bonus_never_goes_below_the_collections_best() -> None:
    pq = query("Kestrel", ["Kestrel"])
    out = apply_bonuses(
        [
            hit("plain", 0.2),
            hit("Kestrel near the top", 0.24),
            hit("Kestrel at the top", 0.2),
            hit("far", 0.6),
        ],
        pq,
        CFG,
    )
    # 0.24 is 0.1 into the spread: the 0.15 bonus stops at the best distance, 0.2.
    assert scores(out) == [0.2, 0.2, 0.2, 0.6]


def test_spreads_are_per_collection() -> None:
    pq = query("Kestrel", ["Kestrel"])
    out = apply_bonuses(
        [
            hit("Kestrel a", 0.6),
            hit("other", 0.2),
            hit("Kestrel b", 0.5, "Facet_search_text"),
            hit("other", 0.4, "Facet_search_text"),
            hit("Kestrel alone", 0.3, "Entity_name"),
        ],
        pq,
        CFG,
    )
    # points: spread 0.4, rel 1 -> 0.85 -> 0.54; facets: spread 0.1 -> 0.485; a single hit: as is
    assert scores(out) == [0.54, 0.2, 0.485, 0.4, 0.3]


def test_edge_texts_are_untouched_and_do_not_shift_other_spreads() -> None:
    pq = preprocess("Kestrel 发布后 40万 预算怎么变了？", NOW)
    assert pq.use_hybrid and pq.keywords
    edges = [hit("Kestrel 40万 预算 -> 发布", 0.3, "Edge_text"), hit("x", 0.9, "Edge_text")]
    out = apply_bonuses([*edges, hit("a", 0.1), hit("b", 0.2)], pq, CFG)
    assert scores(out) == [0.3, 0.9, 0.1, 0.2]


def test_exact_match_needs_hits_at_least_the_threshold_into_the_spread() -> None:
    pq = query("40万预算")
    out = apply_bonuses(
        [
            hit("预算未定", 0.2),
            hit("40万 (near the best)", 0.24),  # 0.08 into the spread: below 0.10, no bonus
            hit("40万 (a bit further)", 0.26),  # 0.12 - 0.12 -> 0: the collection's best
            hit("40万 (mid)", 0.45),  # 0.5 - 0.12 = 0.38 -> 0.39
            hit("预算 400万", 0.45),  # another number: nothing
            hit("预算 40 万元", 0.7),
        ],
        pq,
        CFG,
    )
    assert scores(out) == [0.2, 0.24, 0.2, 0.39, 0.45, 0.64]


def test_keyword_then_exact_match() -> None:
    pq = preprocess("40万预算那个方案后来怎么改了？", NOW)
    assert pq.keywords == ["40万"] and pq.use_hybrid
    out = apply_bonuses(
        [
            hit("预算未定", 0.2),
            hit("预算 40万 被砍半", 0.45),
            hit("预算 40万", 0.24),
            hit("无关", 0.7),
        ],
        pq,
        CFG,
    )
    # 0.5 - 0.15 (keyword) = 0.35 >= 0.10 -> -0.12 (same number and unit) = 0.23 -> 0.315;
    # 0.08 - 0.15 -> 0: already at the best, the exact match has nothing left to take
    assert scores(out) == [0.2, 0.315, 0.2, 0.7]


def test_english_terms_only_in_cjk_queries() -> None:
    out = apply_bonuses([hit("x", 0.0), hit("SDK pricing", 0.5)], query("SDK 的价格"), CFG)
    assert scores(out) == [0.0, 0.46]  # (1.0 - 0.08) x a 0.5 spread
    out = apply_bonuses([hit("x", 0.0), hit("SDK pricing", 0.5)], query("SDK pricing"), CFG)
    assert scores(out) == [0.0, 0.5]


def test_number_bonus_same_and_other_unit() -> None:
    numbers = extract_numbers("40万预算那个方案后来怎么改了？")
    assert number_bonus(numbers, "预算 40万 被砍半", CFG) == pytest.approx(0.12)
    assert number_bonus(numbers, "团队有 40 人", CFG) == pytest.approx(0.03)
    assert number_bonus(numbers, "预算 400万", CFG) == 0.0
    assert number_bonus([], "40万", CFG) == 0.0


def test_bare_numbers_and_units_across_languages() -> None:
    numbers = extract_numbers("How many 5 star reviews did Kofi get in 2031?")
    assert number_bonus(numbers, "Kofi got 5 reviews in 2031", CFG) == pytest.approx(0.24)
    assert number_bonus(numbers, "2031 was a good year", CFG) == pytest.approx(0.12)
    assert number_bonus(numbers, "5 ms", CFG) == pytest.approx(0.03)
    assert number_bonus(extract_numbers("3天前的会议"), "met 3 days ago", CFG) == pytest.approx(
        0.12
    )


def test_number_bonus_is_capped() -> None:
    numbers = extract_numbers("1 2 3 4")
    assert number_bonus(numbers, "1 2 3 4", CFG) == pytest.approx(0.24)
    assert number_bonus(numbers, "1 2", CFG) == pytest.approx(0.24)
    assert number_bonus(numbers, "1", CFG) == pytest.approx(0.12)


def test_term_bonus_whole_tokens_capped() -> None:
    terms = ["GPT-4o", "API", "SDK"]
    assert term_bonus(terms, "GPT-4o pricing", CFG) == pytest.approx(0.08)
    assert term_bonus(terms, "the api and the GPT-4o", CFG) == pytest.approx(0.16)
    assert term_bonus(terms, "API, SDK and GPT-4o", CFG) == pytest.approx(0.16)  # capped
    assert term_bonus(terms, "GPT-4omini", CFG) == 0.0


def test_keyword_normalisation_ignores_case_space_and_punctuation() -> None:
    assert normalize_for_match("API 流式，返回。") == "api流式返回"
    assert keyword_matches(["Api"], "接入 a p i 网关")
    assert keyword_matches(["40万"], "预算：40 万")
    assert not keyword_matches(["40万"], "预算400万")


def test_best_by_id_and_edge_hit_map_take_minima() -> None:
    f = _id("F2")
    hits = [
        Hit(collection="Facet_search_text", node_id=f, text="变更边界", distance=0.3, score=0.12),
        Hit(
            collection="Facet_anchor_text", node_id=f, text="鉴权中间件…", distance=0.2, score=0.10
        ),
        Hit(collection="Edge_text", text="E1 -> F2", distance=0.4, score=0.05),
        Hit(collection="Edge_text", text="E1 -> F2", distance=0.5, score=0.07),
        Hit(collection="Edge_text", text="F2 -> P1", distance=0.5, score=0.04),
    ]
    assert best_by_id(hits) == {f: pytest.approx(0.10)}
    assert best_hits(hits)[f].collection == "Facet_anchor_text"
    assert edge_hit_map(hits) == {"E1 -> F2": pytest.approx(0.05), "F2 -> P1": pytest.approx(0.04)}


def test_equal_scores_prefer_the_lower_distance_then_the_collection_order() -> None:
    f = _id("F")
    a = Hit(collection="Facet_anchor_text", node_id=f, text="a", distance=0.3, score=0.1)
    b = Hit(collection="Facet_search_text", node_id=f, text="b", distance=0.3, score=0.1)
    c = Hit(collection="Episode_summary", node_id=f, text="c", distance=0.2, score=0.1)
    assert best_hits([a, b])[f] is b and best_hits([b, a])[f] is b
    assert best_hits([a, b, c])[f] is c
