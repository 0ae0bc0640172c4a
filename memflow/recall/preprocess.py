"""Query preprocessing (retrieval.md section 1): vector query, hybrid trigger, keywords, time.

Also the number-with-unit tokenizer shared with the exact-match bonus (``bonus.py``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, tzinfo
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from memflow.errors import InvalidInput
from memflow.recall.config import RecallConfig
from memflow.text.terms import STOP_WORDS, content_terms
from memflow.text.timeparse import TimeMatch, parse_time, resolve_tz

HybridReason = Literal["mixed_lang", "number", "short_query"]

# m_flow's Chinese question words, longest first so "为什么" goes before "什么"-free shorter ones.
CN_QUESTION_WORDS = (
    "是什么",
    "是啥",
    "什么是",
    "啥是",
    "怎么做",
    "怎样做",
    "如何做",
    "为什么",
    "为啥",
    "怎么",
    "怎样",
    "如何",
)
# "吗" / "呢" are only question particles at the end of a clause ("吗啡" is not a question).
_CN_PARTICLE = re.compile(r"[吗呢](?=\s*(?:[？?！!。，,；;]|$))")
_QUESTION_MARKS = re.compile(r"[？?]")

# English question and filler words: removed for keyword extraction only (the vector query keeps
# English words, as m_flow does).
EN_QUESTION_WORDS = frozenset(
    [
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "did",
        "does",
        "do",
        "done",
        "is",
        "are",
        "was",
        "were",
        "am",
        "be",
        "been",
        "being",
        "has",
        "have",
        "had",
        "can",
        "could",
        "would",
        "should",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "the",
        "a",
        "an",
        "any",
        "there",
        "this",
        "that",
        "these",
        "those",
        "i",
        "me",
        "my",
        "you",
        "your",
        "tell",
        "please",
        "many",
        "much",
    ]
)

# The defaults of the keywords below (one source: RecallConfig).
_DEFAULTS = RecallConfig()

_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")
_DIGIT = re.compile(r"\d")
_ALNUM_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-_.+/'][A-Za-z0-9]+)*\+*")
_SPACES = re.compile(r"\s+")

# Units a number may carry, mapped to one canonical unit so "3天" and "3 days" agree.
_UNIT_CANON: dict[str, str] = {
    "%": "%",
    "％": "%",
    "percent": "%",
    "万": "万",
    "亿": "亿",
    "千": "千",
    "百": "百",
    "k": "k",
    "m": "m",
    "b": "b",
    "bn": "b",
    "元": "yuan",
    "块": "yuan",
    "rmb": "yuan",
    "yuan": "yuan",
    "usd": "usd",
    "dollars": "usd",
    "次": "times",
    "times": "times",
    "倍": "x",
    "x": "x",
    "个": "个",
    "人": "people",
    "people": "people",
    "岁": "岁",
    "条": "条",
    "篇": "篇",
    "页": "页",
    "张": "张",
    "台": "台",
    "份": "份",
    "家": "家",
    "毫秒": "ms",
    "ms": "ms",
    "秒": "s",
    "s": "s",
    "sec": "s",
    "secs": "s",
    "second": "s",
    "seconds": "s",
    "分钟": "min",
    "min": "min",
    "mins": "min",
    "minute": "min",
    "minutes": "min",
    "小时": "h",
    "个小时": "h",
    "h": "h",
    "hr": "h",
    "hrs": "h",
    "hour": "h",
    "hours": "h",
    "天": "day",
    "day": "day",
    "days": "day",
    "周": "week",
    "个星期": "week",
    "week": "week",
    "weeks": "week",
    "个月": "month",
    "月": "month",
    "month": "month",
    "months": "month",
    "年": "year",
    "year": "year",
    "years": "year",
    "日": "日",
    "号": "日",
    "kb": "kb",
    "mb": "mb",
    "gb": "gb",
    "tb": "tb",
    "km": "km",
    "kg": "kg",
}
_UNIT_ALT = "|".join(re.escape(u) for u in sorted(_UNIT_CANON, key=len, reverse=True))
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.:\-])(?P<num>\d+(?:,\d{3})*(?:\.\d+)?)"
    rf"(?:\s?(?P<unit>{_UNIT_ALT}))?(?![A-Za-z0-9]|:\d|\.\d)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class NumberToken:
    """A number in a text with its canonical value ("1,000.50" -> "1000.5") and unit."""

    text: str
    value: str
    unit: str | None
    pos: tuple[int, int]


def _canonical_value(num: str) -> str:
    try:
        value = Decimal(num.replace(",", "")).normalize()
    except InvalidOperation:
        return num
    return format(value, "f")


def extract_numbers(text: str) -> list[NumberToken]:
    """Numbers with their unit: "40万", "500ms", "500 ms", "3 次", "20%", bare "2023"."""
    out: list[NumberToken] = []
    for m in _NUMBER.finditer(text):
        unit = m["unit"]
        out.append(
            NumberToken(
                text=m[0],
                value=_canonical_value(m["num"]),
                unit=_UNIT_CANON[unit.lower()] if unit else None,
                pos=(m.start(), m.end()),
            )
        )
    return out


# Literals: what a question names exactly and a note writes the same way in any language (an
# id, a version, an amount, a percentage). Each has its written form and a normalised value:
# "INC-7731" / "inc7731", "2.8.0" / "2.8", "40万" / "400000", "€615,000" / "615000", "3.5%".
_AMOUNT = re.compile(
    r"(?<![A-Za-z0-9_.,\-:/])(?P<cur>[€$¥£])?\s?(?P<num>\d+(?:,\d{3})*(?:\.\d+)?)"
    r"(?:\s?(?P<mult>万|亿|千|k|K|million|mln|bn)(?![A-Za-z])|\s?(?P<pct>%|％|percent))?"
    r"(?![A-Za-z0-9_\-/:]|[.,]\d)"
)
_MULTIPLIER = {"万": 10_000, "亿": 100_000_000, "千": 1000, "k": 1000, "million": 1_000_000,
               "mln": 1_000_000, "bn": 1_000_000_000}  # fmt: skip
_ID = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2,}[-_]?\d{2,}[A-Za-z0-9]*(?![A-Za-z0-9])")
_VERSION = re.compile(r"(?<![A-Za-z0-9_.])[vV]?(\d+\.\d+(?:\.\d+)+)(?![A-Za-z0-9_]|\.\d)")


@dataclass(frozen=True, slots=True)
class LiteralToken:
    """A literal of a text: its written form (lower-cased, no spaces) and normalised value."""

    form: str
    value: str


# Chinese measure words that make a number a count ("1900 个订单", "2000 条"), never a year.
_COUNTED = re.compile(r"\s?[个位人条次家件笔单台项行张份篇页辆]")


def _amount(m: re.Match[str]) -> LiteralToken | None:
    num, cur, mult, pct = m["num"], m["cur"], m["mult"], m["pct"]
    plain = num.replace(",", "")
    bare = not (cur or mult or pct or "," in num or "." in num)
    # a bare integer: a literal from three digits on; a year is not one, a count is
    year = bare and len(plain) == 4 and 1900 <= int(plain) <= 2100
    if bare and (len(plain) < 3 or (year and not _COUNTED.match(m.string, m.end()))):
        return None
    try:
        value = Decimal(plain) * _MULTIPLIER.get((mult or "").lower(), 1)
    except InvalidOperation:
        return None
    norm = format(value.normalize(), "f") + ("%" if pct else "")
    return LiteralToken(_SPACES.sub("", m[0]).lower().replace("％", "%"), norm)


# Currencies, however a language writes them: a question "in euros" / "多少欧元" names a unit
# that a note writes as "€".
_CURRENCIES = {
    "eur": re.compile(r"€|\beur\b|\beuros?\b|欧元", re.IGNORECASE),
    "usd": re.compile(r"\$|\busd\b|\bdollars?\b|美元", re.IGNORECASE),
    "cny": re.compile(r"[¥￥]|\b(?:cny|rmb|yuan)\b|人民币|\d\s*[万千亿]?元", re.IGNORECASE),
}


@lru_cache(maxsize=16384)
def currencies(text: str) -> frozenset[str]:
    """The currencies ``text`` names or writes an amount in ("eur", "usd", "cny")."""
    return frozenset(name for name, pattern in _CURRENCIES.items() if pattern.search(text))


def extract_literals(text: str) -> frozenset[LiteralToken]:
    """Ids ("INC-7731"), versions ("2.8.0"), amounts and percentages ("40万", "€615,000",
    "3.5%"), decimals and integers of three digits or more (not years) in ``text``, read in
    its NFKC form (full-width "ＩＮＣ－７７３１" and "４０万" are "INC-7731" and "40万")."""
    text = unicodedata.normalize("NFKC", text)
    out: set[LiteralToken] = set()
    for m in _ID.finditer(text):
        out.add(LiteralToken(m[0].lower(), re.sub(r"[-_]", "", m[0].lower())))
    versions = [(m.start(), m.end()) for m in _VERSION.finditer(text)]
    for m in _VERSION.finditer(text):
        out.add(LiteralToken(m[1], re.sub(r"(?:\.0)+$", "", m[1])))
    for m in _AMOUNT.finditer(text):
        if any(lo <= m.start("num") < hi for lo, hi in versions):
            continue
        lit = _amount(m)
        if lit is not None:
            out.add(lit)
    return frozenset(out)


# Months, however a language writes them: "October", "Oct 3", "2024-10-24", "10月17日", "十月".
# A question in one language names the month that a note in the other writes in a date.
_MONTH_NUMBER = {
    name: i + 1
    for i, full in enumerate(
        "January February March April May June July August September October November "
        "December".split()
    )
    for name in (full, full[:3], "Sept" if i == 8 else full)
}
_MONTH_WORD = re.compile(
    r"(?<![A-Za-z])(" + "|".join(sorted(_MONTH_NUMBER, key=len, reverse=True)) + r")\.?(?![A-Za-z])"
)
_MONTH_ISO = re.compile(r"(?<![\d.\-])(?:19|20)\d{2}-(0?[1-9]|1[0-2])(?:-\d{1,2})?(?![\d.\-])")
_CN_DIGIT = {c: i + 1 for i, c in enumerate("一二三四五六七八九")}
# "10月", "十月", "十二月"; not a duration ("3个月") nor "每月" / "上月".
_MONTH_CJK = re.compile(
    r"(?<![\d个几每上下本这那])(1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])\s?月"
)


def _cn_month(text: str) -> int:
    if text.isdigit():
        return int(text)
    return 10 + _CN_DIGIT.get(text[1:], 0) if text.startswith("十") else _CN_DIGIT[text]


@lru_cache(maxsize=16384)
def months(text: str) -> frozenset[int]:
    """The months (1-12) ``text`` names or writes a date in: an English month name or its
    abbreviation (capitalised: the verb "may" is not May), an ISO date, or "10月" / "十月"."""
    text = unicodedata.normalize("NFKC", text)
    found = {_MONTH_NUMBER[m[1]] for m in _MONTH_WORD.finditer(text)}
    found |= {int(m[1]) for m in _MONTH_ISO.finditer(text)}
    found |= {_cn_month(m[1]) for m in _MONTH_CJK.finditer(text)}
    return frozenset(found)


# Names across scripts: a Latin word with a capital ("Guilin", "Xi'an") is the pinyin of a
# span of 2-4 Chinese characters in a text of the other script ("桂林"): tone-less syllables,
# joined, case-insensitive, every reading of a character with several. A span never holds a
# function character ("我们" is not the word "Women"). pypinyin is imported on first use only:
# callers ask only when a store holds both scripts.
_NAME_WORD = re.compile(r"(?<![A-Za-z0-9])[A-Z][a-z]+(?:['’][a-z]+)?(?![A-Za-z0-9])")
_HAN_RUN = re.compile(r"[\u4e00-\u9fff]+")
_NAME_BREAKS = frozenset("的了是在我你他她它们这那有和与也就都而及吗呢吧啊么什怎哪个一不把被每")
NAME_SPAN = (2, 4)


def latin_names(text: str) -> frozenset[str]:
    """The capitalised Latin words of ``text``, lower-cased without apostrophes ("Xi'an" ->
    "xian"), stop words and English question words aside: the words that may be a name."""
    out = set()
    for m in _NAME_WORD.finditer(text):
        word = m[0].lower().replace("'", "").replace("’", "")
        if word not in EN_QUESTION_WORDS and word not in STOP_WORDS:
            out.add(word)
    return frozenset(out)


@lru_cache(maxsize=8192)
def _readings(char: str) -> tuple[str, ...]:
    """The tone-less pinyin readings of a Chinese character ("绿" -> "lv", "lu")."""
    from pypinyin import Style, pinyin  # a store of two scripts only (CLI start)

    found = pinyin(char, style=Style.NORMAL, heteronym=True, errors="ignore")
    out = dict.fromkeys(r for r in (found[0] if found else []) if r.isascii() and r.isalpha())
    out.update(dict.fromkeys(r.replace("v", "u") for r in list(out)))
    return tuple(out)


def _spelled_from(word: str, chars: str, at: int, depth: int) -> bool:
    """Whether ``word`` is the joined readings of ``chars[at:]``'s first 2-4 characters."""
    if not word:
        return depth >= NAME_SPAN[0]
    if depth == NAME_SPAN[1] or at >= len(chars) or chars[at] in _NAME_BREAKS:
        return False
    return any(
        word.startswith(r) and _spelled_from(word[len(r) :], chars, at + 1, depth + 1)
        for r in _readings(chars[at])
    )


