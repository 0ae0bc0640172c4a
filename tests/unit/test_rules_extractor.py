"""The deterministic ``rules`` extractor: episodes, facets, points, entities, times."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from memflow.drafts import EpisodeDraft
from memflow.embed.base import Matrix, Vector
from memflow.embed.hash import HashEmbedder
from memflow.errors import InvalidInput
from memflow.ingest.entities import find_mentions, keywords, rank_entities
from memflow.ingest.parse import parse_input
from memflow.ingest.rules import RulesExtractor, facet_type_for
from memflow.ingest.segment import fixed_windows, segment
from memflow.text.document import ParsedDocument
from memflow.text.pieces import text_size

REF = datetime(2024, 3, 1, tzinfo=UTC)
SAMPLES = Path(__file__).parents[2] / "memflow" / "samples"
LOCOMO = Path(__file__).parents[2].parent / "shared/data/locomo10.json"

MEMO = """# API 流式返回改造

## 背景
目前 /chat/completions 接口一次性返回，首字等待 8 秒。本次只改造对外 API。
产品在 2024年3月4日 提出需求。

## 约束
鉴权中间件不能改。
旧客户端必须继续使用非流式接口，超时 60 秒。

## 决定
采用 SSE 而不是 WebSocket，首字延迟目标 800ms。

