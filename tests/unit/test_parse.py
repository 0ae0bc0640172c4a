"""Parsing inputs into documents: content types, chunks, sessions, and bad inputs."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memflow.errors import InvalidInput
from memflow.ingest.parse import detect_content_type, iter_sources, parse_input, parse_when
from memflow.text.sentences import split_sentences, text_units

REF = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)

MEMO = """# API 流式返回改造

## 背景
目前 /chat/completions 接口一次性返回。用户等待 8 秒！

## 约束
- 鉴权中间件不能改。
- 旧客户端必须继续使用
  非流式接口。

## Rollout
We ship on March 18. Dr. Chen signs off, e.g. after the load test.
"""


def test_cjk_sentences_split_on_cjk_punctuation() -> None:
    assert split_sentences("我们改造接口。鉴权不能改！要兼容吗？是的；下周上线……好") == [
        "我们改造接口。",
        "鉴权不能改！",
        "要兼容吗？",
        "是的；",
        "下周上线……",
        "好",
    ]


def test_english_sentences_respect_abbreviations_initials_and_decimals() -> None:
    text = "Dr. Smith met J. Doe at 3 p.m. today. Version 3.5 ships, e.g. on Monday. Done!"
    assert split_sentences(text) == [
        "Dr. Smith met J. Doe at 3 p.m. today.",
        "Version 3.5 ships, e.g. on Monday.",
        "Done!",
    ]


def test_markdown_headings_become_sections_and_sentences_chunks() -> None:
    [doc] = parse_input(MEMO, source="memo.md", reference_time=REF)
    assert doc.content_type == "markdown"
    assert doc.title == "API 流式返回改造"
    assert doc.reference_time == REF
    texts = [c.text for c in doc.chunks]
    assert texts == [
        "目前 /chat/completions 接口一次性返回。",
        "用户等待 8 秒！",
        "鉴权中间件不能改。",
        "旧客户端必须继续使用非流式接口。",
        "We ship on March 18.",
        "Dr. Chen signs off, e.g. after the load test.",
    ]
    assert [c.key for c in doc.chunks] == [f"s{i}" for i in range(6)]
    assert [c.index for c in doc.chunks] == list(range(6))
    assert doc.chunks[2].section == "API 流式返回改造 > 约束"
    assert doc.chunks[4].section == "API 流式返回改造 > Rollout"
    assert doc.sessions == []


def test_markdown_paragraphs_tables_and_code_are_units() -> None:
    text = "# T\n\nOne. Two.\n\nThree.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\nx = 1\n```\n"
    units, title = text_units(text, markdown=True)
    assert title == "T"
    # a row says its columns (the header row is no statement of its own)
    assert [u.text for u in units] == ["One.", "Two.", "Three.", "a: 1 | b: 2", "x = 1"]
    paragraphs = [u.paragraph for u in units]
    assert paragraphs[0] == paragraphs[1] != paragraphs[2] != paragraphs[3] != paragraphs[4]


def test_a_table_row_names_its_columns() -> None:
    text = (
        "| Stall | Holder | Fee |\n|:--|--|--:|\n| Cheese | Oona Pell | £40 |\n| Bread | | £35 |\n"
        "| odd row with | more | cells | than the header |\n\n"
        "| 摊位 | 摊主 |\n|---|---|\n| 花卉 | 葛秋 |\n\n"
        "| no header row | here |\n| second | row |\n"
    )
    units, _ = text_units(text, markdown=True)
    assert [u.text for u in units] == [
        "Stall: Cheese | Holder: Oona Pell | Fee: £40",
        "Stall: Bread | Fee: £35",  # an empty cell says nothing
        "odd row with | more | cells | than the header",
        "摊位: 花卉 | 摊主: 葛秋",
        "no header row | here",
        "second | row",
    ]


def test_plain_text_keeps_title_lines_apart_and_joins_wrapped_lines() -> None:
    text = (
        "Weekly sync\nThe migration is on track and the backfill finished two days earlier\n"
        "than planned. Nobody objected."
    )
    [doc] = parse_input(text, source="notes.txt", filename="notes.txt", reference_time=REF)
    assert doc.content_type == "text"
    assert [c.text for c in doc.chunks] == [
        "Weekly sync",
        "The migration is on track and the backfill finished two days earlier than planned.",
        "Nobody objected.",
    ]
    assert doc.title == "Weekly sync"


def test_dialog_detection() -> None:
    dialog = "Alice: hi\nBob: hello there\nAlice: shall we start?\nsome stray line"
    assert detect_content_type(dialog, None) == "dialog"
    one_speaker = "Alice: hi\nAlice: anyone?\nno answer\nstill none"
    assert detect_content_type(one_speaker, None) == "text"
    key_values = "Owner: Priya\nStatus: draft\nDate: 2024-03-01\nThe plan is below."
    assert detect_content_type(key_values, None) == "text"
    sparse = "Alice: hi\nBob: yo\nAlice: ok\n" + "prose line\n" * 6
    assert detect_content_type(sparse, None) == "text"  # 3 of 9 lines < 35 %
    chinese = "张三：我们今天上线吗？\n李四：先灰度 5%。\n张三：好的。"
    assert detect_content_type(chinese, None) == "dialog"
    assert detect_content_type("see http://example.com: it works\nfine", None) == "text"


def test_dialog_turns_with_timestamps_and_continuations() -> None:
    text = "[10:00] Alice: hi there\n[10:01] Bob: the backfill\nfinished early\nAlice: great"
    [doc] = parse_input(text, source="chat.dialog", reference_time=REF)
    assert doc.content_type == "dialog"
    assert [(c.key, c.speaker, c.text) for c in doc.chunks] == [
        ("t0", "Alice", "hi there"),
        ("t1", "Bob", "the backfill finished early"),
        ("t2", "Alice", "great"),
    ]
    assert doc.chunks[0].timestamp == datetime(2024, 3, 1, 10, 0, tzinfo=UTC)
    assert doc.chunks[2].timestamp is None
    assert len(doc.sessions) == 1
    assert doc.sessions[0].started_at == datetime(2024, 3, 1, 10, 0, tzinfo=UTC)
    assert doc.sessions[0].chunk_indexes == [0, 1, 2]
    assert doc.title == "Alice & Bob"


def _conversation() -> dict[str, object]:
    return {
        "sessions": [
            {
                "started_at": "2023-05-08T13:56:00Z",
                "messages": [
                    {"speaker": "Wren", "text": "Hey Ro!", "id": "D1:1"},
                    {"speaker": "Rosalind", "text": "Hi Wren.", "id": "D1:2"},
                ],
            },
            {
                "started_at": "1:14 pm on 25 May, 2023",
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "Back again"}]},
                    {"role": "assistant", "content": None},
                    {"role": "assistant", "content": "Welcome back", "ts": "2023-05-25T13:15:00Z"},
                ],
            },
        ]
    }


def test_conversation_json_is_one_document_with_sessions() -> None:
    [doc] = parse_input(json.dumps(_conversation()), source="conv.json")
    assert doc.content_type == "conversation"
    assert [c.key for c in doc.chunks] == ["D1:1", "D1:2", "t2", "t3"]
    assert [c.speaker for c in doc.chunks] == ["Wren", "Rosalind", "user", "assistant"]
    assert [c.session for c in doc.chunks] == [0, 0, 1, 1]
    assert [s.chunk_indexes for s in doc.sessions] == [[0, 1], [2, 3]]
    assert doc.sessions[0].started_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert doc.sessions[1].started_at == datetime(2023, 5, 25, 13, 14, tzinfo=UTC)
    assert doc.reference_time == doc.sessions[0].started_at
    assert doc.chunks[3].timestamp == datetime(2023, 5, 25, 13, 15, tzinfo=UTC)
    assert "Wren: Hey Ro!" in doc.text


def test_reference_time_argument_wins_and_naive_means_utc() -> None:
    [doc] = parse_input(
        json.dumps(_conversation()), source="c", reference_time=datetime(2024, 1, 2, 3, 4)
    )
    assert doc.reference_time == datetime(2024, 1, 2, 3, 4, tzinfo=UTC)
    assert doc.sessions[0].started_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def test_single_session_object_and_bare_message_list() -> None:
    messages = [{"speaker": "A", "text": "one"}, {"speaker": "B", "text": "two"}]
    [single] = parse_input(json.dumps({"messages": messages}), source="s", reference_time=REF)
    [bare] = parse_input(json.dumps(messages), source="b", reference_time=REF)
    for doc in (single, bare):
        assert doc.content_type == "conversation"
        assert [c.text for c in doc.chunks] == ["one", "two"]
        assert len(doc.sessions) == 1
        assert doc.sessions[0].started_at == REF


def test_a_list_of_conversations_gives_one_document_each() -> None:
    docs = parse_input(json.dumps([_conversation(), _conversation()]), source="all.json")
    assert [d.source for d in docs] == ["all.json#0", "all.json#1"]
    assert all(len(d.sessions) == 2 for d in docs)


def test_parse_when_forms() -> None:
    assert parse_when("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert parse_when("May 8, 2023") == datetime(2023, 5, 8, tzinfo=UTC)
    assert parse_when("12:05 am on 1 June, 2023") == datetime(2023, 6, 1, 0, 5, tzinfo=UTC)
    assert parse_when("14:05", REF) == datetime(2024, 3, 1, 14, 5, tzinfo=UTC)
    assert parse_when("not a date") is None


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"", "empty"),
        ("  \n\t ", "empty"),
        (b"abc\x00def", "offset 3"),
        ("héllo wörld".encode("latin-1"), "offset 1"),
        (bytes(range(1, 32)) * 10, "non-text"),
    ],
)
def test_bad_bytes_raise_invalid_input(data: bytes | str, fragment: str) -> None:
    with pytest.raises(InvalidInput, match=fragment):
        parse_input(data, source="bad")


def test_malformed_conversation_json_says_where() -> None:
    with pytest.raises(InvalidInput, match=r"line 2 column \d+"):
        parse_input('{"sessions": [\n  {"messages": [}', source="c.json", filename="c.json")
    with pytest.raises(InvalidInput, match="malformed JSON"):
        parse_input('{"sessions": [', source="c")  # no filename: the keys claim it


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({"foo": 1}, "neither a conversation"),
        ({"sessions": []}, "non-empty list"),
        ({"sessions": [{"started_at": "soon", "messages": []}]}, "ISO-8601"),
        ({"sessions": [{"messages": "hi"}]}, "messages"),
        ({"messages": [{"speaker": "A"}]}, r"messages\[0\] has no"),
        ({"messages": [{"speaker": "A", "text": " "}]}, "no messages with text"),
        (
            {"messages": [{"speaker": "A", "text": "x", "id": "1"}, {"text": "y", "id": "1"}]},
            "duplicate message id",
        ),
    ],
)
def test_bad_conversations_raise_invalid_input(payload: object, fragment: str) -> None:
    with pytest.raises(InvalidInput, match=fragment):
        parse_input(json.dumps(payload), source="c.json", filename="c.json")


def test_nul_characters_are_stripped_from_text() -> None:
    [doc] = parse_input("Hello\x00 world.", source="t", reference_time=REF)
    assert doc.chunks[0].text == "Hello world."


def test_utf8_bom_and_utf16_are_decoded() -> None:
    [doc] = parse_input("\ufeffHallo Welt.".encode(), source="t", reference_time=REF)
    assert doc.chunks[0].text == "Hallo Welt."
    [doc16] = parse_input("你好，世界。".encode("utf-16"), source="t", reference_time=REF)
    assert doc16.chunks[0].text == "你好，世界。"


def test_unknown_content_type_is_rejected() -> None:
    with pytest.raises(InvalidInput, match="content_type"):
        parse_input("x", source="t", content_type="pdf")


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.binary(max_size=300), st.text(max_size=300)))
def test_arbitrary_input_parses_or_raises_invalid_input(data: bytes | str) -> None:
    try:
        docs = parse_input(data, source="fuzz", reference_time=REF)
    except InvalidInput:
        return
    for doc in docs:
        assert doc.chunks or doc.content_type == "draft"
        assert all(c.text.strip() and "\x00" not in c.text for c in doc.chunks)
        assert len({c.key for c in doc.chunks}) == len(doc.chunks)


def test_iter_sources_walks_directories(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / ".hidden").mkdir()
    (tmp_path / "a.md").write_text("# A\n")
    (tmp_path / "b" / "c.txt").write_text("c")
    (tmp_path / "b" / "d.json").write_text("[]")
    (tmp_path / "b" / "image.png").write_bytes(b"\x89PNG")
    (tmp_path / ".hidden" / "e.txt").write_text("e")
    other = tmp_path / "notes.rst"
    other.write_text("explicit files are read whatever their extension")
    os.utime(tmp_path / "a.md", (1_700_000_000, 1_700_000_000))
    found = iter_sources([str(tmp_path), str(other)])
    names = [Path(s.name).relative_to(tmp_path).as_posix() for s in found]
    assert names == ["a.md", "b/c.txt", "b/d.json", "notes.rst"]
    assert found[0].data == b"# A\n"
    assert found[0].mtime == datetime.fromtimestamp(1_700_000_000, tz=UTC)


def test_iter_sources_rejects_missing_paths_and_empty_directories(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no such file"):
        iter_sources([str(tmp_path / "missing.md")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidInput, match=r"no \.txt"):
        iter_sources([str(tmp_path / "empty")])
