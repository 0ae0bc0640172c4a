"""Content terms of a text in any script, shared by the lexical mode and the unit rules.

- Words of alphabetic scripts (Latin, Cyrillic, Greek, …): lower-cased, a possessive ``'s``
  dropped, stop words dropped; :func:`content_terms` also cuts each to its first five letters, a
  crude stem that makes "paint", "painted" and "painting" one term without a language model.
- Runs of CJK ideographs: overlapping character bigrams (a one-character run stays whole), except
  bigrams made only of function characters (的, 了, 是, …). Chinese has no spaces, so bigrams are
  the usual unit of lexical overlap.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

# Ideographs (CJK unified, extension A, compatibility), kana and Hangul syllables.
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_WORD = re.compile(r"[^\W\d_]+(?:['’\-][^\W\d_]+)*", re.UNICODE)
STEM_LENGTH = 5

STOP_WORDS = frozenset(
    (
        "a an the and or but of to in on at for from by with about as is are was were be been "
        "being do does did done have has had what which who whom whose when where why how that "
        "this these those it its i you he she we they me him her us them my your his our their "
        "not no yes can could would should will shall may might must there here up out so just "
        "some any very really also than then too"
    ).split()
)
_CJK_FUNCTION = frozenset("的了是在我你他她它们这那有和与也就都而及吗呢吧啊么什怎哪个一不把被")


def words(text: str) -> list[str]:
    """Lower-cased words of the alphabetic scripts in ``text`` (CJK runs removed), possessive
    ``'s`` dropped, stop words kept: the lexical mode's tokens."""
    out = []
    for w in _WORD.findall(_CJK_RUN.sub(" ", text)):
        lw = w.lower().replace("’", "'")
        if lw.endswith("'s"):
            lw = lw[:-2]
        if lw:
            out.append(lw)
    return out


def cjk_bigrams(text: str) -> list[str]:
    """Character bigrams of every CJK run (a single character stays whole)."""
    out: list[str] = []
    for run in _CJK_RUN.findall(text):
        if len(run) == 1:
            out.append(run)
        out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def content_terms(text: str, exclude: Iterable[str] = ()) -> frozenset[str]:
    """Stemmed content words and CJK bigrams of ``text``, without stop words and without the
    terms of ``exclude`` (e.g. the speakers' names)."""
    skip = {t for e in exclude for t in _raw_terms(e)}
    return _terms_of(text) - skip if skip else _terms_of(text)


@functools.lru_cache(maxsize=8192)
def _terms_of(text: str) -> frozenset[str]:
    # (a search asks for the terms of the same facet titles and turns several times)
    return frozenset(_raw_terms(text))


def _raw_terms(text: str) -> set[str]:
    terms = {w[:STEM_LENGTH] for w in words(text) if len(w) > 1 and w not in STOP_WORDS}
    terms.update(b for b in cjk_bigrams(text) if not set(b) <= _CJK_FUNCTION)
    return terms


def mentions(query: str, name: str) -> bool:
    """Whether ``query`` names ``name``: as a whole word (any case) for alphabetic names, as a
    substring for CJK names; a multi-word name also matches by its first word ("Dr Ada Lin" is
    not matched by "Dr", but "Ada Lin" is matched by "Ada")."""
    name = name.strip()
    if not name:
        return False
    if _CJK_RUN.search(name):
        return name in query
    parts = [p for p in name.split() if len(p) > 2 and p.lower() not in STOP_WORDS]
    candidates = [name, *parts[:1]] if len(parts) > 1 else [name]
    return any(
        re.search(rf"(?<![\w]){re.escape(c)}(?![\w])", query, re.IGNORECASE) for c in candidates
    )


__all__ = ["STOP_WORDS", "cjk_bigrams", "content_terms", "mentions", "words"]