@lru_cache(maxsize=16384)
def pinyin_names(names: frozenset[str], text: str) -> int:
    """How many of ``names`` (:func:`latin_names`) ``text`` writes in Chinese characters: each
    the pinyin of a span of 2-4 characters ("guilin" and "桂林团队")."""
    if not names:
        return 0
    runs = _HAN_RUN.findall(text)
    if not runs:
        return 0
    return sum(
        1
        for name in names
        if any(_spelled_from(name, run, i, 0) for run in runs for i in range(len(run)))
    )


_CJK_SCRIPT = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_LETTER = re.compile(r"[^\W\d_]")


@lru_cache(maxsize=16384)
def is_cjk_text(text: str) -> bool:
    """Whether a text is written in a CJK script: a CJK character for every three other
    letters or more ("Zephyrix 只跑夜间构建" is Chinese, "the 23万 grant" is not)."""
    if _CJK_SCRIPT.search(text) is None:
        return False
    cjk = len(_CJK_SCRIPT.findall(text))
    return 3 * cjk >= len(_LETTER.findall(text)) - cjk


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


def latin_terms(text: str) -> list[str]:
    """Tokens with a Latin letter, kept whole ("GPT-4o", "API", "500ms", "C++"), minus English
    question words."""
    return _dedupe(
        t
        for t in _ALNUM_TOKEN.findall(text)
        if _LATIN.search(t) and t.lower() not in EN_QUESTION_WORDS
    )


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = item.casefold()
        if key and key not in seen:
            seen.add(key)
            out.append(item)
    return out


