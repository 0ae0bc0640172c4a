"""Pure: do two statements give different values for the same thing? (issue 26, part 3)

The write path pairs a new FacetPoint with its nearest stored ones (by embedding, in its
dataset and scope: :mod:`memflow.store.conflicts`); this module reads the texts of a pair. It
does not decide that they speak of the same thing: that is what the similarity of the two
statements with their values masked (:func:`memflow.text.values.masked`) measures. It says
whether, and how, their values differ:

- **departure**: the newer statement names a value of the older one as left behind ("from
  Redis to Postgres", "Redis is no longer ...", "instead of Slack", "不再用…", "从…改为…"),
  whatever the words around it: the strongest evidence of a change;
- **change**: one kind of value differs (a date, a time of day, an amount of one family, a
  count, a version, a status or a name: :mod:`memflow.text.values`) and every other kind the
  two share agrees; ``cued`` when the newer statement says that it changed ("moved", "now",
  "postponed", "raised", "switched", "改到", "现在", "涨到" ...) next to the new value.

A new value must stand where a value is stated (after a copula, a preposition or a change word,
or as the subject when the old value was the subject too): "the Apple account is renewed" gives
no new value of anything. Questions and hypotheticals give none either, and statements that
swap the word in front of a shared one ("the design review" / "the code review") are about two
things (:func:`memflow.text.revision.substituted`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memflow.text.revision import substituted
from memflow.text.values import Value, is_zh, values

# Questions and hypotheticals state no value (plans and decisions do: "we will use X").
_UNSURE = re.compile(
    r"\?|？|\b(?:if|maybe|perhaps|might|could|would|should|whether|wish|hope|unless|"
    r"considering|thinking about|not sure|wonder)\b|如果|可能|也许|是否|会不会|要不要|吗|呢|假如|"
    r"考虑",
    re.IGNORECASE,
)
# An event happened once; a later one with another value is another event, not a change.
_EVENT = re.compile(
    r"\b(?:yesterday|this (?:morning|afternoon|evening)|last (?:night|week|weekend)|ago|"
    r"earlier today)\b|昨天|前天|刚才|上周|上个?星期",
    re.IGNORECASE,
)
# The newer statement says that something changed, next to its new value.
_CUE_EN = re.compile(
    r"\b(?:now(?!\s+that\b)|nowadays|no longer|instead|anymore|switch(?:ed|ing)?|chang(?:ed|es|ing)|"
    r"mov(?:ed|es|ing)|migrat(?:ed|es|ing)|relocat(?:ed|es|ing)|replac(?:ed|es|ing)|"
    r"swapp(?:ed|ing)|rais(?:ed|es|ing)|increas(?:ed|es|ing)|decreas(?:ed|es|ing)|"
    r"lower(?:ed|s|ing)|reduc(?:ed|es|ing)|cut|dropp(?:ed|ing)|push(?:ed|es|ing)|"
    r"postpon(?:ed|es|ing)|reschedul(?:ed|es|ing)|delay(?:ed|s|ing)|slipp(?:ed|ing)|"
    r"brought forward|pulled in|bump(?:ed|s|ing)|upgrad(?:ed|es|ing)|downgrad(?:ed|es|ing)|"
    r"went (?:up|down)|gone (?:up|down)|became|has become|updated|revised|corrected|"
    r"as of|from now on|effective|took over|taken over|takes over|handed (?:over )?to|"
    r"reassigned|transferred|grew|shrank|expanded|extended|shortened|renamed|"
    r"(?:is|are) (?:back|down|up) to|new (?:date|time|owner|lead|price|location|plan))\b",
    re.IGNORECASE,
)
_CUE_ZH = re.compile(
    r"改为|改成|改到|改在|改用|换成|换到|换了|搬到|搬去|迁到|迁移到|切到|切换到|推迟|延期|延后|提前到?|"
    r"调整[为到成]?|涨到|涨价|涨了|降到|降价|降了|变成|变为|变了|不再|现在|如今|目前|取代|代替|"
    r"接手|转给|交给|升级到?|降级到?|更新为|更改为|调到|挪到|新的?(?:日期|时间|计划|安排|负责人|地址|价格)"
)
# A value named in the newer statement as left behind (X is the older statement's value).
_DEPART_EN = (
    r"\bfrom\s+(?:the\s+)?{x}\s+(?:to|over to|onto|into)\b",
    r"\b{x}\s*(?:->|→|=>)",
    r"\breplac(?:e|ed|es|ing)\s+(?:the\s+)?{x}\b",
    r"\b{x}\s+(?:was|has been|is being|got|will be)\s+replaced\b",
    r"\binstead of\s+(?:the\s+)?{x}\b",
    r"\bno longer\b[^.;!?]{{0,40}}\b{x}\b",
    r"\b{x}\b[^.;!?]{{0,30}}\bno longer\b",
    r"\b{x}\b[^.;!?]{{0,30}}\b(?:anymore|any more)\b",
    r"\b(?:dropp(?:ed|ing)|ditch(?:ed|ing)|retir(?:ed|ing)|remov(?:ed|ing)|abandon(?:ed|ing)|"
    r"stopp(?:ed|ing) using|mov(?:ed|ing) (?:off|away from)|switch(?:ed|ing) (?:off|away from)|"
    r"got rid of|migrat(?:ed|ing) (?:off|away from)|sunset(?:ted)?|decommission(?:ed|ing)|"
    r"phas(?:ed|ing) out|cancel(?:l)?(?:ed|ing))\s+(?:the\s+|our\s+)?{x}\b",
    r"\b{x}\b[^.;!?]{{0,20}}\b(?:is|was|has been|were)\s+(?:dropped|retired|removed|cancel(?:l)?ed|"
    r"abandoned|decommissioned|phased out|gone|out)\b",
    r"\bnot\s+{x}\s+(?:anymore|any more)\b",
    r"\b(?:took|taken|takes|taking|handed|handing) over\b[^.;!?]{{0,40}}\bfrom\s+{x}\b",
)
_DEPART_ZH = (
    r"从{x}(?:改|换|迁|搬|切|调|推迟|延期|提前|变)",
    r"由{x}(?:改|换|变)",
    r"不再(?:用|使用|采用|是|在)?{x}",
    r"{x}(?:不再|已经不|被替换|被取代|已弃用|弃用|停用|下线|取消|作废)",
    r"(?:弃用|停用|下线|取消|去掉|放弃|替换掉?|换掉)了?{x}",
    r"{x}(?:改为|改成|换成|改到|推迟到|延期到|提前到|变成|变为)",
)
# What may stand right before a stated value (English, lower case).
_SLOT_EN = frozenset(
    """is are was were be been 's am now to at on in for by from with of as into onto under
    via use uses using used run runs running adopt adopted became become becomes remains stays
    : = -> → until till around about approximately roughly only just still""".split()
)
_DETERMINER = frozenset("the a an our my your their his her its this that these those".split())
_SLOT_ZH = re.compile(
    r"(?:是|为|到|在|用|改为|改成|换成|变成|变为|定在|定于|约|共|有|要|由|交给|接手|调到|涨到|降到|"
    r"推迟到|提前到|延期到|改到|搬到|迁到|切到|：|:)\s*$"
)
CUE_REACH = 6  # words (English) or 12 characters (Chinese) between a change word and its value


@dataclass(frozen=True)
class Difference:
    """How the newer statement's values differ from the older one's."""

    how: str  # "departure" | "change"
    kind: str  # the kind of value that differs
    old: str  # the older value (normalised)
    new: str | None  # the newer value (None: left with no replacement named)
    cued: bool  # the newer statement says it changed (always true for a departure)

    @property
    def detail(self) -> str:
        return f"{self.old} -> {self.new or '(none)'}"


def unsure(text: str) -> bool:
    return bool(_UNSURE.search(text))


def event(text: str) -> bool:
    return bool(_EVENT.search(text))


def _compatible(a: Value, b: Value) -> bool:
    """Two values of one kind: a name's subkinds differ only when both are known and one of
    them is a person (a person does not replace a product or a place)."""
    if a.family != b.family:
        return False
    if a.kind == b.kind or "name" in (a.kind, b.kind):
        return True
    return "name:person" not in (a.kind, b.kind)


def _departed(new: str, old_value: Value) -> bool:
    x = re.escape(old_value.text)
    patterns = _DEPART_ZH if is_zh(new) else _DEPART_EN
    return any(re.search(p.format(x=x), new, re.IGNORECASE) for p in patterns)


def _in_slot(text: str, v: Value, zh: bool) -> bool:
    """Whether ``v`` stands where a value is stated, not as a modifier of a noun after it."""
    before = text[: v.start]
    if zh:
        return bool(_SLOT_ZH.search(before)) or v.start == 0 or before[-1:] in "，,。；;"
    words = re.findall(r"[\w'’]+|[:=→]|->", before.lower())
    if not words:
        return True  # the subject: compared with the older statement's subject (see below)
    prev = words[-1]
    if prev in _DETERMINER:
        after = text[v.end :].lstrip()
        return not re.match(r"[a-z]", after)  # "the Apple account": a modifier
    return prev in _SLOT_EN or any(w in _SLOT_EN for w in words[-3:])


def _cued(text: str, v: Value, zh: bool) -> bool:
    for m in (_CUE_ZH if zh else _CUE_EN).finditer(text):
        if m.end() <= v.start:
            gap = text[m.end() : v.start]
        elif m.start() >= v.end:
            gap = text[v.end : m.start()]
        else:
            return True
        if re.search(r"[.;!?。；！？]", gap):
            continue
        if (len(gap) if zh else len(gap.split())) <= (2 * CUE_REACH if zh else CUE_REACH):
            return True
    return False


@lru_cache(maxsize=16384)
def difference(new: str, old: str) -> Difference | None:
    """How ``new`` (the later statement, speaker label removed) gives another value than
    ``old`` for what they both state, or None (see the module docstring)."""
    if unsure(new) or unsure(old) or event(old) or is_zh(new) != is_zh(old):
        return None
    zh = is_zh(new)
    vn, vo = values(new), values(old)
    if not vo:
        return None
    new_norms = {v.norm for v in vn}
    low = new.lower()
    # 1. A value of the older statement named as left behind.
    for v in vo:
        if v.kind == "status" or not _departed(new, v):
            continue
        fresh = [w for w in vn if _compatible(w, v) and w.norm != v.norm and w.norm not in
                 {o.norm for o in vo} and not _departed(new, w)]  # fmt: skip
        return Difference("departure", v.family, v.norm, fresh[0].norm if fresh else None, True)
    if substituted(new, old, [v.text for v in vn], [v.text for v in vo]):
        return None  # "the design review" -> "the code review": two things
    # 2. One kind of value differs, the others agree.
    changed: list[tuple[Value, Value]] = []
    for family in dict.fromkeys(v.family for v in vo):
        olds = [v for v in vo if v.family == family]
        news = [v for v in vn if v.family == family]
        if not news:
            continue  # said in one of them only: not a difference
        gone = [v for v in olds if v.norm not in new_norms and v.text.lower() not in low]
        came = [w for w in news if w.norm not in {v.norm for v in olds}]
        if not came or not gone:
            continue
        pairs = [(o, w) for o in gone for w in came if _compatible(o, w)]
        if not pairs:
            return None  # a person against a product: not one slot
        changed.append(pairs[0])
    if len(changed) != 1:
        return None
    o, w = changed[0]
    if not _in_slot(new, w, zh):
        return None
    if not zh and _subject(new, w) != _subject(old, o):
        return None  # a value in front (the subject) against one behind: not one slot
    return Difference("change", o.family, o.norm, w.norm, _cued(new, w, zh))


def _subject(text: str, v: Value) -> bool:
    """Whether ``v`` opens its statement (it is what the statement is about)."""
    return not re.findall(r"[\w'’]+", text[: v.start])


__all__ = ["CUE_REACH", "Difference", "difference", "event", "unsure"]
