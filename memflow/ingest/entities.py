"""Rule-based entity mentions: speakers, names, quoted terms, code and paths, quantities, dates.

Deterministic and model-free. Each pattern claims its span of the text, in priority order, so a
path is not also read as a term and "8 May 2023" is a date, not a quantity.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from memflow.ids import canonical_name
from memflow.text.sentences import has_cjk

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_LATIN_UNITS = (
    r"ms|milliseconds?|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?|months?|"
    r"years?|yrs?|[KMGTP]i?B|[kmg]b|bytes?|k|K|M|B|bn|x|QPS|qps|RPS|rps|TPS|tps|req/s|ops/s|"
    r"users?|rows?|records?|requests?|tokens?|turns?|nodes?|cores?|GHz|MHz|km|kg|g|m|cm|mm|mi|"
    r"miles?|lbs?|USD|EUR|CNY|RMB|dollars?|euros?|people|percent|pts?|points?|dims?|ms/op"
)
_CJK_UNITS = (
    r"毫秒|秒钟?|分钟|小时|天|周|星期|个月|年|万|亿|千|元|美元|人|次|条|行|个|倍|台|核|页|点|分"
)
_NUMBER = r"(?:[$€£¥]\s?)?\d+(?:[.,]\d+)*"
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("url", re.compile(r"https?://[^\s)>\]」，。；、\"']*[^\s)>\]」，。；、\"'.,;:!?]")),
    # Identifiers of tickets, incidents and changes: "HK-5521", "OPS-7", "PR #4821", "issue #12".
    (
        "id",
        re.compile(
            r"(?<![\w-])[A-Z][A-Z0-9]{0,9}-\d+(?![\w-])"
            r"|\b(?:PR|MR|CL|[Ii]ssue|[Tt]icket|[Bb]ug|[Ii]ncident)\s?#\s?\d+\b"
        ),
    ),
    ("code", re.compile(r"`([^`\n]{1,80})`")),
    ("path", re.compile(r"(?<![\w/.:~])/[A-Za-z_][\w\-.{}]*(?:/[\w\-.{}:]+)*/?")),
    (
        "date",
        re.compile(
            r"\b\d{4}-\d{1,2}-\d{1,2}\b|\d{4}\s?年\s?\d{1,2}\s?月(?:\s?\d{1,2}\s?[日号])?|"
            r"\d{1,2}\s?月\s?\d{1,2}\s?[日号]|\d{4}\s?年|"
            rf"\b{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b|"
            rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}\.?,?\s+\d{{4}}\b|"
            rf"\b{_MONTH}\s+\d{{4}}\b|\bQ[1-4]\s+\d{{4}}\b|\b(?:19|20)\d{{2}}\b"
        ),
    ),
    (
        "quantity",
        re.compile(
            rf"(?<![A-Za-z0-9.]){_NUMBER}\s?(?:%|‰|(?:{_LATIN_UNITS})(?![A-Za-z])|(?:{_CJK_UNITS}))|[$€£¥]\s?\d+(?:[.,]\d+)*"
        ),
    ),
    (
        "quote",
        re.compile(r"\"([^\"\n]{2,60})\"|“([^”\n]{2,60})”|「([^」\n]{2,60})」|『([^』\n]{2,60})』"),
    ),
    ("title", re.compile(r"《([^》\n]{1,60})》")),
    ("code", re.compile(r"\b[A-Za-z_]\w*(?:\.\w+)*\(\)|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")),
    (
        "term",
        re.compile(
            r"\b(?:[A-Z][a-z]+[A-Z]\w*|[a-z]+[A-Z]\w*|[A-Z]{2,}[a-z]?\d*|[A-Za-z]+\d+[A-Za-z\d]*)\b"
        ),
    ),
]
_LATIN_TERM = re.compile(
    r"(?<![A-Za-z0-9_])(?=[\w.+#\-]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9_.+#\-]*[A-Za-z0-9+#]"
)
_LATIN_LETTER = "A-Za-zÀ-ÖØ-öø-ÿĀ-ſ"
_WORD = re.compile(rf"[{_LATIN_LETTER}][{_LATIN_LETTER}'’\-]*")
_CONNECTORS = frozenset(
    {
        "of",
        "de",
        "del",
        "da",
        "do",
        "dos",
        "das",
        "du",
        "di",
        "van",
        "von",
        "der",
        "la",
        "le",
        "&",
        "and",
    }
)
# Capitalised words that start sentences or greet, and are not names on their own.
_COMMON_WORDS = """a an the this that these those there here it its i i'm i've i'd i'll we we're we've our us you
    you're your he she his her they their them my me what when where why how who which whose yes no
    not yeah yep ok okay hey hi hello thanks thank wow oh ah well so and but or also then now just
    if as at by for from in into on onto to with without after before since until while because
    though although again anyway actually really sure great good nice cool awesome glad sorry
    congrats congratulations last next every each all some any many much more most other another
    one two three first second today tonight tomorrow yesterday please let lets let's can could
    would should will shall may might must do does did done have has had be is are was were been
    being am monday tuesday wednesday thursday friday saturday sunday january february march april
    june july august september october november december mr mrs ms dr note todo see keep make
    update step owner status background context summary decision decisions risk risks plan"""
_COMMON = frozenset(_COMMON_WORDS.split())
_ACRONYM_STOP = frozenset(
    {"OK", "AM", "PM", "ID", "OR", "AND", "THE", "TODO", "FYI", "ASAP", "LOL", "OMG"}
)
_TYPE_PRIORITY = {
    "person": 5,
    "path": 4,
    "code": 4,
    "id": 4,
    "url": 4,
    "name": 3,
    "title": 3,
    "quote": 2,
    "term": 2,
    "quantity": 1,
    "date": 1,
}


@dataclass(frozen=True)
class EntityHit:
    """One entity found in a list of statements: its first surface form, type and count."""

    name: str
    entity_type: str
    count: int
    first: int  # index of the first statement that mentions it


def _sentence_starts(text: str) -> set[int]:
    starts = {0}
    for m in re.finditer(r"[.!?。！？；:：\n]+[\"'”’)\]]*\s*|^\s*(?:[-*•]\s+)?", text):
        starts.add(m.end())
    return starts


class _Taken:
    """Character positions already claimed by a mention: overlap checks in O(span length)."""

    def __init__(self, n: int) -> None:
        self.mask = bytearray(n)

    def overlaps(self, start: int, end: int) -> bool:
        return any(self.mask[start:end])

    def add(self, start: int, end: int) -> None:
        self.mask[start:end] = b"\x01" * (end - start)


def _names(text: str, taken: _Taken) -> list[tuple[int, str]]:
    """Runs of capitalised words; a sentence-initial common word is dropped from a run."""
    starts = _sentence_starts(text)
    words = [(m.start(), m.end(), m.group(0)) for m in _WORD.finditer(text)]
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(words):
        run: list[tuple[int, int, str]] = []
        j = i
        while j < len(words):
            start, _, w = words[j]
            gap_ok = not run or re.fullmatch(r"[ \-]", text[run[-1][1] : start]) is not None
            capitalised = (
                w[0].isupper()
                and gap_ok
                and (len(w) > 1 or (bool(run) and run[-1][2][0].isupper()))
            )
            connector = (
                bool(run)
                and w in _CONNECTORS
                and j + 1 < len(words)
                and words[j + 1][2][0].isupper()
                and len(words[j + 1][2]) > 1
            )
            if not (capitalised or connector):
                break
            run.append(words[j])
            j += 1
        i = max(j, i + 1)
        while run and (
            run[0][2].casefold().rstrip("'’s") in _COMMON or run[0][2].casefold() in _COMMON
        ):
            run.pop(0)
        while run and run[-1][2] in _CONNECTORS:
            run.pop()
        if not run or len(run) > 5 or taken.overlaps(run[0][0], run[-1][1]):
            continue
        if len(run) == 1 and (run[0][0] in starts or run[0][2].isupper()):
            continue  # a lone capitalised word that starts a sentence is not evidence of a name
        out.append((run[0][0], text[run[0][0] : run[-1][1]].rstrip("'’")))
    return out


@lru_cache(maxsize=16384)
def find_mentions(text: str) -> tuple[tuple[str, str], ...]:
    """Entity mentions in one statement as ``(surface form, entity_type)`` in text order."""
    taken = _Taken(len(text))
    found: list[tuple[int, str, str]] = []
    for etype, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            span = (m.start(), m.end())
            if taken.overlaps(*span):
                continue
            surface = next((g for g in m.groups() if g), m.group(0)).strip()
            if etype == "term" and (surface in _ACRONYM_STOP or len(surface) < 2):
                continue
            if etype == "quote" and len(surface.split()) > 8:
                continue
            taken.add(*span)
            found.append((span[0], surface, etype))
    for pos, name in _names(text, taken):
        taken.add(pos, pos + len(name))
        found.append((pos, name, "name"))
    if has_cjk(text):
        for m in _LATIN_TERM.finditer(text):
            if m.group(0).casefold() in _COMMON or taken.overlaps(m.start(), m.end()):
                continue
            found.append((m.start(), m.group(0), "term"))
    found.sort(key=lambda f: f[0])
    return tuple((surface, etype) for _, surface, etype in found)


def name_aliases(statements: Sequence[str], speakers: Sequence[str] = ()) -> dict[str, str]:
    """Short forms of the names in ``statements``: a one-word name that is the first or the last
    word of exactly one longer name ("Marco" of "Marco Rossi") maps to it, by canonical name."""
    names = {s for s in speakers if s.strip()}
    for statement in statements:
        names.update(surface for surface, etype in find_mentions(statement) if etype == "name")
    longer: dict[str, set[str]] = {}
    for name in names:
        words = name.split()
        if len(words) > 1:
            for word in {words[0], words[-1]}:
                longer.setdefault(canonical_name(word), set()).add(name)
    return {
        canonical_name(name): next(iter(longer[canonical_name(name)]))
        for name in names
        if len(name.split()) == 1 and len(longer.get(canonical_name(name), ())) == 1
    }


def rank_entities(
    statements: Sequence[str],
    *,
    speakers: Sequence[str] = (),
    limit: int = 8,
    aliases: dict[str, str] | None = None,
) -> list[EntityHit]:
    """The entities of a group of statements, speakers first, then by type priority and count.

    Names are merged by canonical name (the first surface form wins), and a short form into the
    one longer name it stands for (:func:`name_aliases`, of ``statements`` unless ``aliases`` is
    given, e.g. for a whole document); at most ``limit`` are kept.
    """
    alias = name_aliases(statements, speakers) if aliases is None else aliases
    found: dict[str, EntityHit] = {}
    for speaker in speakers:
        key = canonical_name(speaker)
        if key and key not in found:
            found[key] = EntityHit(speaker, "person", 0, 0)
    for index, statement in enumerate(statements):
        for surface, etype in find_mentions(statement):
            if etype == "name" and canonical_name(surface) in alias:
                surface = alias[canonical_name(surface)]
            key = canonical_name(surface)
            if not key:
                continue
            hit = found.get(key) or EntityHit(surface, etype, 0, index)
            found[key] = EntityHit(hit.name, hit.entity_type, hit.count + 1, hit.first)
    hits = list(found.values())
    hits.sort(key=lambda h: (-_TYPE_PRIORITY.get(h.entity_type, 0), -h.count, h.first, h.name))
    return hits[:limit]


_STOP_WORDS = """about above after again against all almost also although always am among an and
another any anybody anyone anything anyway are around as ask asked at away back be because been
before being below best better between both but by came can cannot could couldn't day days did
didn't do does doesn't doing don't done down during each either else enough even ever every
everyone everything few find first for found from get gets getting give go goes going gone good
got gotta great guess had hadn't has hasn't have haven't having he her here hers herself him
himself his how however i'd i'll i'm i've if in instead into is isn't it it's its itself just keep
kind know known last least less let let's like likely little lot lots made make makes making many
may maybe me mean might mine more most much must my myself need needs never new next nice no nor
not nothing now of off often oh okay on once one only or other others our ours ourselves out over
own part pretty quite rather really right said same say says see seem seems she should since so
some something sometimes soon still such sure take taken tell than thank thanks that that's the
their theirs them themselves then there there's these they they're thing things think this those
though thought through time times to too took totally toward try trying two under until up upon
us use used using very want wanted was wasn't way we we're we've well went were what what's when
where whether which while who whom whose why will with within without won't wonder wonderful
would wouldn't yeah yes yet you you'd you'll you're you've your yours yourself amazing awesome
cool glad happy hey hi hello love loved lovely sounds wow super feel feeling felt stuff lol haha
definitely absolutely exactly especially actually probably also bit gonna wanna kinda january
february march april june july august september october november december monday tuesday
wednesday thursday friday saturday sunday today tonight tomorrow yesterday week weekend month
year"""
_STOP = frozenset(_STOP_WORDS.split())
# Prepositions and adverbs of place and time: never the topic of a facet.
_PLACE_TIME = frozenset(
    """near nearby across along behind beside besides beyond inside outside past via per onto
    upstairs downstairs early earlier late later already almost ago afterwards meanwhile""".split()
)


def _topic_word(word: str) -> bool:
    """Whether a lower-cased content word can name a topic: no preposition of place or time, no
    past-tense verb ("booked", "followed") and no "-ly" adverb: a facet name lists things."""
    if word in _PLACE_TIME:
        return False
    return not (len(word) > 4 and word.endswith(("ed", "ly")))


_KEYWORD = re.compile(r"[A-Za-z][A-Za-z'’\-]{2,}")
_KEYWORD_TYPES = frozenset({"name", "term", "quote", "title", "code", "path", "id"})


def keywords(
    statements: Sequence[str], *, exclude: Sequence[str] = (), limit: int = 4
) -> list[str]:
    """Distinctive words of a group of statements: named things first, then frequent content
    words (by count, then first occurrence), skipping stop words and ``exclude`` (speakers)."""
    skip = {canonical_name(x) for x in exclude}
    chosen: list[str] = []
    seen: set[str] = set(skip)
    for hit in rank_entities(statements, limit=64):
        key = canonical_name(hit.name)
        if hit.entity_type not in _KEYWORD_TYPES or key in seen:
            continue
        if len(chosen) < limit - 1:
            chosen.append(hit.name)
        seen.add(key)  # a named thing left out does not come back as a lower-cased word
        seen.update(key.split())
    counts: dict[str, tuple[int, int]] = {}
    position = 0
    for statement in statements:
        previous = ""
        for m in _KEYWORD.finditer(statement):
            word = m.group(0).casefold().replace("’", "'").removesuffix("'s").strip("'-")
            position += 1
            if len(word) < 3 or word in _STOP or word in seen or not _topic_word(word):
                previous = ""
                continue
            grams = [word, f"{previous} {word}"] if previous else [word]
            for gram in grams:
                count, first = counts.get(gram, (0, position))
                counts[gram] = (count + 1, first)
            previous = word
    # A phrase seen twice ("support group") stands for its words.
    phrases = {g: c for g, c in counts.items() if " " in g and c[0] >= 2}
    covered = {w for g in phrases for w in g.split()}
    ranked = sorted(
        (
            kv
            for kv in counts.items()
            if (" " in kv[0]) == (kv[0] in phrases) and kv[0] not in covered
        ),
        key=lambda kv: (-kv[1][0], kv[1][1]),
    )
    chosen += [gram for gram, _ in ranked[: max(0, limit - len(chosen))]]
    return chosen


__all__ = ["EntityHit", "find_mentions", "keywords", "name_aliases", "rank_entities"]
