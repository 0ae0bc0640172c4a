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
from difflib import SequenceMatcher
from functools import lru_cache

from memflow.text.hedges import unsure_pattern
from memflow.text.revision import content_keys, substituted
from memflow.text.sentences import split_sentences
from memflow.text.slots import aligned_words
from memflow.text.values import Value, is_zh, values

# Questions, hypotheticals, proposals and rejected changes state no value (plans and decisions
# do: "we will use X").
_UNSURE = unsure_pattern()
# An event happened once; a later one with another value is another event, not a change.
_EVENT = re.compile(
    r"\b(?:yesterday|this (?:morning|afternoon|evening)|last (?:night|week|weekend)|ago|"
    r"earlier today)\b|昨天|前天|刚才|上周|上个?星期",
    re.IGNORECASE,
)
# The newer statement says that something changed, next to its new value.
_CUE_EN = re.compile(
    r"\b(?:now|nowadays|no longer|instead|anymore|switch(?:ed|ing)?|chang(?:ed|es|ing)|"
    r"mov(?:ed|es|ing)|migrat(?:ed|es|ing)|relocat(?:ed|es|ing)|replac(?:ed|es|ing)|"
    r"swapp(?:ed|ing)|rais(?:ed|es|ing)|increas(?:ed|es|ing)|decreas(?:ed|es|ing)|"
    r"lower(?:ed|s|ing)|reduc(?:ed|es|ing)|cut|dropp(?:ed|ing)|push(?:ed|es|ing)|"
    r"postpon(?:ed|es|ing)|reschedul(?:ed|es|ing)|delay(?:ed|s|ing)|slipp(?:ed|ing)|"
    r"brought forward|pulled in|bump(?:ed|s|ing)|upgrad(?:ed|es|ing)|downgrad(?:ed|es|ing)|"
    r"went (?:up|down)|gone (?:up|down)|became|has become|updated|revised|corrected|"
    r"as of|from now on|effective|took over|taken over|takes over|handed (?:over )?to|"
    r"reassigned|transferred|grew|shrank|expanded|extended|shortened|renamed|"
    r"(?:is|are) (?:back|down|up) to|new (?:date|time|owner|lead|price|location|plan|(?:phone )?number|phone|mobile|address|email)|"
    r"correction|actually|scratch that|ignore (?:that|my last)|my mistake|my bad|update|"
    r"in the end|ended up|eventually|finally|"
    r"retarget(?:ed|s|ing)?|rebook(?:ed|s|ing)?|goes to|going to|"
    r"from now on|starting|henceforth|from (?:this|next) (?:week|month|sprint|quarter|year|"
    r"monday|tuesday|wednesday|thursday|friday))\b",
    re.IGNORECASE,
)
_CUE_ZH = re.compile(
    r"改为|改成|改到|改在|改用|换成|换到|换了|搬到|搬去|迁到|迁移到|切到|切换到|推迟|延期|延后|延至|延到|顺延|提前到?|"
    r"调整[为到成]?|涨到|涨价|涨了|降到|降价|降了|变成|变为|变了|不再|现在|如今|目前|取代|代替|"
    r"接手|转给|交给|升级到?|降级到?|更新为|更改为|调到|挪到|改走|改由|改为|换了|改签|退了|退掉|更正|纠正|其实|起|开始|最后定|最终定|决定|"
    r"新的?(?:日期|时间|计划|安排|负责人|地址|价格|号码?|电话|手机|邮箱)|换号|换了号|最终|最后(?!一)"
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
    r"abandoned|decommissioned|phased out)\b",
    r"\bnot\s+{x}\s+(?:anymore|any more)\b",
    r"\b(?:took|taken|takes|taking|handed|handing) over\b[^.;!?]{{0,40}}\bfrom\s+{x}\b",
    r"(?:,|;|—|-)\s*not\s+{x}\b",
    # (not "still missing Teodor's team": something of theirs is awaited)
    r"\bmiss(?:ed|es|ing)\s+(?:the\s+(?:cut|train|window|deadline|date)\s+(?:for|of)\s+)?{x}\b"
    r"(?!['’]s\b)",
)
_DEPART_ZH = (
    r"从\s*{x}\s*(?:改|换|迁|搬|切|调|推迟|延期|提前|变)",
    r"由\s*{x}\s*(?:改|换|变)",
    r"不再(?:用|使用|采用|是|在|走)?\s*{x}",
    r"{x}\s*(?:不再|已经不|被替换|被取代|已弃用|弃用|停用|下线|取消|作废)",
    r"(?:弃用|停用|下线|取消|去掉|放弃|替换掉?|换掉)了?\s*{x}",
    r"{x}\s*(?:改为|改成|换成|改到|推迟到|延期到|提前到|变成|变为)",
    r"(?:，|,)\s*(?:不是|而不是)\s*{x}",
)
# What may stand right before a stated value (English, lower case).
_SLOT_EN = frozenset(
    """is are was were be been 's am now to at on in for by from with of as into onto under
    via use uses using used run runs running adopt adopted became become becomes remains stays
    : = -> → until till around about approximately roughly only just still""".split()
) | {  # "it's Thursdays now": a pronoun with its "is" (one token)
    f"{w}{a}s" for w in ("it", "that", "there", "here", "he", "she", "what", "who") for a in "'’"
}
_DETERMINER = frozenset("the a an our my your their his her its this that these those".split())
_SLOT_ZH = re.compile(
    r"(?:是|为|到|在|用|改为|改成|换成|变成|变为|定在|定于|约|共|有|要|由|交给|接手|调到|涨到|降到|"
    r"推迟到|提前到|延期到|改到|搬到|迁到|切到|向|归|至|坐|乘|搭|乘坐|改签到|改签成|去|了|：|:|"
    # an amount per head or per unit ("人均380"), a version released or deployed ("发布 v2.1")
    r"人均|每人|每位|单价|均价|发布|上线|部署)\s*$"
)
_NOW_THAT = re.compile(r"now\s+that\b", re.IGNORECASE)
# What a day or time may carry in front in Chinese: which period it recurs in or belongs to.
_PERIOD_ZH = re.compile(r"(?:每|本|下|上|这)个?(?:月|周|星期|礼拜|年|天)\s*$")
_ACTS_ZH = re.compile(r"(?:来)?(?:负责|维护|接手|牵头|主导|跟进|对接|管理?)")
# A value followed by what it does is the subject of a statement ("Lena is looking after …",
# "Tom owns …", "Priya will lead …").
_ACTS = re.compile(
    r"\s+(?:is|are|was|will|has|had|now|takes|took|owns|leads|runs|handles|maintains|manages|"
    r"looks after|covers|reviews|coordinates|becomes|became)\b",
    re.IGNORECASE,
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
    shared: int = 0  # content words (Chinese pairs) and other values both statements state
    # The words in front of the two values (what they are the value of): the share the smaller
    # set has in common with the other ("Daily standup 9:30" / "standup moves to 9:45": 0.5).
    head: float = 0.0
    # Both name one ticket, host or other identifier ("PAY-1893", "db-stg-02") besides the value
    # that changed: the same thing, whatever else the statements say.
    same_id: bool = False

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
    x = old_value.text
    if new.isascii() and x.isascii() and x.lower() not in new.lower():
        return False  # every pattern names the value: absent, none can match
    return bool(_departure(x, is_zh(new)).search(new))


@lru_cache(maxsize=4096)
def _departure(value: str, zh: bool) -> re.Pattern[str]:
    """The departure patterns naming ``value``, as one (compiled once per value)."""
    x = re.escape(value)
    either = "|".join(f"(?:{p.format(x=x)})" for p in (_DEPART_ZH if zh else _DEPART_EN))
    return re.compile(either, re.IGNORECASE)


def _in_slot(text: str, v: Value, zh: bool, old: str = "", ov: Value | None = None) -> bool:
    """Whether ``v`` stands where a value is stated, not as a modifier of a noun after it: after
    a copula, a preposition, a change word or a separator (":", "|", "→"), at the start, or
    where the older statement had its value (the same word in front: "Board meeting March 14"
    -> "Board meeting March 21")."""
    before = text[: v.start]
    if v.kind in ("status", "phone"):
        # a state is stated wherever it stands ("Kestrel countersigned on Friday"), and so is a
        # phone number ("save this number, 07911 …"): it modifies no noun
        return True
    if _POSSESSIVE.match(text, v.end):
        return False  # "Wojtek's schema patch": whose patch, not a value of anything
    if (
        ov is not None
        and _word_before(before)
        and _word_before(before) == _word_before(old[: ov.start])
    ):
        return True
    named = re.search(r"([^\s:：|,，;；]+)\s*$", before)
    if (
        ov is not None
        and v.kind == ov.kind == "version"
        and named is not None
        and named.group(1).lower() in old[: ov.start].lower()
    ):
        return True  # "点餐系统 v2.3.0 今天上线" of "系统：点餐系统 | 版本：v2.2.5": its version
    if zh:
        before = _PERIOD_ZH.sub("", before)  # "提前为每月20号": the day, every month
        return (
            bool(_SLOT_ZH.search(before) or _ACTS_ZH.match(text, v.end))
            or bool(_NEW_OF_ZH.search(before[-4:]))  # "新号 139…"
            or v.start == 0
            or before[-1:] in "，,。；;|"
            or v.text[:1] in "$€£¥￥"  # an amount with its sign is stated ("账单 ¥3,900/月")
        )
    if before.rstrip()[-1:] in ("|", "(", "—", "–"):
        return True
    if v.kind == "code" and before.rstrip()[-1:] in (",", ";"):
        return True  # a label listed in a terse note: "Design crit Fri 3pm, 6F-12, bring …"
    words = re.findall(r"[\w'’]+|[:=→]|->", before.lower())
    if not words or _ACTS.match(text, v.end):
        return True  # the subject ("Lena is looking after …"): compared with the older one's
    prev = words[-1]
    if prev in _DETERMINER:
        after = text[v.end :].lstrip()
        return not re.match(r"[a-z]", after)  # "the Apple account": a modifier
    return prev in _SLOT_EN or any(w in _SLOT_EN for w in words[-3:])


def stated(text: str, v: Value) -> bool:
    """Whether the value ``v`` of ``text`` stands where a value is stated (after a copula, a
    preposition, a change word, a separator, or as the subject), not as a modifier of a noun
    after it ("the Apple account")."""
    return _in_slot(text, v, is_zh(text))


def _word_before(text: str) -> str:
    """The last word (or CJK character pair) of ``text``, lower-cased."""
    found = re.findall(r"[A-Za-z][\w'’]*|[\u3400-\u9fff]{1,2}", text.lower())
    return found[-1] if found else ""


def _cued(text: str, v: Value, zh: bool) -> bool:
    for m in (_CUE_ZH if zh else _CUE_EN).finditer(text):
        if m.end() <= v.start and _NOW_THAT.match(text, m.start()):
            continue  # "now that the Apple account is renewed": a reason, not the value
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


def cued(text: str, v: Value) -> bool:
    """Whether ``text`` says, next to its value ``v``, that it changed ("now", "moved to",
    "改到")."""
    return _cued(text, v, is_zh(text))


@lru_cache(maxsize=16384)
def difference(new: str, old: str) -> Difference | None:
    """How ``new`` (the later statement, speaker label removed) gives another value than
    ``old`` for what they both state, or None (see the module docstring)."""
    if unsure(new) or unsure(old) or event(old) or is_zh(new) != is_zh(old):
        return None
    zh = is_zh(new)
    vn, vo = values(new), values(old)
    if not vo:
        return _aligned_difference(new, old)
    new_norms = {v.norm for v in vn}
    low = new.lower()
    # 1. A value of the older statement named as left behind.
    for v in vo:
        if v.kind == "status" or not _departed(new, v):
            continue
        fresh = [w for w in vn if _compatible(w, v) and w.norm != v.norm and w.norm not in
                 {o.norm for o in vo} and not _departed(new, w)]  # fmt: skip
        return Difference(
            "departure", v.family, v.norm, fresh[0].norm if fresh else None, True,
            _shared(new, old, vn, vo),
        )  # fmt: skip
    if substituted(new, old, [v.text for v in vn], [v.text for v in vo], modifier_only=True):
        return None  # "the design review" -> "the code review": two things
    # 2. One kind of value differs, the others agree.
    changed: list[list[tuple[Value, Value]]] = []
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
        changed.append(pairs)
    if not changed:
        return _aligned_difference(new, old)
    if len(changed) != 1:
        return None
    # The pair whose new value stands where a value is stated, and in the same place (both the
    # subject, or neither) as the old one.
    slotted = [
        (o, w)
        for o, w in changed[0]
        if _in_slot(new, w, zh, old, o) and (zh or _subject(new, w) == _subject(old, o))
    ]
    if not slotted:
        return None
    o, w = slotted[0]
    ids = {v.norm for v in vn if v.kind in ("id", "code")} & {
        v.norm for v in vo if v.kind in ("id", "code")
    }
    return Difference(
        "change", o.family, o.norm, w.norm, _cued(new, w, zh), _shared(new, old, vn, vo),
        _head(old, o, vo, new, w, vn), bool(ids - {o.norm, w.norm}),
    )  # fmt: skip


def _aligned_difference(new: str, old: str) -> Difference | None:
    """A change of a value no form marks (:func:`memflow.text.slots.aligned_words`: one
    statement but for one short span of words, "is zstd" / "is now gzip"), kind "term"; its
    head is the whole rest of the statement (1.0)."""
    got = aligned_words(new, old)
    if got is None:
        return None
    was, now = got
    at = new.lower().find(now.split()[0])
    v = Value("name:term", now, new[at : at + len(now)], at, at + len(now))
    return Difference("change", "term", was, now, at >= 0 and _cued(new, v, False),
                      _shared(new, old, [v], []), 1.0)  # fmt: skip


# (a point between digits is a decimal or a time, "7.30": no end of a clause)
_CLAUSE = re.compile(r"(?<!\d)\.|\.(?!\d)|[;!?。；！？\n]")


def _before(text: str, v: Value, found: list[Value]) -> set[str]:
    """The content words of the clause in front of ``v`` and the ids, codes and names among its
    other values (what ``v`` is the value of: "BILL-204 moved to 7.1.3")."""
    cut = max((m.end() for m in _CLAUSE.finditer(text, 0, v.start)), default=0)
    inside = [w for w in found if cut <= w.start and w.end <= v.start]
    named = {f"={w.norm}" for w in inside if w.family in _SUBJECT_FAMILIES}
    return _keys(text[cut : v.start], inside, offset=cut) | named | _deadline(text, v)


# A date said as a limit, whatever the words: "Deadline: 3 March", "forms taken until 21 March",
# "due by Friday", "6月30日截止", "7月18日前提交". Two dates so said are of one thing (a limit).
_LIMIT_BEFORE = re.compile(
    r"\b(?:deadline|due(?: date)?|until|till|by|closes?(?: on)?|no later than|cut-?off)\W{0,3}$"
    r"|(?:截止|截至)(?:日期|时间)?\W{0,2}$",
    re.IGNORECASE,
)
_LIMIT_AFTER = re.compile(r"^\s*(?:截止|截至|之?前|以前)")


def _deadline(text: str, v: Value) -> set[str]:
    if v.kind != "date":
        return set()
    limit = _LIMIT_BEFORE.search(text[max(0, v.start - 24) : v.start]) or _LIMIT_AFTER.match(
        text[v.end : v.end + 4]
    )
    return {"<limit>"} if limit else set()


_SUBJECT_FAMILIES = frozenset({"id", "code", "name", "version"})


def _head(old: str, o: Value, vo: list[Value], new: str, w: Value, vn: list[Value]) -> float:
    ho, hn = _before(old, o, vo), _before(new, w, vn)
    return len(ho & hn) / min(len(ho), len(hn)) if ho and hn else 0.0


COUNTED_WORDS = 2  # words (English; 2 characters each in Chinese) after a count: what it counts


def _counted(text: str, v: Value) -> set[str]:
    """The content words right after a count, in its clause: what it counts ("3 lab
    technicians", "3 名学徒"); in Chinese also the noun right in front of it, which a count
    with its measure word may follow ("门店 120 家" counts what "85家门店" counts)."""
    after = _CLAUSE.split(text[v.end :], maxsplit=1)[0]
    if is_zh(text):
        run = re.match(r"\s*[\u3400-\u9fff]*", after)
        out = content_keys(run.group(0)[: 2 * COUNTED_WORDS + 1] if run else "", [])
        front = re.search(r"[\u3400-\u9fff]+\s*$", text[: v.start])
        if front and re.search(r"[\u3400-\u9fff]$", v.text):  # "120 家": a measure word
            out |= content_keys(front.group(0).strip()[-COUNTED_WORDS:], [])
        return out
    return content_keys(" ".join(re.findall(r"[A-Za-z][\w'’-]*", after)[:COUNTED_WORDS]), [])


def aligned_change(new: str, old: str) -> tuple[str, str] | None:
    """``(old span, new span)`` when two Chinese statements are one statement but for one short
    span of characters (a value nobody capitalises: a person's or a product's name, "负责人 X"
    -> "负责人 Y"), the rest the same and long enough to say what it is the value of; None
    otherwise. English names are values already (:func:`memflow.text.values.values`)."""
    if not (is_zh(new) and is_zh(old)) or new == old:
        return None
    a, b = old.strip(), new.strip()
    ops = [
        op for op in SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"
    ]
    if len(ops) != 1 or ops[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = ops[0]
    was, now = a[i1:i2].strip(), b[j1:j2].strip()
    same = len(a) - (i2 - i1)
    if not (0 < len(was) <= ALIGNED_SPAN_MAX and 0 < len(now) <= ALIGNED_SPAN_MAX):
        return None
    if any(ch.isdigit() for ch in was + now) or same < ALIGNED_SHARED_MIN:
        return None  # numbers are values already; a short statement says too little
    return was, now


ALIGNED_SPAN_MAX = 4  # characters of the span that differs (a Chinese name: 2 to 4)
ALIGNED_SHARED_MIN = 6  # characters the two statements share besides it


def _shared(new: str, old: str, vn: list[Value], vo: list[Value]) -> int:
    """What the two statements have in common besides a changed value: their shared content
    words (Chinese character pairs) and the values both state."""
    same = {v.norm for v in vn} & {v.norm for v in vo}
    return len(_keys(new, vn) & _keys(old, vo)) + len(same)


def _keys(text: str, found: list[Value], offset: int = 0) -> set[str]:
    rest, at = [], 0
    for v in found:
        rest.append(text[at : v.start - offset])
        at = v.end - offset
    rest.append(text[at:])
    return content_keys(_POSSESSIVE.sub("", " ".join(rest)), [])


_POSSESSIVE = re.compile(r"['’]s\b")


def _subject(text: str, v: Value) -> bool:
    """Whether ``v`` opens its statement (it is what the statement is about)."""
    return not re.findall(r"[\w'’]+", text[: v.start])


# ---------------------------------------------------------------- who says "I"

_I_EN = (
    (re.compile(r"\bI(?:'m|’m| am)\b"), "{s} is"),
    (re.compile(r"\bI(?:'ll|’ll| will)\b"), "{s} will"),
    (re.compile(r"\bI(?:'ve|’ve| have)\b"), "{s} has"),
    (re.compile(r"\bI\b"), "{s}"),
    (re.compile(r"\b[Mm]y\b"), "{s}'s"),
)


def said_by(text: str, speaker: str | None) -> str:
    """A chat turn with its speaker's "I" (我) replaced by the speaker's name: "I'm looking
    after the handbook now" said by Lena gives the value Lena."""
    if not speaker or not speaker.strip():
        return text
    name = speaker.strip()
    if is_zh(text):
        return re.sub(r"我(?!们)", name, text)
    for pattern, repl in _I_EN:
        text = pattern.sub(repl.format(s=name), text)
    return text


# ---------------------------------------------------------------- what a question asks for

# Question words and the families of value that answer them (English, Chinese).
_ASKED: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), frozenset(kinds.split()))
    for pattern, kinds in (
        (r"\bwhen\b|what (?:time|date|day)|which (?:day|date)|how soon|\bdeadline|\bdue\b|"
         r"什么时候|哪天|哪一天|几号|几点|周几|星期几|礼拜几|日期|时间|截止|何时", "when"),
        (r"\bwho\b|\bwhom\b|\bwhose\b|谁", "name"),
        # 哪 + a measure word asks for one of a kind of thing: its name or label (哪家快递,
        # 哪个会议室). (English "which" alone: LoCoMo's tune half loses 1.1 points of
        # open-domain evidence recall @200 with it, locomo_replay at 0038e6b.)
        (r"哪(?:家|个|位|种|款|台|间|趟|班|次)", "name code"),
        (r"\bwhere\b|哪儿|哪里|在哪|哪个城市|哪个机房|哪台|地点|"
         r"\bwhich (?:host|server|machine|region|cluster|database|db|instance|node|city|office|"
         r"room|venue|ward|floor|building|gate|platform|terminal|desk|seat|bay|pitch|court|"
         r"classroom|hall|branch|site|campus)\b", "name code"),
        (r"\b(?:password|passcode|pin|(?:door|gate|alarm|access|entry|lock|key ?safe) code)\b|"
         r"密码|口令|门禁码|开门码", "code"),
        # (a kind of thing in front of the noun: "which CI system", "which payroll provider")
        (r"\b(?:which|what) (?:[\w-]+ ){0,2}?(?:tool|service|provider|vendor|supplier|platform|"
         r"app|library|framework|product|channel|system|stack|broker|queue|database engine|"
         r"software|ci|crm|erp|courier|carrier|insurer)\b|哪个(?:工具|服务|平台|渠道|"
         r"供应商|系统)|用什么|通过什么", "name code version"),
        (r"how (?:long|often)|多久|多长时间", "amount:duration count"),
        (r"how (?:many|much)|\bprice\b|\bcost|\bcharge|\bbudget|\bfee\b|多少|"
         r"几(?:台|个|人|位|桌|间|张|套|辆|只|件|份|箱|盒|瓶|双|本|场|家|条|名)|价格|费用|预算", "amount:money amount:percent amount:duration amount:size "
         r"amount:length amount:mass amount:rate count"),
        (r"\bversion\b|\brelease\b|版本", "version code id"),
        (r"\b(?:phone|mobile|telephone|cell)\b|what number|电话|手机|号码|联系方式", "phone"),
        (r"where (?:do|does|are|is) (?:we|they|things|it) (?:stand|with|at)\b|\bstatus\b|"
         r"\bstate\b|progress|进展|进度|状态", "status"),
    )
)  # fmt: skip
_ADDITIVE = re.compile(
    r"\b(?:also|too|as well|another|additionally|in addition)\b|另外|同时|还有|也"
    # one who helps with a thing works beside its owner, not in their place
    r"|\b(?:help(?:s|ing)?|assist(?:s|ing)?)\s+(?:(?:me|us|him|her|them)\s+)?(?:with|out)\b|协助|帮忙",
    re.IGNORECASE,
)