class PreprocessedQuery(BaseModel):
    model_config = ConfigDict(frozen=True)

    original: str
    vector_query: str
    keywords: list[str]
    hybrid_reason: HybridReason | None
    use_hybrid: bool
    time: TimeMatch | None = None


def strip_cn_question_words(text: str) -> str:
    for word in CN_QUESTION_WORDS:
        text = text.replace(word, "")
    text = _CN_PARTICLE.sub("", text)
    return _QUESTION_MARKS.sub(" ", text)


def _strip_punct(text: str) -> str:
    return "".join(ch for ch in text if not unicodedata.category(ch).startswith(("P", "S")))


def _strip_edge_punct(word: str) -> str:
    lo, hi = 0, len(word)
    while lo < hi and unicodedata.category(word[lo]).startswith("P"):
        lo += 1
    while hi > lo and unicodedata.category(word[hi - 1]).startswith("P"):
        hi -= 1
    return word[lo:hi]


def query_core(query: str) -> str:
    """The query without question words (Chinese and English) and surrounding punctuation."""
    words = [_strip_edge_punct(w) for w in strip_cn_question_words(query).split()]
    return " ".join(w for w in words if w and w.lower() not in EN_QUESTION_WORDS)


# Chinese question words query_core keeps ("多少", "哪些", "谁"), and the function characters that
# mark a CJK bigram as straddling two words ("的负", "人是"): neither names a question's subject.
_CN_ASKING = re.compile(r"多少|几[个位天次]?|哪[些个类里儿]?|谁|为什么|什么|怎么|如何")
_CJK_JOINERS = frozenset("的了是在和与也就都而及吗呢吧啊么")


