"""Query preprocessing: hybrid trigger, keywords (never glued), vector query, time."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from memflow.errors import InvalidInput
from memflow.recall.preprocess import (
    extract_numbers,
    hybrid_reason,
    latin_terms,
    preprocess,
    query_core,
)

NOW = datetime(2024, 5, 15, 9, 0)


@pytest.mark.parametrize(
    ("query", "reason", "keywords"),
    [
        ("API 流式返回那个任务有哪些约束？", "mixed_lang", ["API"]),
        ("GPT-4o的价格是多少", "mixed_lang", ["GPT-4o"]),
        ("GPT-4o 和 API 的区别是什么", "mixed_lang", ["GPT-4o", "API"]),
        ("500ms 延迟是多少", "mixed_lang", ["500ms"]),
        ("延迟 500 ms 是什么原因", "mixed_lang", ["500 ms"]),
        ("How many 5 star reviews did Kofi get in 2023?", "number", ["5", "2023"]),
        ("40万预算那个方案后来怎么改了？", "number", ["40万"]),
        ("上次 3 次失败是为什么", "number", ["3 次"]),
        ("转化率提升了 20% 吗", "number", ["20%"]),
        ("How does GPT-4o compare to v2?", "number", ["GPT-4o", "v2"]),
        ("鉴权？", "short_query", ["鉴权"]),
        ("是什么鉴权", "short_query", ["鉴权"]),
        ("Who is Bob?", "short_query", ["Bob"]),
        ("C++?", "short_query", ["C++"]),
        ("鉴权中间件为什么不能改", None, []),
        ("When did Wren go to the night market by the river?", None, []),
    ],
)
def test_hybrid_reason_and_keywords(query: str, reason: str | None, keywords: list[str]) -> None:
    pq = preprocess(query, NOW)
    assert pq.hybrid_reason == reason
    assert pq.keywords == keywords
    assert pq.use_hybrid == bool(reason and keywords)
    assert pq.original == query


def test_numbers_are_separate_keywords_not_glued() -> None:
    pq = preprocess("How many 5 star reviews did Kofi get in 2023?", NOW)
    assert "52023" not in pq.keywords
    assert pq.keywords == ["5", "2023"]


def test_trigger_order_mixed_lang_before_number() -> None:
    assert hybrid_reason("API 调用了 3 次") == "mixed_lang"
    assert hybrid_reason("调用了 3 次") == "number"
    assert hybrid_reason("好的") == "short_query"
    assert hybrid_reason("这个方案后来改成了什么样子") is None


@pytest.mark.parametrize(
    ("query", "vector_query"),
    [
        ("API 流式返回那个任务有哪些约束？", "API 流式返回那个任务有哪些约束"),
        ("40万预算那个方案后来怎么改了？", "40万预算那个方案后来改了"),
        ("鉴权中间件为什么不能改？", "鉴权中间件不能改"),
        ("什么是 bundle score", "bundle score"),
        ("昨天开会说了什么？", "开会说了什么"),
        ("上周三的会议定了哪些事", "的会议定了哪些事"),
        ("What did Kofi do last week?", "What did Kofi do"),
        ("How many 5 star reviews did Kofi get in 2023?", "How many 5 star reviews did Kofi get"),
        ("吗啡是什么", "吗啡"),
        ("是什么？", "是什么？"),  # nothing left: fall back to the original
        ("昨天", "昨天"),
    ],
)
def test_vector_query(query: str, vector_query: str) -> None:
    assert preprocess(query, NOW).vector_query == vector_query


def test_time_is_parsed_against_now() -> None:
    pq = preprocess("上周三开会说了什么？", NOW, "Asia/Shanghai")
    assert pq.time is not None
    assert pq.time.text == "上周三"
    assert pq.time.start.date() == date(2024, 5, 8)
    assert preprocess("鉴权中间件不能改", NOW).time is None


def test_low_confidence_time_is_dropped() -> None:
    pq = preprocess("what happened recently", NOW, time_confidence_min=0.6)
    assert pq.time is None
    assert pq.vector_query == "what happened recently"
    pq = preprocess("what happened recently", NOW)
    assert pq.time is not None and pq.time.kind == "fuzzy"
    assert pq.vector_query == "what happened"


def test_empty_query_is_invalid() -> None:
    with pytest.raises(InvalidInput):
        preprocess("   ", NOW)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("40万", [("40万", "40", "万")]),
        ("500ms", [("500ms", "500", "ms")]),
        ("500 ms", [("500 ms", "500", "ms")]),
        ("3 次", [("3 次", "3", "times")]),
        ("3 times", [("3 times", "3", "times")]),
        ("20%", [("20%", "20", "%")]),
        ("1,000.50元", [("1,000.50元", "1000.5", "yuan")]),
        ("3个月", [("3个月", "3", "month")]),
        ("3天和 3 days", [("3天", "3", "day"), ("3 days", "3", "day")]),
        ("5 star", [("5", "5", None)]),
        ("in 2023.", [("2023", "2023", None)]),
        ("GPT-4o", []),
        ("v2 release", []),
        ("1:56 pm", []),
        ("2.50 and 2.5", [("2.50", "2.5", None), ("2.5", "2.5", None)]),
    ],
)
def test_extract_numbers(text: str, expected: list[tuple[str, str, str | None]]) -> None:
    assert [(n.text, n.value, n.unit) for n in extract_numbers(text)] == expected


def test_latin_terms_and_core() -> None:
    assert latin_terms("What is the API 的 GPT-4o 版本") == ["API", "GPT-4o"]
    assert query_core("什么是 API？") == "API"
    assert query_core("Who is Bob?") == "Bob"


def test_model_dump_is_json_ready() -> None:
    dumped = preprocess("上周三 API 的改动", NOW).model_dump(mode="json")
    assert dumped["keywords"] == ["API"]
    assert dumped["time"]["text"] == "上周三"
    assert isinstance(dumped["time"]["start"], str)
