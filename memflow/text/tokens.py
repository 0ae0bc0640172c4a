"""Token counters for context budgets, chosen by name (``SearchOptions.token_counter``).

- ``words`` (the default, no dependency): every CJK character (Chinese, Japanese kana, Korean,
  CJK and full-width punctuation) is half a token, rounded up over the text; every other
  whitespace-separated word is one token.
- ``tiktoken``: OpenAI's ``cl100k_base`` BPE (the optional extra ``memflow[tiktoken]``). tiktoken
  downloads the BPE file on first use (or reads it from ``TIKTOKEN_CACHE_DIR``); without network
  and without that cache the counter cannot load and says so.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import cache
from typing import Literal, get_args

from memflow.errors import ConfigurationError

TokenCounterName = Literal["words", "tiktoken"]
TOKEN_COUNTERS: tuple[TokenCounterName, ...] = get_args(TokenCounterName)
TokenCounter = Callable[[str], int]
TIKTOKEN_ENCODING = "cl100k_base"

# CJK punctuation, kana, ideographs, Hangul, compatibility ideographs and full-width forms.
_CJK_CHAR = re.compile(
    r"[\u3001-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"
)


def count_words(text: str) -> int:
    """Approximate LLM tokens without a tokenizer (see the module doc). The count of a text
    joined from parts by whitespace is at most the sum of the parts' counts, so packing by summed
    counts never exceeds a budget."""
    cjk = len(_CJK_CHAR.findall(text))
    words = len(_CJK_CHAR.sub(" ", text).split())
    return words + math.ceil(cjk / 2)


@cache
def _tiktoken_counter() -> TokenCounter:
    try:
        import tiktoken
    except ImportError as exc:
        raise ConfigurationError(
            "token_counter='tiktoken' needs the tiktoken package: pip install 'memflow[tiktoken]', "
            "or use token_counter='words'"
        ) from exc
    try:
        encoding = tiktoken.get_encoding(TIKTOKEN_ENCODING)
    except Exception as exc:  # tiktoken raises requests' and its own errors here
        raise ConfigurationError(
            f"tiktoken could not load {TIKTOKEN_ENCODING!r} ({exc.__class__.__name__}): it downloads "
            "the BPE file on first use; allow that once or set TIKTOKEN_CACHE_DIR to a directory "
            "holding it, or use token_counter='words'"
        ) from exc

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    return count


def token_counter(name: str) -> TokenCounter:
    """The counter called ``name`` (one of :data:`TOKEN_COUNTERS`)."""
    if name == "words":
        return count_words
    if name == "tiktoken":
        return _tiktoken_counter()
    raise ConfigurationError(
        f"unknown token counter {name!r}: use one of {', '.join(TOKEN_COUNTERS)}"
    )


__all__ = [
    "TIKTOKEN_ENCODING",
    "TOKEN_COUNTERS",
    "TokenCounter",
    "TokenCounterName",
    "count_words",
    "token_counter",
]