def any_kind() -> frozenset[str]:
    """Every family of value a question may ask for (what a question naming none may get)."""
    return frozenset().union(*(kinds for _, kinds in _ASKED))


def asked_kinds(query: str) -> frozenset[str]:
    """The families of value that answer ``query`` ("When …?": dates and times; "Who …?":
    names; "How many …?": counts and amounts …); empty for a question without such a word
    ("What does she do …?": any statement may answer it)."""
    return frozenset().union(*(kinds for pattern, kinds in _ASKED if pattern.search(query)))


def _families(found: list[Value], kinds: frozenset[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for v in found:
        if v.family in kinds:
            out.setdefault(v.family, set()).add(v.norm)
    return out


@dataclass(frozen=True)
class Answers:
    """Two answers to one question that differ: how much the words in front of their values
    agree (0 to 1: what they are the value of) and whether the newer says it changed."""

    head: float
    cued: bool
    # cued only by agreeing to the value ("Monday 20 October is fine"): the newer answers the
    # question only if the older is its best answer
    agreed: bool = False


@lru_cache(maxsize=4096)
def asserted(text: str) -> str:
    """The sentences of ``text`` that state something: a question or a hedge ("maybe", "if",
    "?") holds back its own sentence, not the turn it is in ("Have you tried any lately? I've
    tried four so far." states four); so does one after a dash or a semicolon."""
    clauses = (c for s in split_sentences(text) for c in _CLAUSE_BREAK.split(s))
    return " ".join(c.strip() for c in clauses if c.strip() and not unsure(c))


# Where a sentence turns to another thought: "... for 6 months now - speaking of which, do you
# have any tips?" (a dash or a semicolon between words).
_CLAUSE_BREAK = re.compile(r"\s[-–—]\s|;\s|；")


_WHO = re.compile(r"\bwho(?:m|se)?\b|谁", re.IGNORECASE)


def asks_who(query: str) -> bool:
    """Whether ``query`` asks for a person ("Who owns …?", "谁负责…？")."""
    return bool(_WHO.search(query))


def answers_differ(
    new: str,
    old: str,
    kinds: frozenset[str],
    asked: frozenset[str] = frozenset(),
    who: bool = False,
) -> Answers | None:
    """Whether ``new`` and ``old``, two statements that answer one question (the search found
    both near it), give different values of the kinds it asks for: ``new`` states one that
    ``old`` does not, about the same thing (no other name, id or code of theirs disagrees, no
    word in front of a shared one swapped), and ``new`` neither adds to ``old`` ("also") nor
    only wonders ("maybe", "?": read per sentence, :func:`asserted`); None when they do not
    differ so. ``asked``: the values the question names itself (normalised): what it asks
    about, not an answer ("Which version fixes BUG-2207?": BUG-2207 answers nothing). ``who``:
    the question asks for a person (:func:`asks_who`): a product answers nothing
    ("Stripewell's fee for EU cards")."""
    new, old = asserted(new), asserted(old)
    if not new or not old or is_zh(new) != is_zh(old):
        return None
    if _ADDITIVE.search(new) and not _CUE_ZH.search(new) and not _CUE_EN.search(new):
        return None
    zh = is_zh(new)
    vn, vo = values(new), values(old)
    an = _families([v for v in vn if v.norm not in asked], kinds)
    ao = _families([v for v in vo if v.norm not in asked], kinds)
    if not an or not ao:
        return None
    came = [
        v
        for v in vn
        # another value of a kind the older gives too: a version does not answer an id
        if v.family in an and v.family in ao and v.norm not in asked
        and v.norm not in ao[v.family] and not _departed(new, v)
        # a time of day answers no date ("起跑提前到6点半" of "比赛日期：10月18日")
        and (v.family != "when" or any(o.kind == v.kind for o in vo if o.norm in ao["when"]))
        and not (who and v.kind == "name:product")
    ]  # fmt: skip
    slotted = [
        v
        for v in came
        # where a value is stated, or where the older statement had its value of that kind
        if (
            _in_slot(new, v, zh)
            or any(_in_slot(new, v, zh, old, o) for o in vo if o.family == v.family)
            or _same_count(new, v, old, vo)
        )
        # a new subject is another thing, unless the old statement opens with its value too
        and (
            zh
            or not _subject(new, v)
            or any(_subject(old, o) for o in vo if o.family == v.family)
            # asked who, a person the statement is about answers ("Mrs Ash took the class")
            or (who and v.kind == "name:person")
        )
    ]
    if not slotted:
        return None  # no new value stated: "Wojtek's patch did it" names no new owner
    # A value stated of something comes before the something itself ("Analytics DB moved to
    # db-an-07": the host changed, the subject says whose).
    w = min(slotted, key=lambda v: (not zh and _subject(new, v), v.start))
    olds = [v for v in vo if v.family == w.family] or vo
    # Names, ids and codes in front of the values say whose values they are.
    front_new = {v.norm for v in vn if v.end <= w.start and v.family in ("name", "id", "code")}
    front_old = {
        v.norm
        for v in vo
        if v.family in ("name", "id", "code") and v.family != w.family
        and any(v.end <= o.start for o in olds)
    }  # fmt: skip
    front_new = {n for n in front_new if n not in {v.norm for v in vn if v.family == w.family}}
    if front_new and front_old and not _names_meet(front_new, front_old):
        return None  # another subject: "Tomas flies …" against "Aisha flies …"
    if substituted(new, old, [v.text for v in vn], [v.text for v in vo], modifier_only=True):
        return None
    head = max(_head(old, o, vo, new, w, vn) for o in olds)
    if _same_count(new, w, old, vo) or any(_same_form(w, o) for o in olds):
        # a count is the count of the thing after it: "4 trainees" -> "2 trainees"; a label
        # of one form names one of the same things: "3号会议室" -> "5号会议室"
        head = 1.0
    named_apart = (  # a thing, not a time: times are restated without their subject
        zh
        and w.family != "when"
        # "最后定了去婺源": the decision, whatever is named in front of it
        and not _DECIDED_ZH.search(new[max(0, w.start - 2 * CUE_REACH) : w.start])
        and not any(_same_product(w, o) or _same_form(w, o) for o in olds)
        and head == 0
        and not _PRONOUN_ZH.search(new[: w.start])
        # ("我换号了，新号 139…": the new one of what the older gave, not another thing)
        and not _NEW_OF_ZH.search(new[: w.start])
        and all(_before(old, o, vo) for o in olds)
        # ("约了蒙晓舟医生": the title after the name is the older's field, "医生:林青禾")
        and not any(new.startswith(label, w.end) for o in olds for label in _before(old, o, vo))
        and (front := _before(new, w, vn))
        # ... and named nowhere in the older ("申请服务器 8台 … 用于数据平台扩容")
        and len(front & content_keys(old, [])) < 2
    )
    if named_apart:
        return None  # "预发布环境的缓存：…" against "报表库迁到 …": another thing named in front
    # "Monday 20 October is fine": another value agreed to, in place of one of the same form
    cued = any(_cued(new, v, zh) for v in slotted)
    agreed = not zh and not cued and any(_AGREED.match(new, v.end) for v in slotted)
    return Answers(head, cued or agreed, agreed)


# A value agreed to: what was proposed instead of the older one (said right after the value).
_AGREED = re.compile(
    r"\s*(?:(?:is|are|'s)\s+(?:fine|ok|okay|good|great|perfect)|works|suits)\b", re.IGNORECASE
)


_NEW_OF_ZH = re.compile(r"新的?(?:号码?|电话|手机|地址|邮箱)|换号|换了号")
_PRONOUN_ZH = re.compile(r"[他她它]们?|这个|那个|这边|那边")
_DECIDED_ZH = re.compile(r"最后定|最终定|决定|定了")


def _shape(text: str) -> str:
    return re.sub(r"[^\W\d_]+", "a", re.sub(r"\d+", "#", text.lower()))


# A form's field naming a place ("Venue:", "场地：") and a question asking where.
_PLACE_LABEL = re.compile(
    r"(?:^|(?<=[\s,，;；。|]))(?:venue|location|place|address|地点|场地|地址|会场|举办地)\s*[:：]\s*",
    re.IGNORECASE,
)
_ASKS_WHERE = re.compile(r"\bwhere\b|哪儿|哪里|在哪|什么地方", re.IGNORECASE)


def labelled_place(new: str, old: str, query: str) -> bool:
    """Whether ``new`` fills a field naming a place ("场地：云栖会展中心", "Venue: the Old
    Forge") with a name that ``old``, which names another, never gives, for a question asking
    where: the place asked for, whatever the older said it in front of it."""
    if not _ASKS_WHERE.search(query) or is_zh(new) != is_zh(old):
        return False
    named_old = {v.norm for v in values(old) if v.family == "name"}
    if not named_old:
        return False
    found = values(new)
    for m in _PLACE_LABEL.finditer(new):
        at = m.end() + (4 if new[m.end() : m.end() + 4].lower() == "the " else 0)
        v = next((v for v in found if v.start == at), None)
        if v is not None and v.family == "name" and v.norm not in named_old:
            return not any(n in v.norm or v.norm in n for n in named_old)
    return False


def told_over(
    new: str, old: str, kinds: frozenset[str], asked: frozenset[str] = frozenset()
) -> bool:
    """Whether ``new`` tells a change of ``old``'s value with both values: it names a value of a
    kind asked for that ``old`` gives (a number of some kind: a count, an amount, a time, a
    phone number, a room), and one other value of that kind or form that ``old``
    never gives ("a table for 12 instead of the table for 9"; "以后打 158 …，原来 139 … 就停了";
    "sync in 2.07 from today, 4.12 went to the design crit"). Only two values of that kind
    (a quote listing three prices restates items, it changes none); a question or a hedge
    ("still on the 12th? it might slide to the 19th") states nothing."""
    new, old = asserted(new), asserted(old)
    if not new or not old or not kinds:
        return False
    vn, vo = values(new), values(old)
    said = {v.norm for v in vo}
    for o in vo:
        if o.family not in kinds or o.norm in asked or not re.search(r"\d", o.text):
            continue  # (names: "iOS push works now that the Apple account …" changes nobody)
        named = [v for v in vn if v.norm == o.norm or v.text == o.text or _bare_version(v, o)]
        alike = [v for v in vn if v.kind == o.kind or _shape(v.text) == _shape(o.text)]
        if not named or len(alike) != 2:
            continue
        bare = any(_bare_version(v, o) for v in named)  # the other must be bare too
        if any(
            v.norm not in said and v.norm not in asked and v not in named
            and not (bare and " " in v.norm)
            for v in alike
        ):  # fmt: skip
            return True
    return False


def _bare_version(v: Value, o: Value) -> bool:
    """``v`` is ``o``'s version number said without its product ("v3.4.1" of "Yinpay SDK
    v3.4.1")."""
    return v.kind == o.kind == "version" and o.norm.endswith(" " + v.norm)


def _same_form(a: Value, b: Value) -> bool:
    """Two labels of one form ("3号" / "5号", "4B" / "4D"): numbered things of one kind."""

    def form(v: Value) -> str:
        return re.sub(r"\d+", "#", re.sub(r"[a-z]", "a", v.norm))

    return a.kind == b.kind == "code" and form(a) == form(b)


def _names_meet(a: set[str], b: set[str]) -> bool:
    """Two sets of names share one, whole or as a word of a longer form ("the Trust" / "Heathland
    Trust": one subject named short)."""
    if a & b:
        return True

    def words(names: set[str]) -> set[str]:  # "Dr Varga's practice": Varga
        return {_POSSESSIVE.sub("", w) for n in names for w in n.split() if len(w) > 2}

    return bool(words(a) & words(b))


def _same_count(new: str, v: Value, old: str, vo: list[Value]) -> bool:
    """``v`` counts what a count of ``old`` counts ("keeps 2 trainees" against "4 trainees";
    "covers 40 seats" against "25 seats": a number of things named by the same word)."""
    if v.family == "amount:rate":
        return any(o.family == v.family and _unit(o) == _unit(v) for o in vo)
    return v.family == "count" and any(
        _counted(new, v) & _counted(old, o) for o in vo if o.family == "count"
    )


def _unit(v: Value) -> str:
    """The word a number is a number of ("40 seats": "seats")."""
    return re.sub(r"[\d.,\s]+", "", v.text.lower())


def _same_product(a: Value, b: Value) -> bool:
    """Two versions of one named product ("Node 18", "Node 20.14")."""
    pa, pb = a.norm.rsplit(" ", 1), b.norm.rsplit(" ", 1)
    return a.kind == b.kind == "version" and len(pa) == len(pb) == 2 and pa[0] == pb[0]


__all__ = [
    "CUE_REACH",
    "Answers",
    "Difference",
    "aligned_change",
    "answers_differ",
    "asked_kinds",
    "asks_who",
    "asserted",
    "cued",
    "difference",
    "event",
    "labelled_place",
    "said_by",
    "stated",
    "told_over",
    "unsure",
]
