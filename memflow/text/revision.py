"""Pure: statements that announce a change of something said before (issue 12, rules path).

:mod:`memflow.text.supersede` asks two questions of a new statement and an earlier one by the
same subject (neither a question, a plan nor a hypothetical):

- **value revision** (:func:`value_revision`): the new statement says that something changed
  ("moved to", "switched to", "now", "instead", "raised to", "postponed to", "改到", "换成",
  "推迟到", "现在" ...) and gives one value (a date, an amount with its unit, a name), and the
  earlier one gives another value of the same kind about the same thing: they share a content
  word (English, crudely stemmed) or a pair of characters (Chinese) besides values and change
  words, and an amount keeps its unit ("six people" -> "nine people", not "nine dollars");
- **polarity flip** (:func:`polarity_flip`): the new statement says that something stopped or
  started ("no longer", "stopped", "again", "不再", "开始", "又") and a content word the earlier
  statement asserted is now denied, or the other way round ("I'm not vegetarian" -> "I went
  vegetarian"; "我吃素" -> "我不再吃素了").

Both are short-statement rules: long turns (chat paragraphs, note sections) are left to the
frame rule and the model path.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

# ---------------------------------------------------------------- change words

_CHANGE_EN = re.compile(
    r"\b(?:now|nowadays|no longer|instead|anymore|any more|switch(?:ed|ing)?|chang(?:ed|ing)|"
    r"mov(?:ed|ing)|relocat(?:ed|ing)|replac(?:ed|ing)|swapp(?:ed|ing)|rais(?:ed|ing)|"
    r"increas(?:ed|ing)|decreas(?:ed|ing)|lower(?:ed|ing)|reduc(?:ed|ing)|cut|dropp(?:ed|ing)|"
    r"push(?:ed|ing)|postpon(?:ed|ing)|reschedul(?:ed|ing)|delay(?:ed|ing)|brought forward|"
    r"bump(?:ed|ing)|went (?:up|down)|gone (?:up|down)|became|has become|(?:my|our) new|updated|"
    r"revised|corrected|as of|from now on)\b",
    re.IGNORECASE,
)
_CHANGE_ZH = re.compile(
    r"改为|改成|改到|改在|换成|换到|换了|搬到|搬去|搬回|搬家|推迟|延期|延后|提前到|调整[为到成]|"
    r"涨到|涨价|涨了|降到|降价|降了|变成|变为|变了|不再|现在|如今|目前|取代|代替|不用了|"
    r"新的?(?:计划|安排|日期|工作|公司|地址|家)"
)
# A date in a plan changes only when the text says the plan moved; otherwise a new date in
# another dated note or session is another occurrence ("a review is planned for <date>").
RESCHEDULED = re.compile(
    r"\b(?:moved|pushed|postponed|rescheduled|delayed|brought forward|put off|changed|shifted|"
    r"bumped|now|instead|no longer)\b|推迟|延期|延后|改到|改为|改成|改在|提前|调整|挪到|换到|现在|"
    r"新(?:计划|安排|日期)",
    re.IGNORECASE,
)
# Words that say a state stopped or started (the polarity flip).
_FLIP_EN = re.compile(
    r"\b(?:no longer|no more|anymore|any more|stopped|quit|gave up|started|again)\b",
    re.IGNORECASE,
)
_FLIP_ZH = re.compile(r"不再|戒了|开始|重新|已经不")
# Who a change is about: the speaker (first person) unless both statements name the same thing
# first ("The gym opens at 6" -> "The gym now opens at 7").
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|we|we're|we've|my|our|me|us)\b|我", re.IGNORECASE)
_OTHER_PERSON_ZH = re.compile(r"你|他|她")
_CLAUSE_END = re.compile(r"[,;.!?:，。；！？：]|\s-\s")
_NEGATED_MARKER = re.compile(
    r"\b(?:not|never|won't|wont|don't|dont|didn't|can't|cannot|haven't|hasn't)\s+(?:\w+\s+)?$|"
    r"[没不别]$",
    re.IGNORECASE,
)
MARKER_REACH = 6  # words (English) or 2 characters per word (Chinese) from change word to value
_NEGATOR_EN = frozenset({"not", "no", "never", "stopped", "quit", "without", "nor"})
_NEGATOR_ZH = re.compile(r"(?:不再|不|没有|没|别|戒掉?了?)$")

_STOP_EN = frozenset(
    """the a an and or but of in on at to for with from by about as is are was were be been being
    am it its this that these those there here i we you he she they me us him her them my our your
    his their mine ours have has had do does did so very really just still also too all some any
    what which who whom when where how than then into over after before up down out off more most
    much many one ones get got go going gone went make made can will would should could may might
    month week year day days today yesterday tomorrow time times thing things lot bit since""".split()
)
_CHANGE_WORDS = frozenset(
    """now nowadays longer instead anymore switch switched switching change changed changing move
    moved moving relocate relocated relocating replace replaced replacing swap swapped raise
    raised increase increased decrease decreased lower lowered reduce reduced cut drop dropped push
    pushed postpone postponed reschedule rescheduled delay delayed brought forward bump bumped
    became become new updated revised corrected stopped quit gave give started again back
    left joined""".split()
)
_STOP_ZH = set("我你他她它们的了是在有和与也还又就都很这那个吧呢吗啊呀哦嗯着过被把给从到为对")
TEXT_WORDS_MAX = 30  # words (or 2 CJK characters per word) of a statement these rules read

# ---------------------------------------------------------------- values

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DATE = re.compile(
    r"\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"\b(?:\s+\d{4})?|\b" + _MONTH
    + r"\s+\d{1,2}(?:st|nd|rd|th)?\b(?:,?\s+\d{4})?|\b\d{4}-\d{2}-\d{2}\b|"
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b|"
    r"(?:\d{4}年)?\d{1,2}月\d{1,2}[日号]|(?:下|这|本)?(?:周|星期)[一二三四五六日天]",
    re.IGNORECASE,
)  # fmt: skip
_NUMBER_WORD = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|hundred|thousand)"
)
_AMOUNT_EN = re.compile(
    r"(?:[$€£]\s?)?\b(?P<n>\d+(?:[.,]\d+)?|" + _NUMBER_WORD + r")\b\s*(?P<u>%|[a-z]+)?",
    re.IGNORECASE,
)
_AMOUNT_ZH = re.compile(
    r"(?P<n>\d+(?:\.\d+)?|[零一二两三四五六七八九十百千万]+)\s*"
    r"(?P<u>个人|个月|位|名|个|人|元|块钱?|美元|天|周|年|小时|分钟|岁|公里|斤|%|％)"
)
_ONE = frozenset({"1", "one", "一"})
_PER = frozenset({"个月", "天", "周", "年", "小时", "month", "day", "week", "year", "hour"})
_NAME_EN = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w'’-]*(?:\s+(?:of\s+)?[A-Z][\w'’-]*)*")
_LATIN_IN_ZH = re.compile(r"[A-Za-z][A-Za-z0-9.+-]*")
_ZH_OBJECT = re.compile(
    r"(?:改为|改成|改到|换成|换到|搬到|搬去|搬回|变成|变为|涨到|降到|调整[为到成])了?"
    r"(?P<v>[\u3400-\u9fffA-Za-z0-9]{1,10}?)(?=[了的，。！？,.!?；;\s]|上班|工作|生活|$)"
)
_CJK = re.compile(r"[\u3400-\u9fff]")
_REPLACED_ZH = re.compile(r"换成|改成|改为|变成|变为|取代|代替|搬到|搬去")


@dataclass(frozen=True)
class Value:
    kind: str  # "date" | "amount:<unit>" | "name"
    text: str


def _stem(word: str) -> str:
    w = word.lower().replace("’", "'")
    for suffix in ("ings", "ing", "ied", "ies", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)] + ("y" if suffix in ("ied", "ies") else "")
            if suffix != "s" and len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
                w = w[:-1]  # planning -> plan, dropped -> drop (not: called, passed)
            return w
    return w


def _zh(text: str) -> bool:
    return bool(_CJK.search(text))


@lru_cache(maxsize=16384)
def words(text: str) -> int:
    cjk = len(_CJK.findall(text))
    return len(re.findall(r"[A-Za-z0-9]+", text)) + (cjk + 1) // 2


def _vocative(text: str, m: re.Match[str]) -> bool:
    """A name said to the listener ("Thanks, Ravi!", "Wow, Ines, that's"): not a value."""
    before, after = text[: m.start()].rstrip(), text[m.end() :].lstrip()
    return (not before or before[-1] in ",!?.:") and (not after or after[0] in ",!?.")


def values_of(text: str) -> list[Value]:
    """Dates, amounts (with their unit) and names the statement gives."""
    return list(_values_of(text))


@lru_cache(maxsize=16384)  # each stored statement is read against every new one of its speaker
def _values_of(text: str) -> tuple[Value, ...]:
    out: list[Value] = []
    taken: list[tuple[int, int]] = []

    def free(m: re.Match[str]) -> bool:
        return all(m.end() <= a or m.start() >= b for a, b in taken)

    for m in _DATE.finditer(text):
        out.append(Value("date", m.group(0).lower()))
        taken.append(m.span())
    for m in (_AMOUNT_ZH if _zh(text) else _AMOUNT_EN).finditer(text):
        if not free(m):
            continue
        unit = m.group("u") or ""
        if m.group("n").lower() in _ONE and unit.lower() in _PER:
            continue  # "a month", "一个月": a rate, not a value
        if not _zh(text):
            unit = _stem(unit) if unit and unit.lower() not in _STOP_EN else ""
        out.append(Value(f"amount:{unit}", m.group("n").lower()))
        taken.append(m.span())
    names = _LATIN_IN_ZH if _zh(text) else _NAME_EN
    for m in names.finditer(text):
        if _vocative(text, m) or m.group(0) in ("I", "I'm", "I've", "I'd", "I'll"):
            continue
        if free(m):
            out.append(Value("name", m.group(0).lower().rstrip(".")))
            taken.append(m.span())
    if _zh(text):
        for m in _ZH_OBJECT.finditer(text):
            if free(m):
                out.append(Value("name", m.group("v").lower()))
    return tuple(out)


def content_keys(text: str, skip: list[Value]) -> set[str]:
    """Stems of content words (English) or character pairs (Chinese) besides values and change
    words: what the statement is about."""
    return set(_content_keys(text, tuple(skip)))


@lru_cache(maxsize=16384)
def _content_keys(text: str, skip: tuple[Value, ...]) -> frozenset[str]:
    low = text.lower()
    for v in skip:
        low = low.replace(v.text, " ")
    if _zh(text):
        low = _CHANGE_ZH.sub(" ", low)
        keys: set[str] = set()
        for run in re.findall(r"[\u3400-\u9fff]+", low):
            for i in range(len(run) - 1):
                pair = run[i : i + 2]
                if pair[0] not in _STOP_ZH and pair[1] not in _STOP_ZH:
                    keys.add(pair)
        return frozenset(keys)
    return frozenset(
        _stem(w)
        for w in re.findall(r"[a-z][a-z'-]+", low)
        if len(w) >= 3 and w not in _STOP_EN and w not in _CHANGE_WORDS
    )


def _clause_of(text: str, at: int) -> tuple[int, int]:
    """The span of the clause around position ``at`` (between punctuation)."""
    start = max((m.end() for m in _CLAUSE_END.finditer(text, 0, at)), default=0)
    end = next((m.start() for m in _CLAUSE_END.finditer(text, at)), len(text))
    return start, end


def _marked_value(new: str, value: Value) -> tuple[str, int] | None:
    """The clause of ``new`` in which a change word stands near ``value``, and where the change
    word is in it; None without one."""
    low = new.lower()
    at = low.find(value.text)
    if at < 0:
        return None
    start, end = _clause_of(low, at)
    clause, at = low[start:end], at - start
    for m in (_CHANGE_ZH if _zh(new) else _CHANGE_EN).finditer(clause):
        if m.end() <= at and _NOW_THAT.match(clause, m.start()):
            continue  # "works now that the Apple account is renewed": a reason, not the value
        gap = clause[m.end() : at] if m.end() <= at else clause[at + len(value.text) : m.start()]
        if words(gap) <= MARKER_REACH:
            return clause, m.start()
    return None


# "now that ..." gives a reason: a value after it is not the new value ("three cats now that we
# adopted a kitten" still is).
_NOW_THAT = re.compile(r"now\s+that\b", re.IGNORECASE)


def _same_subject(marked: tuple[str, int], new: str, old: str, shared: set[str]) -> bool:
    """The change is the speaker's (first person), or names the shared thing next to the change
    word ("They pushed the launch to ..."), or both statements start with the same thing."""
    clause, at = marked
    if _zh(new) and _OTHER_PERSON_ZH.search(clause):
        return False
    if _FIRST_PERSON.search(clause) or _first_key(new) == _first_key(old):
        return True
    if not _zh(new) and not _subject_known(clause[:at], old):
        return False  # "Dario moved the cache audit" does not revise what Ravi did with it
    if _zh(new):
        # A thing named in front of the change word that the earlier statement never names
        # ("智能客服项目推迟到…" against another project's "目标：9月26日上线"): its change, not
        # this one's. (A short subject, "财务说延到…", says who reported it.)
        subject = named_front_zh(clause[:at])
        if subject and not subject & content_keys(old, []):
            return False
        near = clause[max(0, at - 2 * MARKER_REACH) : at + 2 * MARKER_REACH]
        return any(k in near for k in shared)
    near_words = clause[:at].split()[-MARKER_REACH:] + clause[at:].split()[: MARKER_REACH + 1]
    return any(_stem(w.strip(".,!?;:")) in shared for w in near_words)


_ZH_SUBJECT_KEYS = 3  # character pairs: a named thing ("客服项目"), not a reporter ("财务")


def named_front_zh(before: str) -> set[str]:
    """The character pairs of the thing a Chinese statement names right in front of its change
    word or value (after the last separator: "同步一下：智能客服项目" gives 智能客服项目's), when it
    is a named thing (``_ZH_SUBJECT_KEYS`` pairs or more); empty otherwise."""
    subject = content_keys(re.split(r"[：:，,、。；]", before)[-1], [])
    return subject if len(subject) >= _ZH_SUBJECT_KEYS else set()


def _subject_known(before: str, old: str) -> bool:
    """The words in front of the change word (its subject: "Dario", "the launch") are absent or
    said in the earlier statement too: a change by someone or something else is no revision."""
    subject = content_keys(before, [])
    return not subject or bool(subject & content_keys(old, []))


def _word_keys(text: str, skip: Sequence[str]) -> list[str]:
    """The statement's words in order with its values masked (English), or its characters
    (Chinese): what :func:`substituted` aligns."""
    low = text.lower()
    for v in skip:
        low = low.replace(v.lower(), " \x00 ")
    if _zh(text):
        return [c for c in low if not c.isspace()]
    return re.findall(r"[a-z][a-z'-]+|\x00", low)


def substituted(
    new: str,
    old: str,
    new_values: Sequence[str] | None = None,
    old_values: Sequence[str] | None = None,
    *,
    modifier_only: bool = False,
) -> bool:
    """Aligned, the two statements swap the content word in front of a shared one ("the design
    review" -> "the code review", "设计评审" -> "代码评审"): a modifier names which thing, so they
    speak of two things, whatever else they share. Values (default: :func:`values_of`'s) are
    masked first: a changed value is not a swapped word. ``modifier_only``: only one word
    against one word (two characters in Chinese) counts ("daily standup" against "from next
    Monday standup" is a time said, not another standup)."""
    if old_values is None:
        old_values = [v.text for v in values_of(old)]
    if new_values is None:
        new_values = [v.text for v in values_of(new)]
    a, b = _word_keys(old, old_values), _word_keys(new, new_values)
    sep, head = ("", 2) if _zh(new) else (" ", 1)
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op != "replace" or not content_keys(sep.join(a[i2 : i2 + head]), []):
            continue  # not in front of a shared content word
        if modifier_only and max(i2 - i1, j2 - j1) > head:
            continue
        was = content_keys(sep.join(a[i1:i2]).replace("\x00", " "), [])
        now = content_keys(sep.join(b[j1:j2]).replace("\x00", " "), [])
        if was and now and not was & now:
            return True
    return False


def _first_key(text: str) -> str | None:
    keys = content_keys(text, [])
    low = text.lower()
    return min(keys, key=lambda k: (low.find(k) if low.find(k) >= 0 else len(low), k), default=None)


@lru_cache(maxsize=16384)
def changed_value(new: str) -> tuple[Value, tuple[str, int]] | None:
    """The one value ``new`` says changed and the clause saying so (:func:`_marked_value`), or
    None: what :func:`value_revision` reads of the new statement alone, once per statement."""
    if words(new) > TEXT_WORDS_MAX:
        return None
    new_values = values_of(new)
    if len(new_values) != 1:
        return None
    nv = new_values[0]
    marked = _marked_value(new, nv)
    if marked is None:
        return None  # no change word next to the value
    if nv.kind == "date" and not RESCHEDULED.search(new):
        return None  # another date of a plan is another occurrence unless it says it moved
    return nv, marked


def value_revision(new: str, old: str) -> str | None:
    """``old value -> new value`` when ``new`` says that the value ``old`` gave changed."""
    changed = changed_value(new)
    if changed is None or words(old) > TEXT_WORDS_MAX:
        return None
    nv, marked = changed
    new_values, old_values = values_of(new), values_of(old)
    if nv.text in old.lower():
        return None  # the new value was already said: a restatement, not a change
    same_kind = [v for v in old_values if v.kind == nv.kind]
    if any(v.text == nv.text for v in same_kind):
        return None
    new_keys, old_keys = content_keys(new, new_values), content_keys(old, old_values)
    shared = new_keys & old_keys
    if not shared or not _same_subject(marked, new, old, shared) or substituted(new, old):
        return None  # not about the same thing
    if same_kind:
        return f"{same_kind[0].text} -> {nv.text}"
    # Chinese names carry no capitals: a name replaced outright ("换成飞书") replaces what the
    # earlier statement said of the same thing besides the shared words.
    if _zh(new) and nv.kind == "name" and _REPLACED_ZH.search(new) and old_keys - new_keys:
        return f"? -> {nv.text}"
    return None


@lru_cache(maxsize=16384)
def _polarities(text: str) -> dict[str, bool]:
    """Content key -> asserted (True) or denied (False); a key said both ways is left out."""
    seen: dict[str, set[bool]] = {}
    if _zh(text):
        for clause in re.split(r"[，,。；;！!？?：:]", text):
            for i in range(len(clause) - 1):
                pair = clause[i : i + 2]
                if not (_CJK.match(pair[0]) and _CJK.match(pair[1])):
                    continue
                if pair[0] in _STOP_ZH or pair[1] in _STOP_ZH or _NEGATOR_ZH.search(pair):
                    continue
                denied = bool(_NEGATOR_ZH.search(clause[max(0, i - 3) : i]))
                seen.setdefault(pair, set()).add(not denied)
    else:
        for clause in re.split(r"[,;.!?:]", text.lower().replace("n't", " not")):
            toks = re.findall(r"[a-z][a-z'-]*", clause)
            for i, w in enumerate(toks):
                if len(w) < 4 or w in _STOP_EN or w in _CHANGE_WORDS or w in _NEGATOR_EN:
                    continue
                # "never quit running" denies the denial: an odd count of negators denies
                denied = sum(t in _NEGATOR_EN for t in toks[max(0, i - 3) : i]) % 2 == 1
                denied = denied or toks[max(0, i - 2) : i] == ["no", "more"]
                seen.setdefault(_stem(w), set()).add(not denied)
    return {k: next(iter(v)) for k, v in seen.items() if len(v) == 1}


@lru_cache(maxsize=16384)
def flip_clauses(new: str) -> tuple[dict[str, bool], ...]:
    """The polarities of each clause of ``new`` that says its speaker's state stopped or
    started, in order: what :func:`polarity_flip` reads of the new statement alone."""
    if words(new) > TEXT_WORDS_MAX:
        return ()
    if _OTHER_PERSON_ZH.search(new) if _zh(new) else not _FIRST_PERSON.search(new):
        return ()  # about someone else, or said to the listener ("don't give up!")
    out = []
    for m in (_FLIP_ZH if _zh(new) else _FLIP_EN).finditer(new):
        if _NEGATED_MARKER.search(new[max(0, m.start() - 12) : m.start()]):
            continue
        start, end = _clause_of(new, m.start())
        out.append(_polarities(new[start:end]))
    return tuple(out)


def polarity_flip(new: str, old: str) -> str | None:
    """``asserted -> denied`` (or back) of a content key, when ``new`` says that a state of
    its speaker stopped or started, in the clause that says so ("I won't stop" says neither)."""
    flips = flip_clauses(new)
    if not flips or words(old) > TEXT_WORDS_MAX or _zh(new) != _zh(old):
        return None
    before = _polarities(old)
    for now in flips:
        for key in sorted(now.keys() & before.keys()):
            if now[key] != before[key]:
                said = {True: "yes", False: "no"}
                return f"{key}: {said[before[key]]} -> {said[now[key]]}"
    return None


def strong_change(text: str) -> bool:
    """Says outright that something stopped or was replaced (an additive word does not then
    make it an addition: "我不再吃素了，现在也吃肉")."""
    return bool(
        re.search(
            r"\b(?:no longer|stopped|quit|switched|replaced|instead|again)\b|"
            r"不再|换成|改成|改为|又开始|重新开始",
            text,
            re.IGNORECASE,
        )
    )


__all__ = [
    "Value",
    "changed_value",
    "content_keys",
    "flip_clauses",
    "polarity_flip",
    "strong_change",
    "value_revision",
    "values_of",
]
