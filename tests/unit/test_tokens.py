"""Token counters for budgets (memflow.text.tokens) and the one the response reports."""

from __future__ import annotations

import sys

import pytest

from memflow.errors import ConfigurationError
from memflow.recall.options import SearchOptions
from memflow.recall.render import count_tokens
from memflow.text import tokens
from memflow.text.tokens import TOKEN_COUNTERS, count_words, token_counter


def test_words_is_the_default_counter() -> None:
    assert SearchOptions().token_counter == "words"
    assert token_counter("words") is count_words is count_tokens
    assert count_words("Ines paid the bill 昨天付了账") == 4 + 3
    assert TOKEN_COUNTERS == ("words", "tiktoken")


def test_unknown_counter_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="use one of words, tiktoken"):
        token_counter("bytes")
    with pytest.raises(ValueError):
        SearchOptions(token_counter="bytes")  # type: ignore[arg-type]


def test_tiktoken_without_the_package_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # import fails
    tokens._tiktoken_counter.cache_clear()
    try:
        with pytest.raises(ConfigurationError, match=r"memflow\[tiktoken\]"):
            token_counter("tiktoken")
    finally:
        tokens._tiktoken_counter.cache_clear()
