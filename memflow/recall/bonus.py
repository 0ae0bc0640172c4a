"""Score normalisation and the rule-based bonuses on vector hits (retrieval.md sections 3-4).

Scores are distances: every bonus subtracts. Bonuses never touch the ``Edge_text`` collection.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from uuid import UUID

from memflow.recall.config import RecallConfig
from memflow.recall.preprocess import (
    LiteralToken,
    NumberToken,
    PreprocessedQuery,
    currencies,
    extract_literals,
    extract_numbers,
    has_cjk,
    is_cjk_text,
    latin_names,
    latin_terms,
    months,
    pinyin_names,
    subject_terms,
)
from memflow.recall.types import COLLECTIONS, EDGE_COLLECTION, Hit
from memflow.text.terms import STOP_WORDS, content_terms

_MATCH_DROP = re.compile(r"[\s，,。.；;：:！!？?、]")
TITLE_COLLECTION = "Facet_search_text"
WINDOW_COLLECTION = "Facet_anchor_text"
POINT_COLLECTION = "FacetPoint_search_text"
_FACET_COLLECTIONS = (TITLE_COLLECTION, WINDOW_COLLECTION)
_COLLECTION_ORDER = {name: i for i, name in enumerate(COLLECTIONS)}


def collection_bounds(hits: Iterable[Hit]) -> dict[str, tuple[float, float]]:
    """(best, worst) raw distance of each collection's hits."""
    bounds: dict[str, tuple[float, float]] = {}
    for h in hits:
        lo, hi = bounds.get(h.collection, (h.distance, h.distance))
        bounds[h.collection] = (min(lo, h.distance), max(hi, h.distance))
    return bounds


def normalize_for_match(text: str) -> str:
    """Lower-case, drop whitespace and common punctuation (the keyword-bonus comparison form)."""
    return _MATCH_DROP.sub("", unicodedata.normalize("NFKC", text).casefold())


def keyword_matches(keywords: Iterable[str], text: str) -> bool:
    norm = normalize_for_match(text)
    return any(k and k in norm for k in (normalize_for_match(k) for k in keywords))


@lru_cache(maxsize=8192)
def _text_numbers(text: str) -> tuple[frozenset[tuple[str, str | None]], frozenset[str]]:
    """(value, unit) pairs and bare values of the numbers in a text (cached: hit texts repeat)."""
    found = extract_numbers(text)
    return frozenset((n.value, n.unit) for n in found), frozenset(n.value for n in found)


def number_bonus(query_numbers: Sequence[NumberToken], text: str, config: RecallConfig) -> float:
    """Per query number: same value and unit in the text -> same_unit, same value only ->
    other_unit; the total is capped at number_bonus_floor."""
    if not query_numbers:
        return 0.0
    pairs, values = _text_numbers(text)
    total = 0.0
    for value, unit in dict.fromkeys((q.value, q.unit) for q in query_numbers):
        if (value, unit) in pairs:
            total += config.number_same_unit
        elif value in values:
            total += config.number_other_unit
    return min(total, config.number_bonus_floor)


@lru_cache(maxsize=8192)
def _text_literals(text: str) -> tuple[frozenset[str], frozenset[str]]:
    found = extract_literals(text)
    return frozenset(x.form for x in found), frozenset(x.value for x in found)


def literal_bonus(literals: frozenset[LiteralToken], text: str, config: RecallConfig) -> float:
    """What the query's literals found in ``text`` take off its score: ``literal_bonus`` per
    literal written the same way, ``literal_value_share`` of it when only the value agrees,
    capped at ``literal_bonus_max``."""
    if not literals:
        return 0.0
    forms, values = _text_literals(text)
    total = 0.0
    for lit in literals:
        if lit.form in forms:
            total += config.literal_bonus
        elif lit.value in values:
            total += config.literal_bonus * config.literal_value_share
    return min(total, config.literal_bonus_max)


def _term_patterns(terms: Sequence[str]) -> list[re.Pattern[str]]:
    return [
        re.compile(rf"(?<![A-Za-z0-9]){re.escape(t)}(?![A-Za-z0-9])", re.IGNORECASE) for t in terms
    ]


def term_bonus(terms: Sequence[str], text: str, config: RecallConfig) -> float:
    """English terms of a CJK query found as whole tokens in the text, capped."""
    return _term_bonus(_term_patterns(terms), text, config)


