"""Normalisation, keyword / number / English-term bonuses, best_by_id and edge_hit_map."""

from __future__ import annotations

import uuid
from datetime import datetime

import pytest

from memflow.recall.bonus import (
    apply_bonuses,
    best_by_id,
    best_hits,
    edge_hit_map,
    keyword_matches,
    normalize_for_match,
    normalize_scores,
)
from memflow.recall.config import RecallConfig
from memflow.recall.preprocess import PreprocessedQuery, preprocess
from memflow.recall.types import Hit

CFG = RecallConfig()
NOW = datetime(2024, 5, 15)


def _id(name: str) -> uuid.UUID:
    return uuid.uuid5(uuid.NAMESPACE_URL, name)


def hit(text: str, score: float, collection: str = "FacetPoint_search_text") -> Hit:
    node = None if collection == "Edge_text" else _id(text)
    return Hit(collection=collection, node_id=node, text=text, distance=score, score=score)


def plain_query(original: str) -> PreprocessedQuery:
    """A query without keyword bonus, to look at the exact-match bonus alone."""
    return PreprocessedQuery(
        original=original, vector_query=original, keywords=[], hybrid_reason=None, use_hybrid=False
    )


def scores(hits: list[Hit]) -> list[float]:
    return [round(h.score, 6) for h in hits]


def test_seed_keyword_example() -> None:
    pq = preprocess("API 流式返回那个任务有哪些约束？", NOW)
    assert pq.keywords == ["API"] and pq.use_hybrid
    a = hit("鉴权中间件保持不变。", 0.22)
    b = hit("API 流式返回改造的变更边界。", 0.24)
    c = hit("首页 hero 文案交付时间。", 0.30)
    out = apply_bonuses([a, b, c], pq, CFG)
    assert scores(out) == [0.22, 0.09, 0.30]
    assert [h.text for h in sorted(out, key=lambda h: h.score)] == [b.text, a.text, c.text]


def test_keyword_normalisation_ignores_case_space_and_punctuation() -> None:
    assert normalize_for_match("API 流式，返回。") == "api流式返回"
    assert keyword_matches(["Api"], "接入 a p i 网关")
    assert keyword_matches(["40万"], "预算：40 万")
    assert not keyword_matches(["40万"], "预算400万")


def test_number_bonus_same_and_other_unit() -> None:
    pq = plain_query("40万预算那个方案后来怎么改了？")
    out = apply_bonuses(
        [hit("预算 40万 被砍半", 0.5), hit("团队有 40 人", 0.5), hit("预算 400万", 0.5)], pq, CFG
    )
    assert scores(out) == [0.38, 0.47, 0.5]


def test_keyword_then_exact_match() -> None:
    pq = preprocess("40万预算那个方案后来怎么改了？", NOW)
    assert pq.keywords == ["40万"]
    out = apply_bonuses([hit("预算 40万 被砍半", 0.5), hit("预算 40万", 0.2)], pq, CFG)
    # 0.5 -0.15 (keyword) = 0.35 >= 0.10 -> -0.12 (same unit); 0.2 - 0.15 = 0.05 < 0.10 -> stop
    assert scores(out) == [0.23, 0.05]


def test_bare_numbers_and_units_across_languages() -> None:
    pq = plain_query("How many 5 star reviews did Jon get in 2023?")
    out = apply_bonuses(
        [hit("Jon got 5 reviews in 2023", 0.4), hit("2023 was a good year", 0.4), hit("5 ms", 0.4)],
        pq,
        CFG,
    )
    assert scores(out) == [0.16, 0.28, 0.37]
    pq = plain_query("3天前的会议")
    assert scores(apply_bonuses([hit("met 3 days ago", 0.4)], pq, CFG)) == [0.28]


def test_number_bonus_is_capped() -> None:
    pq = plain_query("1 2 3 4")
    out = apply_bonuses([hit("1 2 3 4", 0.5), hit("1 2", 0.5)], pq, CFG)
    assert scores(out) == [0.26, 0.26]
    out = apply_bonuses([hit("1", 0.5)], pq, CFG)
    assert scores(out) == [0.38]


def test_exact_match_needs_score_at_least_threshold() -> None:
    pq = plain_query("40万预算")
    out = apply_bonuses([hit("40万", 0.09), hit("40万", 0.10)], pq, CFG)
    assert scores(out) == [0.09, 0.0]  # 0.10 - 0.12 floors at 0


def test_english_terms_in_cjk_query() -> None:
    pq = plain_query("GPT-4o 和 API 以及 SDK 的价格")
    out = apply_bonuses(
        [
            hit("GPT-4o pricing", 0.5),
            hit("the api and the GPT-4o", 0.5),
            hit("API, SDK and GPT-4o", 0.5),
            hit("GPT-4omini", 0.5),
        ],
        pq,
        CFG,
    )
    assert scores(out) == [0.42, 0.34, 0.34, 0.5]


def test_english_terms_only_in_cjk_queries() -> None:
    pq = plain_query("GPT-4o and API pricing")
    assert scores(apply_bonuses([hit("API pricing", 0.5)], pq, CFG)) == [0.5]


def test_edge_text_never_gets_bonuses() -> None:
    pq = preprocess("API 流式返回那个任务有哪些约束？", NOW)
    edge = hit("API 流式返回 -> 鉴权", 0.3, "Edge_text")
    assert apply_bonuses([edge], pq, CFG)[0].score == pytest.approx(0.3)


def test_normalize_minmax_per_collection() -> None:
    hits = [
        Hit(collection="Facet_search_text", node_id=_id("a"), text="a", distance=0.2),
        Hit(collection="Facet_search_text", node_id=_id("b"), text="b", distance=0.4),
        Hit(collection="Facet_search_text", node_id=_id("c"), text="c", distance=0.3),
        Hit(collection="Entity_name", node_id=_id("d"), text="d", distance=0.9),
        Hit(collection="Entity_name", node_id=_id("e"), text="e", distance=0.9),
    ]
    assert hits[0].score == pytest.approx(0.2)  # score defaults to the raw distance
    out = normalize_scores(hits, "minmax")
    assert scores(out) == [0.0, 1.0, 0.5, 0.0, 0.0]
    raw = normalize_scores([h.rescored(7.0) for h in hits], "raw")
    assert scores(raw) == [0.2, 0.4, 0.3, 0.9, 0.9]


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
