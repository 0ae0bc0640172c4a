"""Long statements cut into pieces an embedding model reads whole (issue 19: long turns).

Sizes are in "words": whitespace-separated words plus half a word per CJK character (Chinese
has no spaces; about two characters make a word). A text up to ``max_words`` stays whole;
a longer one is cut at sentence boundaries into pieces of about ``target_words`` (a sentence
longer than that is cut between words, or between characters for CJK).
"""

from __future__ import annotations

import re

from memflow.text.sentences import has_cjk, split_sentences

_CJK_RANGES = "\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK = re.compile(f"[{_CJK_RANGES}]")
_WORD = re.compile(r"\S+")
_CJK_PUNCT = "。！？；…，、：”’」』）】》"

LONG_WORDS = 120
TARGET_WORDS = 80


def text_size(text: str) -> float:
    """Words, counting a CJK character as half a word."""
    cjk = len(_CJK.findall(text))
    latin = sum(1 for w in _WORD.findall(text) if not _CJK.search(w))
    mixed = sum(1 for w in _WORD.findall(text) if _CJK.search(w) and _CJK.sub("", w).strip())
    return latin + mixed + cjk / 2


# One CJK character, or a run of other non-space characters.
_TOKEN = re.compile(f"[{_CJK_RANGES}]|[^\\s{_CJK_RANGES}]+")


def chars_within(text: str, words: float) -> int:
    """The length of the longest prefix of ``text`` that holds at most ``words`` words (a CJK
    character is half a word, as in :func:`text_size`): a budget that costs a Chinese
    text no more than an English one, where a character budget lets Chinese run three times
    as long in the model's tokens."""
    size = 0.0
    for m in _TOKEN.finditer(text):
        token = m.group()
        # A CJK character is half a word; a run of other characters one, if it has a letter or
        # digit (CJK punctuation between characters is not a word).
        size += 0.5 if _CJK.fullmatch(token) else float(any(c.isalnum() for c in token))
        if size > words:
            return m.start()
    return len(text)


def _join(parts: list[str]) -> str:
    """Sentences joined back: nothing between CJK neighbours (punctuation included), else a space."""
    out = ""
    for part in parts:
        if out and not ((has_cjk(out[-1]) or out[-1] in _CJK_PUNCT) and has_cjk(part[:1])):
            out += " "
        out += part
    return out


def _cut_sentence(sentence: str, target: float) -> list[str]:
    """A sentence longer than ``target`` words, cut between words (CJK: between characters)."""
    if has_cjk(sentence) and len(sentence.split()) < text_size(sentence) / 2:
        step = max(1, int(target * 2))
        return [sentence[i : i + step] for i in range(0, len(sentence), step)]
    words = sentence.split()
    step = max(1, int(target))
    return [" ".join(words[i : i + step]) for i in range(0, len(words), step)]


def split_long(
    text: str, max_words: float = LONG_WORDS, target_words: float = TARGET_WORDS
) -> list[str]:
    """``[text]`` when it has at most ``max_words``; else pieces of about ``target_words``."""
    if text_size(text) <= max_words:
        return [text]
    parts: list[tuple[str, float]] = []
    for sentence in split_sentences(text):
        size = text_size(sentence)
        if size > target_words:
            parts += [(p, text_size(p)) for p in _cut_sentence(sentence, target_words)]
        else:
            parts.append((sentence, size))
    pieces: list[list[str]] = []
    sizes: list[float] = []
    for sentence, size in parts:
        if pieces and sizes[-1] + size <= target_words:
            pieces[-1].append(sentence)
            sizes[-1] += size
        else:
            pieces.append([sentence])
            sizes.append(size)
    # A short tail joins the piece before it while that stays under max_words.
    if len(pieces) > 1 and sizes[-1] < target_words / 4 and sizes[-2] + sizes[-1] <= max_words:
        pieces[-2] += pieces.pop()
    return [_join(p) for p in pieces]


__all__ = ["LONG_WORDS", "TARGET_WORDS", "chars_within", "split_long", "text_size"]
