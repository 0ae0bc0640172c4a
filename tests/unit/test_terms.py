"""Content terms in any script (memflow.text.terms): words, CJK bigrams, stems, name mentions."""

from __future__ import annotations

import pytest

from memflow.text.terms import STOP_WORDS, cjk_bigrams, content_terms, mentions, words


def test_words_lower_case_drop_possessives_and_cjk() -> None:
    assert words("Ada's paintings, a well-known café; 王芳说 OK") == [
        "ada",
        "paintings",
        "a",
        "well-known",
        "café",
        "ok",
    ]
    assert words("Ada’s kiln") == ["ada", "kiln"]  # typographic apostrophe
    assert words("R2D2 ran 5 km in 2031") == ["r", "d", "ran", "km", "in"]  # letters only
    assert words("Привет, мир! Γειά σου") == ["привет", "мир", "γειά", "σου"]
    assert words("") == []


def test_cjk_bigrams() -> None:
    assert cjk_bigrams("海边画画") == ["海边", "边画", "画画"]
    assert cjk_bigrams("王芳，好") == ["王芳", "好"]  # a one-character run stays whole
    assert cjk_bigrams("Kiln 烧窑 v2 日出") == ["烧窑", "日出"]
    assert cjk_bigrams("カメラ") == ["カメ", "メラ"]  # kana runs too
    assert cjk_bigrams("no ideographs here") == []


def test_content_terms_stem_and_drop_stop_words() -> None:
    assert content_terms("Did Tomas paint, or was he painting the harbour?") == {
        "tomas",
        "paint",
        "harbo",
    }
    assert content_terms("painted") == content_terms("paintings") == {"paint"}
    assert content_terms("the of and a I") == frozenset()
    assert {"the", "what", "could"} <= STOP_WORDS


def test_content_terms_of_chinese_are_bigrams_without_function_pairs() -> None:
    # 我的 and 你们 are function characters only: dropped; 去了 keeps its content character.
    assert content_terms("我的你们") == frozenset()
    assert content_terms("李雷去了海边") == {"李雷", "雷去", "去了", "了海", "海边"}


def test_content_terms_exclude_names() -> None:
    assert content_terms("What did Dr Ada Lin bake?", ["Dr Ada Lin"]) == {"bake"}
    assert content_terms("王芳周末烤了面包", ["王芳"]) == {
        "芳周",
        "周末",
        "末烤",
        "烤了",
        "了面",
        "面包",
    }


@pytest.mark.parametrize(
    ("query", "name", "named"),
    [
        ("What did Dr Ada Lin bake?", "Dr Ada Lin", True),  # full name
        ("What did Ada bake?", "Dr Ada Lin", True),  # first name (the title is not one)
        ("what did ada bake?", "Dr Ada Lin", True),  # any case
        ("Ask the Dr about it", "Dr Ada Lin", False),  # a title alone
        ("Was Lin there?", "Dr Ada Lin", False),  # only the first name stands for the person
        ("Did Adam bake?", "Dr Ada Lin", False),  # whole words only
        ("Where did Tomas sail?", "Tomas", True),
        ("Where did Tomasz sail?", "Tomas", False),
        ("王芳周末去了哪里？", "王芳", True),  # CJK: a substring
        ("Did 王芳 go?", "王芳", True),
        ("王先生去了哪里？", "王芳", False),
        ("Where did Ada go?", "   ", False),
    ],
)
def test_mentions(query: str, name: str, named: bool) -> None:
    assert mentions(query, name) is named