## 计划
3月18日 完成原型，3月25日 灰度 5% 流量。
"""


def _one(doc: ParsedDocument, extractor: RulesExtractor | None = None) -> EpisodeDraft:
    [episode] = (extractor or RulesExtractor()).extract(doc)
    return episode


def _memo() -> ParsedDocument:
    [doc] = parse_input(MEMO, source="memo.md", reference_time=REF)
    return doc


def test_markdown_memo_gives_one_episode_with_a_facet_per_heading() -> None:
    doc = _memo()
    episode = _one(doc)
    assert episode.name == "API 流式返回改造"
    assert [f.search_text for f in episode.facets] == ["背景", "约束", "决定", "计划"]
    assert [f.facet_type for f in episode.facets] == ["topic", "risk", "decision", "plan"]
    by_section = {
        h: [c.key for c in doc.chunks if c.section == f"API 流式返回改造 > {h}"]
        for h in ("背景", "约束", "决定", "计划")
    }
    for facet in episode.facets:
        assert [p.sources for p in facet.points] == [[k] for k in by_section[facet.search_text]]
        assert facet.sources == by_section[facet.search_text]
    points = [p for f in episode.facets for p in f.points]
    assert [p.search_text for p in points] == [c.text for c in doc.chunks]
    assert episode.facets[1].points[0].search_text == "鉴权中间件不能改。"
    assert episode.sources == [c.key for c in doc.chunks]


def test_markdown_memo_entities_summary_and_time() -> None:
    episode = _one(_memo())
    names = {e.name: e for e in episode.entities}
    assert {"/chat/completions", "API", "8 秒", "60 秒", "800ms", "5%", "SSE"} <= set(names)
    assert names["/chat/completions"].entity_type == "path"
    assert names["800ms"].entity_type == "quantity"
    assert names["SSE"].role == "mentioned in: 决定"
    background = episode.facets[0]
    facet_entities = {e.name: e for e in background.entities}
    assert facet_entities["/chat/completions"].role is not None
    assert "/chat/completions" in facet_entities["/chat/completions"].role
    assert episode.summary.startswith("【背景】目前 /chat/completions")
    assert "\n【约束】鉴权中间件不能改。" in episode.summary
    assert len(episode.summary) <= 1200
    assert episode.time is not None
    assert episode.time.start == datetime(2024, 3, 4, tzinfo=UTC)
    assert episode.facets[3].time is not None
    assert episode.facets[3].time.start == datetime(2024, 3, 18, tzinfo=UTC)
    assert episode.facets[0].anchor_text.startswith("目前 /chat/completions")


def test_sentence_initial_words_are_not_entities() -> None:
    text = "Yesterday we shipped the fix. Reporting is slow again. Then Priya Raman called Tom."
    found = dict(find_mentions(text))
    assert "Yesterday" not in found and "Reporting" not in found and "Then" not in found
    assert found["Priya Raman"] == "name"
    assert found["Tom"] == "name"


def test_entity_patterns() -> None:
    found = dict(
        find_mentions(
            "Run `pg_dump` and call migrate_users() before May 20, 2024; it takes 45 minutes for "
            '120 GB at $4,800 per month, see "dual write" and https://example.com/x.'
        )
    )
    assert found["pg_dump"] == "code"
    assert found["migrate_users()"] == "code"
    assert found["May 20, 2024"] == "date"
    assert found["45 minutes"] == "quantity"
    assert found["120 GB"] == "quantity"
    assert found["$4,800"] == "quantity"
    assert found["dual write"] == "quote"
    assert found["https://example.com/x"] == "url"
    cjk = dict(find_mentions("灰度期间观察 5xx 错误率，Redis 命中率 98%，参考《架构评审》"))
    assert cjk == {"5xx": "term", "Redis": "name", "98%": "quantity", "架构评审": "title"}


def test_entities_are_capped_and_ranked() -> None:
    statements = [f"We call Service{i}Api at /v{i}/items." for i in range(12)]
    hits = rank_entities(statements, speakers=["Ana"], limit=5)
    assert len(hits) == 5
    assert hits[0].name == "Ana" and hits[0].entity_type == "person"
    assert all(h.entity_type == "path" for h in hits[1:])


def test_keywords_prefer_repeated_phrases_and_skip_speakers() -> None:
    words = keywords(
        [
            "Wren went to the chess club again.",
            "The chess club helped Wren a lot.",
            "She plans kiln repairs.",
        ],
        exclude=["Wren"],
        limit=3,
    )
    assert words[0] == "chess club"
    assert "Wren" not in words and "wren" not in words


def _conversation_doc() -> ParsedDocument:
    [doc] = parse_input(
        (SAMPLES / "trip-planning.conversation.json").read_bytes(), source="trip.json"
    )
    return doc


def test_two_session_conversation_gives_two_episodes_with_session_dates() -> None:
    doc = _conversation_doc()
    episodes = RulesExtractor().extract(doc)
    assert len(episodes) == 2
    for episode, session in zip(episodes, doc.sessions, strict=True):
        assert session.started_at is not None
        day = session.started_at.replace(hour=0, minute=0, second=0)
        assert episode.time is not None
        assert (episode.time.start, episode.time.end) == (day, day + timedelta(days=1))
        assert episode.time.confidence == 0.95
        assert f"{day.day} {day:%B %Y}" in episode.name
        chunks = [doc.chunks[i] for i in session.chunk_indexes]
        points = [p for f in episode.facets for p in f.points]
        assert [p.sources for p in points] == [[c.key] for c in chunks]
        assert [p.search_text for p in points] == [f"{c.speaker}: {c.text}" for c in chunks]
        assert all(len(f.points) <= 4 for f in episode.facets)  # fixed windows without embedder
        speakers = [e for e in episode.entities if e.entity_type == "person"]
        assert {e.name for e in speakers} == {"Ana", "Ben"}
        assert all((e.role or "").startswith("speaker (") for e in speakers)
        assert len(episode.summary) <= 1200
    assert episodes[0].name.startswith("Ana & Ben — 6 May 2024")
    assert any(e.name == "Lisbon" for e in episodes[0].entities)
    assert any(e.name == "Cais do Sodré" for f in episodes[0].facets for e in f.entities)


def test_dialog_facet_time_is_anchored_at_the_session_date() -> None:
    episode = RulesExtractor().extract(_conversation_doc())[1]
    timed = [f.time for f in episode.facets if f.time is not None]
    # "yesterday" said on 20 May 2024 resolves to 19 May.
    assert any(t.start == datetime(2024, 5, 19, tzinfo=UTC) for t in timed)


class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__(dim=64)
        self.seen: Counter[str] = Counter()

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        self.seen.update(texts)
        return super().embed_passages(texts)

    def embed_query(self, text: str) -> Vector:  # pragma: no cover - not used here
        return super().embed_query(text)


def _long_dialog() -> ParsedDocument:
    topics = [
        "the database migration backfill and the dual write flag",
        "the hiking trip to the mountains next weekend with tents",
        "the birthday party cake and the guest list for Saturday",
    ]
    messages = [
        {"speaker": "Ana" if i % 2 == 0 else "Ben", "text": f"About {topic}, point {i}."}
        for topic in topics
        for i in range(6)
    ]
    [doc] = parse_input(json.dumps({"messages": messages}), source="d", reference_time=REF)
    return doc


def test_embedder_segments_within_bounds_and_embeds_each_text_once() -> None:
    doc = _long_dialog()
    embedder = CountingEmbedder()
    extractor = RulesExtractor(embedder, min_facet_turns=3, max_facet_turns=8)
    episode = _one(doc, extractor)
    sizes = [len(f.points) for f in episode.facets]
    assert sum(sizes) == len(doc.chunks)
    assert all(3 <= s <= 8 for s in sizes)
    keys = [p.sources[0] for f in episode.facets for p in f.points]
    assert keys == [c.key for c in doc.chunks]
    texts = [p.search_text for f in episode.facets for p in f.points]
    assert set(extractor.embedding_cache) == set(texts)
    assert np.allclose(extractor.embedding_cache[texts[0]], embedder.embed_passages([texts[0]])[0])
    embedder.seen.clear()
    assert _one(doc, extractor) == episode
    assert not embedder.seen  # second pass served from the cache


def test_segment_cuts_where_the_topic_changes() -> None:
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=32), rng.normal(size=32)
    vectors = np.array(
        [a + 0.2 * rng.normal(size=32) for _ in range(6)]
        + [b + 0.2 * rng.normal(size=32) for _ in range(6)]
    )
    assert segment(12, vectors=vectors, min_size=3, max_size=8) == [(0, 6), (6, 12)]
    assert fixed_windows(10, 4) == [(0, 4), (4, 7), (7, 10)]
    assert segment(10, window=4) == fixed_windows(10, 4)
    assert segment(9, breaks={4, 6}, min_size=2, max_size=8) == [(0, 4), (4, 6), (6, 9)]
    assert segment(2, vectors=vectors[:2], min_size=3) == [(0, 2)]


def test_extraction_is_deterministic() -> None:
    for doc in (_memo(), _conversation_doc(), _long_dialog()):
        for embedder in (None, HashEmbedder()):
            first = [e.model_dump() for e in RulesExtractor(embedder).extract(doc)]
            second = [e.model_dump() for e in RulesExtractor(embedder).extract(doc)]
            assert first == second


def test_long_markdown_splits_into_one_episode_per_top_level_section() -> None:
    parts = []
    for name in ("Alpha", "Beta", "Gamma"):
        body = " ".join(f"{name} fact number {i} is recorded here." for i in range(40))
        parts.append(f"## {name}\n\n### Details\n{body}\n")
    [doc] = parse_input("# Handbook\n\n" + "\n".join(parts), source="h.md", reference_time=REF)
    episodes = RulesExtractor(long_document_sentences=80).extract(doc)
    assert [e.name for e in episodes] == ["Handbook — Alpha", "Handbook — Beta", "Handbook — Gamma"]
    for episode in episodes:
        assert all(len(f.points) <= 12 for f in episode.facets)
        assert sum(len(f.points) for f in episode.facets) == 40
        handles = [f.search_text for f in episode.facets]
        assert handles[0] == "Details" and len(set(handles)) == len(handles)


def test_plain_text_facets_follow_paragraphs() -> None:
    text = (
        "The backfill finished. It took 60 hours.\n\n"
        "Priya Raman reviewed the schema. She approved it. Tom agreed.\n\n"
        "Next we cut over reads. The date is May 20, 2024."
    )
    [doc] = parse_input(text, source="t.txt", reference_time=REF)
    episode = _one(doc)
    assert [len(f.points) for f in episode.facets] == [2, 3, 2]
    assert episode.facets[0].search_text == "The backfill finished."
    assert episode.name == doc.title
    assert episode.time is not None and episode.time.start == datetime(2024, 5, 20, tzinfo=UTC)


def test_samples_extract_every_chunk_once() -> None:
    files = sorted(SAMPLES.iterdir())
    assert {f.suffix for f in files} >= {".md", ".json"}
    for path in files:
        for doc in parse_input(
            path.read_bytes(), source=path.name, filename=path.name, reference_time=REF
        ):
            episodes = RulesExtractor().extract(doc)
            cited = [k for e in episodes for f in e.facets for p in f.points for k in p.sources]
            assert cited == [c.key for c in doc.chunks]


def test_draft_json_is_validated() -> None:
    draft = {
        "name": "Sprint review",
        "summary": "【Demo】went well",
        "facets": [{"search_text": "Demo"}],
    }
    [doc] = parse_input(json.dumps(draft), source="d.json", filename="d.json", reference_time=REF)
    assert doc.content_type == "draft"
    [episode] = RulesExtractor().extract(doc)
    assert episode.name == "Sprint review" and episode.facets[0].search_text == "Demo"
    [bad] = parse_input(
        json.dumps({"name": "x", "summary": " "}), source="b.json", reference_time=REF
    )
    with pytest.raises(InvalidInput, match="summary"):
        RulesExtractor().extract(bad)


def test_facet_type_from_heading() -> None:
    assert facet_type_for("Risks") == "risk"
    assert facet_type_for("下一步计划") == "plan"
    assert facet_type_for("Latency numbers") == "metric"
    assert facet_type_for(None) == "topic"


@pytest.mark.skipif(
    not LOCOMO.is_file(),
    reason=f"needs the LoCoMo data at {LOCOMO} (the shared/ directory next to the repository, "
    "as in CI); a clone outside that layout skips it",
)
def test_locomo_turns_become_exactly_one_point_each() -> None:
    data = json.loads(LOCOMO.read_text(encoding="utf-8"))
    conversation = data[0]["conversation"]
    extractor = RulesExtractor(HashEmbedder())
    sessions = sorted(
        (k for k, v in conversation.items() if k.startswith("session_") and isinstance(v, list)),
        key=lambda k: int(k.split("_")[1]),
    )[:5]
    for key in sessions:
        turns = conversation[key]
        payload = {
            "sessions": [
                {
                    "started_at": conversation[f"{key}_date_time"],
                    "messages": [
                        {"speaker": t["speaker"], "text": t["text"], "id": t["dia_id"]}
                        for t in turns
                    ],
                }
            ]
        }
        [doc] = parse_input(json.dumps(payload), source=key)
        [episode] = extractor.extract(doc)
        points = [p for f in episode.facets for p in f.points]
        assert [p.sources for p in points] == [[t["dia_id"]] for t in turns]
        assert [p.search_text for p in points] == [
            f"{t['speaker']}: {t['text'].strip()}" for t in turns
        ]
        assert episode.time is not None and doc.sessions[0].started_at is not None
        assert episode.time.start.date() == doc.sessions[0].started_at.date()
        assert all(3 <= len(f.points) <= 8 for f in episode.facets) or len(episode.facets) == 1


def test_embedding_cache_is_bounded_or_shared() -> None:
    doc = _long_dialog()
    small = RulesExtractor(HashEmbedder(dim=32), cache_size=5)
    small.extract(doc)
    assert len(small.embedding_cache) == 5
    last = [f"{c.speaker}: {c.text}" for c in doc.chunks][-5:]
    assert list(small.embedding_cache) == last  # the least recently used texts left first
    shared: dict[str, Vector] = {}
    RulesExtractor(HashEmbedder(dim=32), cache=shared).extract(doc)
    assert len(shared) == len(doc.chunks)


def test_three_speakers_are_named_in_the_episode() -> None:
    messages = [
        {"speaker": name, "text": f"{name} reports on the release, item {i}."}
        for i, name in enumerate(["Ana", "Ben", "Chen", "Ana"])
    ]
    [doc] = parse_input(json.dumps({"messages": messages}), source="m", reference_time=REF)
    [episode] = RulesExtractor().extract(doc)
    assert episode.name.startswith("Ana, Ben & Chen — 1 March 2024")
    assert [e.name for e in episode.entities[:3]] == ["Ana", "Ben", "Chen"]


def test_anchors_are_bounded_in_words_so_chinese_costs_no_more_than_english() -> None:
    # Characters alone let a CJK anchor run ~3x as long in the model's tokens as an English one.
    zh = "我们周六去果园摘苹果，然后去湖边散步。" * 40  # 760 characters, 380 words
    en = "We pick apples on Saturday, then walk by the lake. " * 40  # 2,040 characters
    doc = ParsedDocument.model_validate(
        {
            "source": "words.md",
            "title": "Notes",
            "content_type": "markdown",
            "text": f"# Notes\n\n## 中文\n{zh}\n\n## English\n{en}\n",
            "reference_time": REF,
            "chunks": [
                {"key": "c0", "index": 0, "text": zh, "section": "Notes > 中文"},
                {"key": "c1", "index": 1, "text": en, "section": "Notes > English"},
            ],
        }
    )
    (episode,) = RulesExtractor(HashEmbedder()).extract(doc)
    chinese, english = (f.anchor_text for f in episode.facets)
    assert chinese.endswith("…") and 240 <= text_size(chinese) <= 251
    assert len(chinese) < 600  # of 760
    assert english.endswith("…") and 900 <= len(english) <= 1000  # the characters bind first
    short = RulesExtractor(HashEmbedder(), anchor_words=20).extract(doc)[0]
    assert text_size(short.facets[0].anchor_text) <= 21