def _term_bonus(patterns: Sequence[re.Pattern[str]], text: str, config: RecallConfig) -> float:
    hits = sum(1 for p in patterns if p.search(text))
    return min(hits * config.english_term_bonus, config.english_term_max)


def language_shifts(hits: Iterable[Hit], query: str, config: RecallConfig) -> dict[str, float]:
    """Per collection, how much nearer a text in another script than the query's moves (see
    ``RecallConfig.language_shift``; :func:`memflow.recall.preprocess.is_cjk_text` tells the
    scripts apart). A collection with hits in one script only moves nothing."""
    if not config.language_shift:
        return {}
    own = is_cjk_text(query)
    groups: dict[tuple[str, bool], list[float]] = {}
    for h in hits:
        if h.collection != EDGE_COLLECTION:
            groups.setdefault((h.collection, is_cjk_text(h.text)), []).append(h.distance)
    shifts: dict[str, float] = {}
    for (collection, cjk), other in groups.items():
        mine = groups.get((collection, own))
        if cjk == own or not mine:
            continue
        gap = _top_mean(other, config.language_shift_top) - _top_mean(
            mine, config.language_shift_top
        )
        if gap > 0:
            shifts[collection] = gap * config.language_shift
    return shifts


@lru_cache(maxsize=16384)
def _terms(text: str) -> frozenset[str]:
    return content_terms(text)


def uncovered_share(hits: Iterable[Hit], query: str) -> float:
    """The share of the question's subject terms (:func:`memflow.recall.preprocess.subject_terms`)
    that no recalled text in the query's own script contains (a word's stem also counts when
    one is the start of the other: "fail" / "faile"): words its own language has no note for,
    so the answer is more likely written in the other one."""
    terms = subject_terms(query)
    if not terms:
        return 0.0
    own = is_cjk_text(query)
    seen: set[str] = set()
    for h in hits:
        if is_cjk_text(h.text) == own:
            seen |= _terms(h.text)
    words = [u for u in seen if not has_cjk(u)]

    def covered(t: str) -> bool:
        return t in seen or (
            not has_cjk(t) and any(u.startswith(t) or t.startswith(u) for u in words)
        )

    return sum(1 for t in terms if not covered(t)) / len(terms)


def _crossing_patterns(query: str) -> list[re.Pattern[str]]:
    """The query's words in Latin letters, stop words aside, as whole-token patterns: a word
    with a capital ("VPN", "Zephyrix", "App") keeps its case (names and acronyms keep it in any
    language; the common word "app" in an English note is not the name "App")."""
    return [
        re.compile(
            rf"(?<![A-Za-z0-9]){re.escape(t)}(?![A-Za-z0-9])",
            0 if t != t.lower() else re.IGNORECASE,
        )
        for t in latin_terms(query)
        if len(t) > 1 and t.lower() not in STOP_WORDS
    ]


def _names_across(
    hits: Sequence[Hit], query: str, config: RecallConfig
) -> Callable[[str], int] | None:
    """How many names a hit of the other script shares with the query, one written in Latin
    letters and the other in Chinese characters (:func:`memflow.recall.preprocess.pinyin_names`:
    "Guilin" / "桂林"); None, and pinyin never loaded, unless the hits hold both scripts (a
    store of one script is left as it is) and the query may name one."""
    if not config.cross_name_words:
        return None
    scripts = {is_cjk_text(h.text) for h in hits if h.collection != EDGE_COLLECTION}
    if len(scripts) < 2:
        return None
    if not is_cjk_text(query):
        asked = latin_names(query)
        return (lambda text: pinyin_names(asked, text)) if asked else None
    if not has_cjk(query):
        return None
    return lambda text: pinyin_names(latin_names(text), query)


def _crossed_words(
    hits: Sequence[Hit], pq: PreprocessedQuery, config: RecallConfig
) -> Callable[[str], float] | None:
    """How many of the query's words a text of the other script holds, each having crossed the
    language boundary with the fact (see ``RecallConfig.cross_term_bonus``): its Latin words,
    the currency and the month it names, its names in the other script's letters (those count
    ``cross_name_words`` each). None when the query has none of these."""
    money = currencies(pq.original)
    # A month shared across scripts counts only when the question names no day: a dated
    # question is anchored by its day (recall.temporal), and its month would favour every
    # other-script note that mentions any day of that month.
    month = months(pq.original) if pq.time is None or pq.time.kind != "date" else frozenset()
    crossing = _crossing_patterns(pq.original)
    names = _names_across(hits, pq.original, config)
    figures = _figures(pq.original)
    if not (crossing or money or month or names or figures):
        return None

    def found(text: str) -> float:
        return (
            sum(1 for p in crossing if p.search(text))
            + bool(money & currencies(text))
            + bool(month & months(text))
            + (names(text) * config.cross_name_words if names else 0)
            + (len(figures & _text_numbers(text)[0]) if figures else 0)
        )

    return found