@lru_cache(maxsize=4096)
def subject_terms(query: str) -> frozenset[str]:
    """The content terms (:func:`memflow.text.terms.content_terms`) of what the question is
    about: its core (:func:`query_core`) without Chinese question words, and no CJK bigram
    holding a function character."""
    terms = content_terms(_CN_ASKING.sub(" ", query_core(query)))
    return frozenset(t for t in terms if not (has_cjk(t) and set(t) & _CJK_JOINERS))


def hybrid_reason(
    query: str, short_chars: int = _DEFAULTS.short_query_chars
) -> HybridReason | None:
    """mixed_lang, then number, then short_query (at most ``short_chars`` characters of core),
    else None."""
    if _CJK.search(query) and _LATIN.search(query):
        return "mixed_lang"
    if _DIGIT.search(query):
        return "number"
    core = _strip_punct(query_core(query)).replace(" ", "")
    if 0 < len(core) <= short_chars:
        return "short_query"
    return None


def extract_keywords(query: str, reason: HybridReason | None) -> list[str]:
    """Keywords for the keyword bonus, each its own list item (never glued together)."""
    if reason == "mixed_lang":
        return _latin_keywords(query)
    if reason == "number":
        numbers = extract_numbers(query)
        covered = [n.pos for n in numbers]
        codes = [
            m[0]
            for m in _ALNUM_TOKEN.finditer(query)
            if _LATIN.search(m[0])
            and _DIGIT.search(m[0])
            and not any(lo <= m.start() < hi for lo, hi in covered)
        ]
        return _dedupe([*(n.text for n in numbers), *codes])
    if reason == "short_query":
        core = query_core(query)
        return [core] if core else []
    return []


