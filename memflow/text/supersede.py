"""Pure: does a new FacetPoint replace an earlier one? The rules path of supersession (no model).

A new point supersedes a candidate when both are about the same subject (the same speaker, or
the same named subject in a note) and either

- **frame**: the statements read the same once their values are masked (numbers, dates, names,
  places) and negations removed, and the values or the negation differ ("the deadline is 35 days"
  -> "the deadline is 30 days", "Ana lives in Porto" -> "Ana lives in Braga", "I eat meat" ->
  "I don't eat meat"); or
- **relation**: both state the same single-valued relation of the speaker (where they live, who
  they work for, what they work as) with different values ("I live in Boston" -> "we moved to
  Seattle", "我住在北京" -> "我们搬到上海了").

Conservative by design: questions, hypotheticals, plans and additions ("too", "also", "也") never
supersede, a frame must be long enough to mean something, and only earlier points are replaced.
:func:`superseded_by_rules` is what the write path calls and what benchmarks replay offline.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from difflib import SequenceMatcher
from functools import cached_property, lru_cache
from typing import Any
from uuid import UUID

from memflow.text.hedges import unsure_pattern
from memflow.text.revision import (
    RESCHEDULED,
    changed_value,
    content_keys,
    flip_clauses,
    polarity_flip,
    strong_change,
    value_revision,
    values_of,
    words,
)

FRAME_SIMILARITY_MIN = 0.86  # SequenceMatcher ratio of the masked frames
FRAME_TOKENS_MIN = 4  # content tokens a frame needs besides its values
RELATION_TEXT_MAX = 24  # words (or 2 CJK characters per word) of a statement a relation may replace

VALUE = "<v>"


@dataclass(frozen=True)
class PointFact:
    """What the rules read of a FacetPoint: its statement, who said it, when it was learned."""

    id: UUID
    text: str
    speaker: str | None = None
    recorded_at: datetime | None = None
    valid_at: datetime | None = None  # event time: the note's or session's date

    @property
    def day(self) -> date | None:
        t = self.valid_at or self.recorded_at
        return t.date() if t is not None else None


@dataclass(frozen=True)
class Supersession:
    old: UUID
    new: UUID
    rule: str  # "frame" | "relation:<name>"
    detail: str  # the values or negation that changed, for the change log


@dataclass(frozen=True)
class Closure:
    """A stored or new point closed after the document's rows (memflow.store.temporal): by
    ``new``, from ``invalid_at`` (None: the new point's event time), logged with ``reason`` and
    ``detail`` (``by``: what decided it, ``score``, the values that changed)."""

    old: UUID
    new: UUID
    reason: str
    detail: dict[str, Any] = field(default_factory=dict)
    invalid_at: datetime | None = None


# ---------------------------------------------------------------- tokens and values

_TOKEN = re.compile(
    r"[A-Za-z]+[-_#]?\d[\w-]*|\d+(?:[.,:/-]\d+)*(?:\s?%)?|[A-Za-z][A-Za-z'’]*|[\u3400-\u9fff]|[^\s\w]",
    re.UNICODE,
)
_CJK_NUMBER = re.compile(r"[零一二两三四五六七八九十百千万]+")
_MONTHS = {
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
    "sept", "oct", "nov", "dec", "monday", "tuesday", "wednesday", "thursday", "friday",
    "saturday", "sunday",
}  # fmt: skip
_NUMBER_WORDS = {
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "twenty", "thirty", "forty", "fifty", "hundred", "thousand", "million",
}  # fmt: skip
_NEGATIONS_EN = {"not", "no", "never", "n't", "dont", "doesnt", "didnt", "cannot", "cant", "won't"}
_NEGATION_ZH = re.compile(r"不再|没有|不|没|别|未")
_ADDITIVE = re.compile(
    r"\b(?:too|also|as well|another|additionally|both|either)\b|[也还又]|另外|同时", re.IGNORECASE
)
# A question, a hedge, a proposal or a change voted down closes nothing ("有人提议例会改到周五，
# 投票没通过，维持原样"); nor does a plan.
_UNSURE = unsure_pattern(
    # a plan or an intention, which the write path never takes for the change itself
    en=r"plan(?:s|ning)? to|going to|will|gonna|want(?:s|ed)? to",
    zh=r"打算|计划|想要?",
)
# Events ("ran 5 km this morning") happen again with other values; only states are restated.
_EVENT = re.compile(
    r"\b(?:yesterday|today|tonight|this (?:morning|afternoon|evening|week|weekend)|"
    r"last (?:night|week|weekend|month|year|time)|ago|earlier)\b|昨天|今天|前天|刚才|上周|上个月|"
    r"去年(?![检审])",
    re.IGNORECASE,
)
_SINCE = re.compile(r"\bsince\b|起", re.IGNORECASE)
_ZH_WHEN = r"(?:现在|目前|已经|刚刚?|终于|最近|上周|上个月|去年|今年)*"
_FIRST_PERSON = re.compile(r"^(?:i|we|my|our|i'm|we're|i've|we've|me|us)$", re.IGNORECASE)


# Statements whose frame, relation and flags are kept between calls (a speaker's stored points
# are read against each new point of theirs: a write of n points reads them n times).
_CACHED = 16384


@lru_cache(maxsize=_CACHED)
def strip_speaker(text: str, speaker: str | None) -> str:
    """The statement without its ``Speaker:`` label (chat points carry one)."""
    text = unicodedata.normalize("NFKC", text).strip()
    if speaker and text.startswith(speaker):
        rest = text[len(speaker) :]
        if rest[:1] in (":", "："):
            return rest[1:].strip()
    return text


def _is_value(tok: str, position: int) -> bool:
    low = tok.lower()
    if tok[0].isalpha() and any(ch.isdigit() for ch in tok):
        return False  # an identifier (T-12, v2, JIRA-7) names a subject, it is not a value
    if tok[0].isdigit() or _CJK_NUMBER.fullmatch(tok) or low in _MONTHS or low in _NUMBER_WORDS:
        return True
    # A capitalised word inside the sentence is a name (the first word may be capitalised anyway).
    return tok[0].isupper() and position > 0 and tok != "I" and not _FIRST_PERSON.match(tok)


# A number is a value only in a value slot: after a copula or a preposition of amount, or before
# a unit ("is 35 days", "to 80 percent", "为35天"). "the follow-up of 3" numbers a subject.
_VALUE_BEFORE = frozenset(
    "is are was were be been to at for about around than = : 为 是 到 每 约 共 改为".split()
)


# Before a name these tie one of many things to the statement (author, company, companion), so a
# different name there adds to what was said rather than replacing it.
_ASSOCIATION = frozenset((w,) for w in "by with about from of and like among".split())


@dataclass(frozen=True)
class Frame:
    tokens: tuple[str, ...]  # lower-cased, values replaced by VALUE, negations removed
    values: tuple[str, ...]
    negated: bool

    def slot(self, index: int) -> int:
        """The token position of the ``index``-th value."""
        return [i for i, t in enumerate(self.tokens) if t == VALUE][index]

    def in_value_slot(self, index: int) -> bool:
        """Whether the ``index``-th value sits where an amount or a date is stated."""
        at = self.slot(index)
        before = self.tokens[at - 1] if at > 0 else ""
        after = self.tokens[at + 1] if at + 1 < len(self.tokens) else ""
        return before in _VALUE_BEFORE or (after.isalpha() or after == "%")

    @cached_property
    def content(self) -> int:
        return sum(1 for t in self.tokens if t != VALUE and t.isalnum())

    @cached_property
    def bag(self) -> Counter[str]:
        """The tokens as a multiset: :func:`_frame_change`'s bound on the alignment."""
        return Counter(self.tokens)

    def ratio_bound(self, other: Frame) -> float:
        """An upper bound of the two frames' ``SequenceMatcher`` ratio, computed as difflib
        does (2 * matches / both lengths) with the tokens they share, counted with repeats,
        for the matches: an alignment matches no more tokens than the two have in common."""
        small, large = sorted((self.bag, other.bag), key=len)
        shared = sum(min(n, large[t]) for t, n in small.items() if t in large)
        return 2.0 * shared / (len(self.tokens) + len(other.tokens))


@lru_cache(maxsize=_CACHED)  # each stored statement is read against every new one of its speaker
def frame_of(text: str) -> Frame:
    """The statement with its values masked (the frame), its values, and whether it negates."""
    raw = text.replace("’", "'")
    negated = bool(_NEGATION_ZH.search(raw))
    raw = _NEGATION_ZH.sub(" ", raw)
    tokens: list[str] = []
    values: list[str] = []
    prev_value = False
    for i, tok in enumerate(_TOKEN.findall(raw)):
        low = tok.lower()
        if low.endswith("n't"):
            negated = True
            low = low[:-3] or low
            tok = low
        if low in _NEGATIONS_EN:
            negated = True
            continue
        if _is_value(tok, i):
            if prev_value and values:  # "New York", "June 13": one value
                values[-1] = f"{values[-1]} {low}"
            else:
                values.append(low)
                tokens.append(VALUE)
            prev_value = True
            continue
        prev_value = False
        tokens.append(low)
    return Frame(tuple(tokens), tuple(values), negated)


# ---------------------------------------------------------------- relations

_NAME = r"(?P<v>(?:[A-Z][\w'’.-]*)(?:\s+(?:of\s+|de\s+)?[A-Z][\w'’.-]*)*)"
_ZH_VALUE = r"(?P<v>[\u3400-\u9fffA-Za-z0-9]{1,12}?)"
_ZH_END = r"(?=[了的，。！？,.!?；;\s]|工作|上班|住|生活|定居|$)"

RELATIONS: dict[str, tuple[re.Pattern[str], ...]] = {
    "residence": (
        re.compile(
            r"\b(?:i|we)(?:'ve| have)?\s+(?:now\s+|been\s+|also\s+)?(?:live|living|lived|reside|"
            r"residing|settled|staying)\s+(?:now\s+)?(?:in|at)\s+" + _NAME
        ),
        re.compile(
            r"\b(?:i|we)(?:'ve| have| just| finally| recently)*\s+(?:finished\s+|done\s+)?"
            r"(?:moved|moving|relocated|relocating)\s+(?:back\s+|over\s+|out\s+)?(?:to|into)\s+"
            + _NAME
        ),
        re.compile(r"\b(?:i'm|i am|we're|we are)\s+(?:now\s+)?(?:based|living|settled)\s+in\s+" + _NAME),
        re.compile(r"\b(?:[Hh]ome for (?:me|us)|my home|[Oo]ur home)\s+is\s+(?:now\s+)?(?:in\s+)?" + _NAME),
        re.compile(r"\bmy (?:new )?(?:apartment|flat|house|place)\s+is\s+(?:now\s+)?in\s+" + _NAME),
        re.compile(
            r"(?:(?:我|我们)" + _ZH_WHEN + r"|(?:^|(?<=[，,：:；;]))" + _ZH_WHEN + r")"
            r"(?:住在|居住在|定居在|定居|搬到了?|搬去了?|搬回了?|搬家到|安家在|的?家在)"
            + _ZH_VALUE + _ZH_END
        ),
    ),
    "employer": (
        re.compile(
            r"\b(?:i|we)\s+(?:now\s+)?(?:work|worked|am working|'m working)\s+(?:at|for)\s+"
            + _NAME
        ),
        re.compile(
            r"\b(?:i|we)(?:'ve| have| just)*\s+(?:started at|switched to)\s+" + _NAME
        ),
        re.compile(r"\b(?:i|we)\b[^.;!?]{0,40}?\bjoined\s+" + _NAME),
        re.compile(
            r"\b(?:i|we)(?:'ve| have| just)*\s+(?:started|got|took|accepted|landed|began)\s+"
            r"(?:a|an|my)\s+(?:new\s+)?(?:job|position|role)\s+(?:at|with)\s+" + _NAME
        ),
        re.compile(
            r"\b(?:i'm|i am)\s+(?:now\s+)?an?\s+(?:[a-z]+\s+){1,2}(?:at|for|with)\s+" + _NAME
        ),
        re.compile(r"\bmy (?:new )?(?:job|employer|company|workplace) is (?:now )?(?:at |with )?" + _NAME),
        re.compile(
            r"(?:(?:我|我们)" + _ZH_WHEN + r"|(?:^|(?<=[，,：:；;]))" + _ZH_WHEN + r")"
            r"在" + _ZH_VALUE + r"(?:工作|上班|公司)"
        ),
        re.compile(
            r"(?:(?:我|我们)" + _ZH_WHEN + r"|(?:^|(?<=[，,：:；;]))" + _ZH_WHEN + r")"
            r"(?:入职了?|跳槽到了?|跳槽去了?|加入了?)" + _ZH_VALUE + r"(?:工作|上班|公司|了|。|，|$)"
        ),
        re.compile(r"(?:工作单位|单位|公司|东家)(?:现在)?是" + _ZH_VALUE + _ZH_END),
        re.compile(
            r"我(?:现在)?是" + _ZH_VALUE
            + r"的(?:员工|工程师|设计师|程序员|老师|医生|护士|经理|会计|销售|职员|研究员)"
        ),
    ),
    "occupation": (
        re.compile(
            r"\b(?:i|we)\s+(?:now\s+)?(?:work|worked)\s+as\s+(?:an?\s+)?"
            r"(?P<v>[a-z]+(?:\s+[a-z]+)?)(?=[.,!;]|$)",
        ),
        re.compile(r"(?:我|我们)" + _ZH_WHEN + r"(?:当|做)(?:了)?(?P<v>[\u3400-\u9fff]{2,6}?)(?:了|。|，|$)"),
    ),
}  # fmt: skip


@lru_cache(maxsize=_CACHED)
def relation_of(text: str) -> tuple[str, str] | None:
    """The single-valued relation the statement asserts of its speaker, and its value."""
    for name, patterns in RELATIONS.items():
        for pattern in patterns:
            m = pattern.search(text if pattern.pattern.startswith("(?:我") else _lower_lead(text))
            if m:
                return name, _norm_value(m.group("v"))
    return None


def _lower_lead(text: str) -> str:
    # Pronouns are matched lower-case; names keep their capitals.
    return re.sub(r"\b(I|We|My)\b", lambda m: m.group(1).lower(), text)


def _norm_value(v: str) -> str:
    v = re.sub(r"^(?:the|a|an)\s+", "", v.strip(), flags=re.IGNORECASE)
    return v.casefold().rstrip(".")


# ---------------------------------------------------------------- the rule


def _same_subject(new: PointFact, old: PointFact) -> bool:
    if new.speaker and old.speaker:
        return new.speaker.casefold() == old.speaker.casefold()
    return True  # notes: the frame (with its subject) decides


def _segment_keys(tokens: Sequence[str]) -> set[str]:
    """The content words (or Chinese character pairs) of a run of frame tokens."""
    kept = [t for t in tokens if t != VALUE]
    cjk = any("\u3400" <= t[:1] <= "\u9fff" for t in kept)
    return content_keys(("" if cjk else " ").join(kept), [])


def _frame_change(
    new: Frame, old: Frame, matcher: SequenceMatcher[str] | None = None
) -> str | None:
    """The values or the negation ``new`` changed of ``old``'s frame. ``matcher``: one whose
    second sequence is ``new.tokens`` already (its index of them is built once per new point)."""
    if new.content < FRAME_TOKENS_MIN or old.content < FRAME_TOKENS_MIN:
        return None
    if len(new.tokens) != len(old.tokens) and abs(len(new.tokens) - len(old.tokens)) > 2:
        return None
    if new.ratio_bound(old) < FRAME_SIMILARITY_MIN:
        return None  # cheap: most candidates share too few tokens to be aligned at all
    if matcher is None:
        matcher = SequenceMatcher(None, old.tokens, new.tokens, autojunk=False)
    else:
        matcher.set_seq1(old.tokens)
    if matcher.ratio() < FRAME_SIMILARITY_MIN:
        return None
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "replace":
            continue
        was, now = _segment_keys(old.tokens[i1:i2]), _segment_keys(new.tokens[j1:j2])
        if was and now and not was & now:
            return None  # "the design review" -> "the code review": another thing, not a change
    if new.negated != old.negated and new.values == old.values:
        return "negation"
    if not new.values or not old.values or len(new.values) != len(old.values):
        return None
    # The subject in front ("Ana lives in ...", "PostgreSQL owns ...") must be the same.
    if new.tokens[:1] != old.tokens[:1] or (
        new.tokens[:1] == (VALUE,) and new.values[0] != old.values[0]
    ):
        return None
    changed = [i for i, (o, n) in enumerate(zip(old.values, new.values, strict=True)) if o != n]
    if len(changed) != 1 or new.negated != old.negated:
        return None
    i = changed[0]
    if old.tokens[old.slot(i) - 1 : old.slot(i)] in _ASSOCIATION:
        return None  # "a novel by Ishiguro" -> "by Murakami": one more of many, not a new value
    number = old.values[i][:1].isdigit() or bool(_CJK_NUMBER.match(old.values[i]))
    if number and not (old.in_value_slot(i) and new.in_value_slot(i)):
        return None
    return f"{old.values[i]} -> {new.values[i]}"


def _date_moved(change: str, new: PointFact, old: PointFact, new_text: str, old_text: str) -> bool:
    """A changed date counts as a correction only within one dated note or session, or when the
    new text says the date moved."""
    was = change.split(" -> ")[0]
    is_date = any(v.kind == "date" and was in v.text for v in values_of(old_text))
    if not is_date or new.day is None or old.day is None or new.day == old.day:
        return True
    return bool(RESCHEDULED.search(new_text))


@lru_cache(maxsize=_CACHED)
def _unsure(text: str) -> bool:
    return bool(_UNSURE.search(text))


@lru_cache(maxsize=_CACHED)
def _event(text: str) -> bool:
    return bool(_EVENT.search(text))


@lru_cache(maxsize=_CACHED)
def _told(text: str) -> bool:
    """An episode told ("yesterday I cycled again"), not a state that changed: no flip."""
    return _event(text) and not _SINCE.search(text)


def _revision(text: str, old_text: str) -> tuple[str, str] | None:
    """(rule, detail) of a value revision or a polarity flip of ``old_text`` by ``text``."""
    if _event(old_text):
        return None  # an event is not restated, it happened
    change = value_revision(text, old_text)
    if change is not None:
        return "revision", change
    if _told(text):
        return None
    flip = polarity_flip(text, old_text)
    return ("flip", flip) if flip is not None else None


def may_supersede(new: PointFact) -> bool:
    """Whether ``new`` could supersede any candidate at all: :func:`superseded_by_rules` finds
    nothing, whatever the candidates, for a statement that is unsure or an addition, gives no
    frame (or tells an event), states no relation and announces no change of a value or a
    state. The write path reads no candidates for those."""
    text = strip_speaker(new.text, new.speaker)
    if _unsure(text) or (_ADDITIVE.search(text) and not strong_change(text)):
        return False
    if not _event(text) and frame_of(text).content >= FRAME_TOKENS_MIN:
        return True
    if relation_of(text) is not None or changed_value(text) is not None:
        return True
    return not _told(text) and bool(flip_clauses(text))


def superseded_by_rules(new: PointFact, candidates: Sequence[PointFact]) -> list[Supersession]:
    """The candidates ``new`` supersedes (earlier points only; none if ``new`` is unsure)."""
    text = strip_speaker(new.text, new.speaker)
    if _UNSURE.search(text) or (_ADDITIVE.search(text) and not strong_change(text)):
        return []
    frame = frame_of(text)
    relation = relation_of(text)
    new_event = _event(text)
    # Built on the new frame once, aligned against each candidate's (the costly part of a write).
    matcher = SequenceMatcher(None, (), frame.tokens, autojunk=False)
    out: list[Supersession] = []
    for old in candidates:
        if old.id == new.id or not _same_subject(new, old):
            continue
        if new.recorded_at and old.recorded_at and old.recorded_at > new.recorded_at:
            continue
        old_text = strip_speaker(old.text, old.speaker)
        if _unsure(old_text):
            continue
        change = (
            None
            if new_event or _event(old_text)
            else _frame_change(frame, frame_of(old_text), matcher)
        )
        if change is not None and _date_moved(change, new, old, text, old_text):
            out.append(Supersession(old.id, new.id, "frame", change))
            continue
        if relation is not None and words(old_text) <= RELATION_TEXT_MAX:
            old_rel = relation_of(old_text)
            if old_rel is not None and old_rel[0] == relation[0]:
                if old_rel[1] != relation[1] and (new.speaker or old.speaker):
                    # Both said by someone about themselves (a speaker), or naming no one else.
                    rule, detail = f"relation:{relation[0]}", f"{old_rel[1]} -> {relation[1]}"
                    out.append(Supersession(old.id, new.id, rule, detail))
                continue
        revised = _revision(text, old_text)
        if revised is not None:
            out.append(Supersession(old.id, new.id, revised[0], revised[1]))
    return _latest_plan(out, {c.id: c for c in candidates})


def _latest_plan(found: list[Supersession], by_id: dict[UUID, PointFact]) -> list[Supersession]:
    """A moved date replaces the latest plan it matches (and its restatements), not every
    earlier occurrence: "postponed to 22 October" moves the 15 October review, not the one
    held on 3 October."""
    dated = [
        s for s in found
        if any(v.kind == "date" and s.detail.split(" -> ")[0] in v.text
               for v in values_of(strip_speaker(by_id[s.old].text, by_id[s.old].speaker)))
    ]  # fmt: skip
    if len(dated) < 2:
        return found
    latest = max(dated, key=lambda s: (by_id[s.old].day or date.min, str(s.old)))
    value = latest.detail.split(" -> ")[0]
    return [s for s in found if s not in dated or s.detail.split(" -> ")[0] == value]


__all__ = [
    "RELATIONS",
    "Closure",
    "Frame",
    "PointFact",
    "Supersession",
    "frame_of",
    "may_supersede",
    "relation_of",
    "strip_speaker",
    "superseded_by_rules",
]