# Units that make a figure a measure ("7 days", "35 分钟", "6 人"), not a multiplier or a
# share (literals: "40万", "3.5%"), nor a date's month or day ("10月17日").
_NOT_MEASURES = frozenset({"%", "万", "亿", "千", "百", "k", "m", "b", "month", "日"})


def _figures(query: str) -> frozenset[tuple[str, str | None]]:
    """The (value, unit) of each figure the query gives with a unit of measure, but for those
    that are literals already ("500 ms": the literal 500 counts, :func:`literal_bonus`)."""
    literal = {x.value for x in extract_literals(query)}
    return frozenset(
        (n.value, n.unit)
        for n in extract_numbers(query)
        if n.unit is not None and n.unit not in _NOT_MEASURES and n.value not in literal
    )


def _facet_evidence(
    hits: Sequence[Hit],
    own: bool,
    crossed: Callable[[str], float] | None,
    literals: frozenset[LiteralToken],
    config: RecallConfig,
) -> tuple[dict[UUID, tuple[float, float]], list[tuple[str, tuple[float, float]]]]:
    """What the title of each facet holds of the query (an id or a city in a note's title is
    about every statement under it): (words that crossed scripts, literal bonus), by facet id;
    and the facets' windows, with it: a statement found in such a window (every FacetPoint of
    a facet is a piece of its window) holds it too. Titles of the other script than the
    query's, and where the hits hold both scripts those of its own script for their literals
    (a store in two languages repeats an id or a version across notes: the one whose title
    names it is about it). Only titles: a word somewhere in a long window is no more about each
    of its statements than about others (measured on the seed store, a mixed one: windows too
    reorder 26 of its 930 searches below the first result, titles alone none)."""
    both = bool(literals) and _both_scripts(hits)
    facets: dict[UUID, tuple[float, float]] = {}
    for h in hits:
        if h.collection != TITLE_COLLECTION or not h.node_id:
            continue
        other = is_cjk_text(h.text) != own
        if other or both:
            found = crossed(h.text) if crossed and other else 0.0
            lit = literal_bonus(literals, h.text, config)
            if found or lit:
                facets[h.node_id] = (found, lit)
    windows = [
        (h.text, facets[h.node_id])
        for h in hits
        if h.collection == WINDOW_COLLECTION and h.node_id in facets
    ]
    return facets, windows


def _both_scripts(hits: Iterable[Hit]) -> bool:
    """Whether the hits (edge texts aside) hold texts of both scripts, CJK and other."""
    scripts = set()
    for h in hits:
        if h.collection != EDGE_COLLECTION:
            scripts.add(is_cjk_text(h.text))
            if len(scripts) > 1:
                return True
    return False


def _held(
    h: Hit, facets: dict[UUID, tuple[float, float]], windows: list[tuple[str, tuple[float, float]]]
) -> tuple[float, float] | None:
    """What the facet of ``h`` holds (:func:`_facet_evidence`): a title's or window's own
    facet, a statement's window."""
    if h.collection in _FACET_COLLECTIONS:
        return facets.get(h.node_id) if h.node_id else None
    if h.collection == POINT_COLLECTION:
        return next((held for window, held in windows if h.text in window), None)
    return None


def _top_mean(values: list[float], n: int) -> float:
    best = sorted(values)[:n]
    return sum(best) / len(best)