def _latin_keywords(query: str) -> list[str]:
    """Latin terms; a Latin unit after a number ("500 ms") stays with its number."""
    with_unit = [n for n in extract_numbers(query) if n.unit and _LATIN.search(n.text)]
    out: list[str] = []
    for m in _ALNUM_TOKEN.finditer(query):
        if not _LATIN.search(m[0]) or m[0].lower() in EN_QUESTION_WORDS:
            continue
        owner = next((n for n in with_unit if n.pos[0] <= m.start() < n.pos[1]), None)
        out.append(owner.text if owner else m[0])
    return _dedupe(out)


def _remove_spans(text: str, spans: list[tuple[int, int]]) -> str:
    for lo, hi in sorted(spans, reverse=True):
        text = text[:lo] + " " + text[hi:]
    return text


def build_vector_query(query: str, times: list[TimeMatch]) -> str:
    """Question words and time expressions removed; the original when nothing is left."""
    text = strip_cn_question_words(_remove_spans(query, [t.pos for t in times]))
    text = _SPACES.sub(" ", text).strip(" ,，、;；:：")
    return text if _strip_punct(text).strip() else query.strip()


def preprocess(
    query: str,
    now: datetime | None = None,
    tz: str | tzinfo = "UTC",
    *,
    time_confidence_min: float = _DEFAULTS.time_confidence_min,
    short_query_chars: int = _DEFAULTS.short_query_chars,
) -> PreprocessedQuery:
    """Turn a user query into the vector query, keywords, hybrid reason and time span (the
    keyword defaults are ``RecallConfig``'s)."""
    if not query or not query.strip():
        raise InvalidInput("the query is empty: pass the question to search for")
    zone = resolve_tz(tz)
    ref = now or datetime.now(zone)
    times = [t for t in parse_time(query, ref, zone) if t.confidence >= time_confidence_min]
    reason = hybrid_reason(query, short_query_chars)
    keywords = extract_keywords(query, reason)
    return PreprocessedQuery(
        original=query,
        vector_query=build_vector_query(query, times),
        keywords=keywords,
        hybrid_reason=reason,
        use_hybrid=reason is not None and bool(keywords),
        time=min(times, key=lambda t: (-t.confidence, t.pos[0])) if times else None,
    )


__all__ = [
    "CN_QUESTION_WORDS",
    "EN_QUESTION_WORDS",
    "HybridReason",
    "LiteralToken",
    "NumberToken",
    "PreprocessedQuery",
    "build_vector_query",
    "currencies",
    "extract_keywords",
    "extract_literals",
    "extract_numbers",
    "has_cjk",
    "hybrid_reason",
    "is_cjk_text",
    "latin_names",
    "latin_terms",
    "months",
    "pinyin_names",
    "preprocess",
    "query_core",
    "strip_cn_question_words",
    "subject_terms",
]