def apply_bonuses(hits: Sequence[Hit], pq: PreprocessedQuery, config: RecallConfig) -> list[Hit]:
    """Scores from raw distances, less the rule-based bonuses: keyword bonus (hybrid queries),
    then the exact-match bonus against the original query for hits at least
    ``exact_match_min_score`` into their collection's spread. A bonus is a share of the spread
    between the collection's best and worst hit (the scale m_flow's min-max scores give them),
    and no bonus takes a score below the collection's best distance."""
    shifts = language_shifts(hits, pq.original, config)
    if shifts and config.cross_title_bonus:
        share = uncovered_share(hits, pq.original)
        shifts[TITLE_COLLECTION] = (
            shifts.get(TITLE_COLLECTION, 0.0) + config.cross_title_bonus * share
        )
    own = is_cjk_text(pq.original)
    # Each hit's score before the bonuses (its distance, less a language shift): plain floats,
    # one Hit per hit made at the end (a search rescores ~600).
    before = [
        h.distance - shifts[h.collection]
        if h.collection in shifts and is_cjk_text(h.text) != own
        else h.distance
        for h in hits
    ]
    crossed = _crossed_words(hits, pq, config)
    literals = extract_literals(pq.original)
    facets, windows = (
        _facet_evidence(hits, own, crossed, literals, config) if crossed or literals else ({}, [])
    )
    bounds = _score_bounds(hits, before)
    numbers = extract_numbers(pq.original)
    patterns = _term_patterns(latin_terms(pq.original)) if has_cjk(pq.original) else []
    keywords = [k for k in (normalize_for_match(k) for k in pq.keywords) if k]
    out: list[Hit] = []
    for h, start in zip(hits, before, strict=True):
        if h.collection == EDGE_COLLECTION:
            out.append(h.rescored(start))
            continue
        lo, hi = bounds[h.collection]
        spread = hi - lo
        rel = (start - lo) / spread if spread > 0 else 0.0
        if pq.use_hybrid and keywords:
            norm = normalize_for_match(h.text)
            if any(k in norm for k in keywords):
                rel = max(0.0, rel - config.keyword_bonus)
        if rel >= config.exact_match_min_score and (numbers or patterns):
            bonus = number_bonus(numbers, h.text, config) + _term_bonus(patterns, h.text, config)
            rel = max(0.0, rel - bonus)
        score = lo + rel * spread if spread > 0 else start
        lit, found = literal_bonus(literals, h.text, config), 0.0
        other = is_cjk_text(h.text) != own
        held = _held(h, facets, windows) if facets else None
        if held is not None:
            found, lit = held[0] if other else 0.0, max(lit, held[1])
        if crossed is not None and other and (held is None or h.collection != TITLE_COLLECTION):
            found = max(found, crossed(h.text))  # (a title's own: held already)
        if found:
            score -= min(found * config.cross_term_bonus, config.cross_term_max)
        out.append(h.rescored(score - lit))
    return out


def _score_bounds(hits: Iterable[Hit], scores: Iterable[float]) -> dict[str, tuple[float, float]]:
    """(best, worst) score of each collection's hits, before the bonuses (``scores``: the raw
    distance, less a language shift)."""
    bounds: dict[str, tuple[float, float]] = {}
    for h, score in zip(hits, scores, strict=True):
        lo, hi = bounds.get(h.collection, (score, score))
        bounds[h.collection] = (min(lo, score), max(hi, score))
    return bounds


def _better(a: Hit, b: Hit) -> bool:
    """Deterministic preference between two hits of the same node or edge text."""
    ka = (a.score, a.distance, _COLLECTION_ORDER.get(a.collection, 99))
    kb = (b.score, b.distance, _COLLECTION_ORDER.get(b.collection, 99))
    return ka < kb


def best_hits(hits: Iterable[Hit]) -> dict[UUID, Hit]:
    """The best-scored hit of every node over all node collections."""
    best: dict[UUID, Hit] = {}
    for h in hits:
        if h.collection == EDGE_COLLECTION or h.node_id is None:
            continue
        cur = best.get(h.node_id)
        if cur is None or _better(h, cur):
            best[h.node_id] = h
    return best


def best_by_id(hits: Iterable[Hit]) -> dict[UUID, float]:
    """best_by_id[node] = min score over all collections where the node was hit."""
    return {node: h.score for node, h in best_hits(hits).items()}


def edge_best_hits(hits: Iterable[Hit]) -> dict[str, Hit]:
    """The best ``Edge_text`` hit per edge text."""
    best: dict[str, Hit] = {}
    for h in hits:
        if h.collection != EDGE_COLLECTION:
            continue
        cur = best.get(h.text)
        if cur is None or _better(h, cur):
            best[h.text] = h
    return best


def edge_hit_map(hits: Iterable[Hit]) -> dict[str, float]:
    """edge_hit_map[edge_text] = min score over Edge_text hits."""
    return {text: h.score for text, h in edge_best_hits(hits).items()}


__all__ = [
    "apply_bonuses",
    "best_by_id",
    "best_hits",
    "collection_bounds",
    "edge_best_hits",
    "edge_hit_map",
    "keyword_matches",
    "normalize_for_match",
    "number_bonus",
    "term_bonus",
]
