"""Pure: the values a statement gives, typed, in English and Chinese (issue 26).

A statement of a fact names a thing and gives it a value: a date ("the release is on 29
November"), a time of day, an amount with its unit ("€1,350 a month", "40 ms"), a count of
something ("nine engineers", "十个人"), a version ("PostgreSQL 16", "v2.3"), a status ("in
beta", "shipped", "已上线"), or a name (a person, a place, a product or technology: "Priya",
"Porto", "Postgres LISTEN/NOTIFY"). :func:`values` finds them with their kind, a normalised
value (two wordings of one date compare equal) and where they stand in the text;
:func:`masked` is the statement with each value replaced by its kind: what is said of what,
whatever the value (:mod:`memflow.text.conflict` compares those).

Kinds are found from the form of the value and the words next to it, never from a list of
particular subjects; a name's subkind (person, place, product) only when its neighbours say so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

from memflow.text.timeparse import parse_time
from memflow.text.values_zh import zh_names

_CJK = re.compile(r"[\u3400-\u9fff]")
# What parse_time may call a value: calendar times, not "next week" or "recently".
_DATE_KINDS = frozenset({"date", "month", "quarter", "range"})
_NOW = datetime(2024, 7, 1, tzinfo=UTC)  # year-less dates: compared by month and day anyway

_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "hundred": 100, "dozen": 12,
}  # fmt: skip
_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}  # fmt: skip
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}

# Units, by family: two amounts compare only within one family.
_UNIT_FAMILY = {
    **dict.fromkeys("$ usd dollar dollars € eur euro euros £ gbp pound pounds ¥ rmb yuan cny "
                    "元 块 块钱 美元 欧元 英镑 人民币 万元 万美元 万 k".split(), "money"),
    **dict.fromkeys("% percent per cent 百分之 ％".split(), "percent"),
    **dict.fromkeys("ms millisecond milliseconds s sec secs second seconds min mins minute "
                    "minutes h hr hrs hour hours day days week weeks month months year years "
                    "毫秒 秒 分钟 小时 天 周 星期 个月 月 年".split(), "duration"),
    **dict.fromkeys("kb mb gb tb pb 字节 kib mib gib tib".split(), "size"),
    **dict.fromkeys("mm cm m km mile miles 米 公里 千米".split(), "length"),
    **dict.fromkeys("g kg lb lbs 克 公斤 斤 千克".split(), "mass"),
    **dict.fromkeys("rps qps rpm requests users seats licenses 次".split(), "rate"),
}  # fmt: skip
_STATUS = {
    # English
    "planned": "planned", "scheduled": "planned", "proposed": "planned", "draft": "planned",
    "approved": "approved", "rejected": "rejected", "declined": "rejected",
    "in progress": "in progress", "ongoing": "in progress", "underway": "in progress",
    "under way": "in progress", "in development": "in progress", "in review": "in review",
    "blocked": "blocked", "on hold": "paused", "paused": "paused", "frozen": "paused",
    "done": "done", "finished": "done", "completed": "done", "complete": "done",
    "shipped": "released", "released": "released", "launched": "released", "live": "released",
    "deployed": "released", "rolled out": "released", "generally available": "released",
    "ga": "released", "in beta": "beta", "beta": "beta", "in alpha": "alpha", "alpha": "alpha",
    "deprecated": "retired", "retired": "retired", "decommissioned": "retired",
    "sunset": "retired", "cancelled": "cancelled", "canceled": "cancelled",
    "scrapped": "cancelled", "open": "open", "closed": "closed", "resolved": "closed",
    "fixed": "closed", "merged": "merged", "pending": "pending", "enabled": "on",
    "disabled": "off", "at risk": "at risk", "delayed": "delayed", "awaiting": "pending",
    "waiting for": "pending",
    # Chinese
    "signed": "signed", "countersigned": "signed", "under review": "in review",
    "legal review": "in review", "in legal review": "in review", "in negotiation": "in review",
    "awaiting signature": "in review", "on track": "on track", "green": "on track",
    "red": "at risk", "shelved": "paused", "postponed": "delayed",
    "计划中": "planned", "规划中": "planned", "待定": "pending", "进行中": "in progress",
    "开发中": "in progress", "测试中": "in review", "评审中": "in review", "已完成": "done",
    "完成了": "done", "已上线": "released", "上线了": "released", "已发布": "released",
    "发布了": "released", "已暂停": "paused", "暂停": "paused", "已取消": "cancelled",
    "取消了": "cancelled", "阻塞": "blocked", "卡住了": "blocked", "已通过": "approved",
    "通过了": "approved", "被驳回": "rejected", "已关闭": "closed", "已解决": "closed",
    "已修复": "closed", "已合并": "merged", "已下线": "retired", "下线了": "retired",
    "已弃用": "retired", "内测": "beta", "公测": "beta", "已启用": "on", "已停用": "off",
    "已签": "signed", "签了": "signed", "已签署": "signed", "法务审核": "in review", "审核中": "in review",
}  # fmt: skip
_STATUS_EN = re.compile(
    r"\b(?:" + "|".join(sorted((re.escape(k) for k in _STATUS if not _CJK.search(k)),
                               key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)  # fmt: skip
# (改签: a ticket rebooked, not a contract signed)
_STATUS_ZH = re.compile(
    "(?<!改)(?:"
    + "|".join(sorted((re.escape(k) for k in _STATUS if _CJK.search(k)), key=len, reverse=True))
    + ")"
)

# (a comma groups thousands only before three digits: "300×600,35元/片" is two numbers)
_NUM = r"\d+(?:,\d{3}(?!\d))*(?:\.\d+)*"
# A number word is a whole word ("ones" is not "one" and a unit "s").
_EN_NUMBER = r"(?:" + _NUM + r"|(?:" + "|".join(_NUMBER_WORDS) + r")\b)"
_AMOUNT_EN = re.compile(
    r"(?P<pre>[$€£¥])\s?(?P<n>" + _NUM + r")(?P<k>\s?k\b)?"
    r"|\b(?P<n2>" + _EN_NUMBER + r")\s?(?P<u>%|[a-zA-Z]+\b|[€$£])"
    # one describing word before a plural: "four different ones", "12 new users"
    r"(?:\s(?P<u2>[a-zA-Z]{3,}s)\b)?",
    re.IGNORECASE,
)
_AMOUNT_ZH = re.compile(
    r"(?P<n>"
    + _NUM
    + r"|[零一二两三四五六七八九十百千万]+)\s*(?P<u>万元|万美元|个月|个人|块钱|美元|欧元|英镑|人民币|毫秒|"
    r"分钟|小时|公里|千米|公斤|千克|[元块万秒天周年月米克斤次%％]|个|位|名|人|台|家|条|款|"
    # more measure words of things counted ("12桌", "两间", "三套")
    r"桌|间|张|套|辆|只|件|份|箱|盒|瓶|双|本|场)"
)
_THOUSANDS_ZH = re.compile(r"(?<![0-9A-Za-z.])(?P<n>\d+(?:\.\d+)?)\s?[kK](?![A-Za-z0-9])")
_MONEY_SIGN = re.compile(r"[$€£¥￥]\s?(?P<n>" + _NUM + r")(?P<u>\s*[元块万])?")
_VERSION = re.compile(
    r"\b(?P<name>[A-Z][\w.+#-]*(?:\s[A-Z][\w+#-]*)?)\s(?:[vV](?:ersion)?\s?)?(?P<v>\d+(?:\.\d+)*)\b"
    r"|\b(?:[vV]|[vV]ersion\s)(?P<v2>\d+(?:\.\d+)+|\d+)\b"
)
_CLOCK = re.compile(
    # (not after a time's own colon, "12:30:45"; after a label's, "时间:11:30", it may stand)
    r"(?<![\d.])(?<!\d:)(?P<h>\d{1,2})(?:[:.](?P<m>\d{2}))?\s?(?P<ap>[ap]\.?m\.?)(?![a-z])|"
    r"(?<![\d.])(?<!\d:)(?P<h2>\d{1,2}):(?P<m2>\d{2})(?![\d:])|"
    r"(?:上午|下午|早上|晚上)?(?P<h3>[零一二两三四五六七八九十\d]{1,3})点(?:(?P<m3>\d{1,2}|半)分?)?",
    re.IGNORECASE,
)
# A name in English: capitalised words (with their inner capitals, digits, slashes), or a word
# with capitals inside it ("iOS", "macOS"); a run of them is one name ("Postgres LISTEN/NOTIFY").
_NAME_TOKEN = r"(?:[A-Z]|[a-z]+[A-Z])(?:[\w'’+#/-]|\.(?=\w))*"
_NAME_EN = re.compile(
    r"\b" + _NAME_TOKEN + r"(?:[ \t]+(?:of[ \t]+|de[ \t]+)?" + _NAME_TOKEN + r")*"
)
# Capitalised words that are not names at the start of a sentence (or anywhere).
_NOT_NAMES = frozenset(
    """a an the and or but so if then this that these those it its we our us i my me you your he
    she his her they their them there here what which who when where why how all any some no not
    yes next last new old first second final team today tomorrow yesterday now also just please
    thanks thank hi hello hey dear update note notes decision decisions action actions todo fyi
    re fwd monday tuesday wednesday thursday friday saturday sunday january february march april
    may june july august september october november december morning afternoon evening""".split()
)
# The labels of a form's or a ticket's fields: "Deadline: 30 June" labels a value, it names
# nobody ("Ben: …" does).
_FIELD_LABELS = frozenset(
    """summary details description status deadline due owner assignee requester reporter
    resolution result outcome target priority severity title subject date time when where venue
    location address created opened closed updated logged notes note next step steps cost price
    total amount budget agenda attendees present apologies action actions decision decisions
    contact phone email ref reference type category plan scope goal goals issue problem
    cause fix workaround impact risk risks timeline schedule""".split()
)
_WEEKDAYS = re.compile(r"(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)days", re.IGNORECASE)
_PERSON_AFTER = re.compile(
    r"^\s*(?:owns|leads|manages|handles|runs|reviews|took over|takes over|is taking over|will own|"
    r"will lead|will take|is responsible|is in charge|is the (?:new )?(?:owner|lead|manager|"
    r"contact|pm|dri)|has taken over|now owns|now leads|will handle|is on call|said|says|"
    r"thinks)\b",
    re.IGNORECASE,
)
_PERSON_BEFORE = re.compile(
    r"(?:\b(?:owner|lead|manager|contact|assignee|reviewer|dri|pm|on-call)\s*(?:is|:|=)|"
    r"\b(?:assigned to|handed (?:over )?to|owned by|led by|run by|reviewed by|managed by|"
    r"taken over by|hand(?:ing)? it to|ask|asked|with|by)\s*)$",
    re.IGNORECASE,
)
_PLACE_BEFORE = re.compile(
    r"\b(?:in|at|near|to|from)\s+(?:the\s+)?$|\b(?:office|city|located|based|lives|live|living|"
    r"moved|relocated|held|venue|hosted)\b[^.,;]{0,12}$",
    re.IGNORECASE,
)
_PRODUCT_BEFORE = re.compile(
    r"\b(?:use|uses|using|used|run|runs|running|on|via|adopt|adopted|switch(?:ed)? to|"
    r"migrat(?:e|ed|ing) to|move(?:d)? to|replac(?:e|ed) (?:it )?with|built (?:on|with)|"
    r"hosted on|deploy(?:ed)? (?:on|to)|store[sd]? (?:in|on)|backed by|powered by)\s+$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Value:
    """One value of a statement: its kind ("date", "weekday", "clock", "amount:money", "count", "version",
    "status", "name", "name:person", "name:place", "name:product"), a normalised form two
    wordings share, the text as written and where it is."""

    kind: str
    norm: str
    text: str
    start: int
    end: int

    @property
    def family(self) -> str:
        """What compares with what: a name of any subkind with a name, a date or a time of day
        with either ("when"), an amount within its unit's family, the others within their kind."""
        if self.kind.startswith("name"):
            return "name"
        return "when" if self.kind in ("date", "clock", "weekday") else self.kind


def is_zh(text: str) -> bool:
    return bool(_CJK.search(text))


def _zh_number(raw: str) -> float | None:
    if raw[0].isdigit():
        return None
    total, current = 0, 0
    for ch in raw:
        if ch in _ZH_DIGITS:
            current = _ZH_DIGITS[ch]
        elif ch in _ZH_UNITS:
            total += (current or 1) * _ZH_UNITS[ch]
            current = 0
        else:
            return None
    return float(total + current)


def number(raw: str) -> float | None:
    """A number written in digits ("1,350", "2.5"), in English words or in Chinese."""
    low = raw.strip().lower()
    if low in _NUMBER_WORDS:
        return float(_NUMBER_WORDS[low])
    if low and low[0].isdigit():
        try:
            return float(low.replace(",", ""))
        except ValueError:
            return None
    return _zh_number(raw) if raw else None


def _fmt(n: float) -> str:
    return str(int(n)) if n == int(n) else f"{n:g}"


class _Found:
    def __init__(self, text: str) -> None:
        self.text = text
        self.out: list[Value] = []
        self.taken: list[tuple[int, int]] = []

    def free(self, start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in self.taken)

    def add(self, kind: str, norm: str, start: int, end: int) -> None:
        if start < end and self.free(start, end):
            self.out.append(Value(kind, norm, self.text[start:end], start, end))
            self.taken.append((start, end))


# "from 15 November to 29 November" is two values, not one span: the connector is hidden (same
# length, so positions stay) before the dates are read.
_RANGE_WORD = re.compile(r"(?<=\s)(?:to|until|through|till)(?=\s)|[到至~～–—]", re.IGNORECASE)


def _dates(f: _Found, text: str) -> None:
    apart = _RANGE_WORD.sub(lambda m: ";" * len(m.group(0)), text)
    for t in parse_time(apart, _NOW):
        if t.kind not in _DATE_KINDS or t.confidence < 0.8:
            continue
        start, end = t.pos
        norm = f"{t.start.month:02d}-{t.start.day:02d}/{t.end.month:02d}-{t.end.day:02d}"
        f.add("date", norm, start, end)


# A day of the month without its month: "Thu 14th", "Friday the 15th", "the 18th", "29日".
_ORDINAL_DAY = re.compile(
    r"\b(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+)?the\s+(?P<d>\d{1,2})(?:st|nd|rd|th)\b|"
    r"\b(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?\s+(?P<d2>\d{1,2})(?:st|nd|rd|th)?\b|"
    # "3号", "每月20号", "25号之前" (a day: what may follow one); not "12月3号" (a date)
    r"(?<!\d)(?<!\d月)(?P<d3>\d{1,2})[日号](?!\w|\s*[\u3400-\u9fff])|"
    r"(?<!\d)(?<!\d月)(?P<d4>\d{1,2})[日号](?=之前|以前|前|为止|截止|左右|前后|起|以后|后|开始)",
    re.IGNORECASE,
)
# A ticket or issue id ("PAY-1893", "BUG-2207"), a bare version ("3.4.2", "16.2") and a code
# written in lower case with a digit ("eu-west-1", "db-stg-02").
_ID = re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d{1,6}\b")
_BARE_VERSION = re.compile(r"(?<![\w./])\d{1,4}\.\d{1,4}(?:\.\d{1,4})?(?![\w%/]|[.:]\d)")
_CODE = re.compile(r"(?<![\w-])[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+(?![\w-])")


# A telephone number: digits in groups ("139 1702 4486", "+44 20 7946 0958", "0161-496-0000")
# or a Chinese mobile number written whole ("13917024486"); 8 to 15 digits either way.
_PHONE = re.compile(
    r"(?<![\w.,+/-])(?<!\d:)(?:\+\d{1,3}[\s-]?)?(?:\(\d{2,4}\)\s?)?\d{2,5}(?:[\s-]\d{2,6}){1,4}(?![\w:/%-]|[.,]\d)"
    r"|(?<!\d)1[3-9]\d{9}(?!\d)"
)


_YEARISH = re.compile(r"(?:19|20)\d\d")
_PHONE_CUE = re.compile(
    r"\b(?:phone|tel|telephone|mobile|cell|call|ring|text|number|whatsapp|reach|contact|fax)\b|"
    r"电话|手机|号码|打|拨|联系|微信",
    re.IGNORECASE,
)


def _phones(f: _Found, text: str) -> None:
    for m in _PHONE.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        grouped = m.group(0)[0] == "+" or len(m.group(0)) > len(digits)
        if all(_YEARISH.fullmatch(g) for g in re.split(r"[\s-]+", m.group(0))):
            continue  # "the 2019 2020 2021 seasons"
        # a Chinese mobile ("139…") or a British one ("07700 900 123"): 11 digits of that shape
        mobile = len(digits) == 11 and (
            (digits[0] == "1" and digits[1] in "3456789") or digits.startswith("07")
        )
        if not (
            mobile
            or m.group(0)[0] == "+"
            or _PHONE_CUE.search(text[max(0, m.start() - 30) : m.start()])
        ):
            continue  # "ids 1234 5678": digits in groups, no telephone named
        if 8 <= len(digits) <= 15 and (grouped or len(digits) == 11):
            f.add("phone", digits, m.start(), m.end())


# A weekday that comes back ("every Tuesday", "on Fridays", "每周二"): the day of a routine.
_WEEKLY_EN = re.compile(
    r"\b(?:(?:every|each)\s+(?P<d>mon|tues|wednes|thurs|fri|satur|sun)day|"
    r"(?P<p>mon|tues|wednes|thurs|fri|satur|sun)days)\b",
    re.IGNORECASE,
)
# ... or every other week ("on Monday, every other week", "every other Friday", "fortnightly on
# Tuesdays"): another routine than a weekly one.
_FORTNIGHTLY_EN = re.compile(
    r"\b(?:(?P<d>mon|tues|wednes|thurs|fri|satur|sun)days?,?\s+every\s+(?:other|second|two)\s+weeks?|"
    r"every\s+(?:other|second)\s+(?P<e>mon|tues|wednes|thurs|fri|satur|sun)day|"
    r"(?:fortnightly|biweekly)\s+on\s+(?:a\s+)?(?P<f>mon|tues|wednes|thurs|fri|satur|sun)days?)\b",
    re.IGNORECASE,
)
_WEEKLY_ZH = re.compile(r"每(?:个)?(?:周|星期|礼拜)(?P<d>[一二三四五六日天])")
_WEEKDAY_ZH = {"一": "mon", "二": "tues", "三": "wednes", "四": "thurs", "五": "fri", "六": "satur"}


def _weekly(f: _Found, text: str, zh: bool) -> None:
    if zh:
        for m in _WEEKLY_ZH.finditer(text):
            f.add("weekday", f"weekly {_WEEKDAY_ZH.get(m.group('d'), 'sun')}", m.start(), m.end())
        return
    for m in _FORTNIGHTLY_EN.finditer(text):
        day = (m.group("d") or m.group("e") or m.group("f")).lower()
        f.add("weekday", f"fortnightly {day}", m.start(), m.end())
    for m in _WEEKLY_EN.finditer(text):
        day = (m.group("d") or m.group("p")).lower()
        f.add("weekday", f"weekly {day}", m.start(), m.end())


def _days(f: _Found, text: str) -> None:
    for m in _ORDINAL_DAY.finditer(text):
        day = next(
            g for g in (m.group("d"), m.group("d2"), m.group("d3"), m.group("d4")) if g is not None
        )
        if 1 <= int(day) <= 31:
            f.add("date", f"day {int(day)}", m.start(), m.end())


# A code given after what it opens ("仓库门禁密码：5183#", "the gate code is 3391"): a code, not a count.
_SECRET = re.compile(
    r"(?:\b(?:password|passcode|pin|(?:door|gate|alarm|access|entry|lock|key ?safe) code)\b"
    r"(?:\s+(?:is|was|now))*|密码|口令|门禁码|开门码)\s*[:：=]?\s*(?:是|为|改成|改为)?\s*"
    r"(?P<code>\d{3,8})(?!\d)#?",
    re.IGNORECASE,
)


def _ids(f: _Found, text: str) -> None:
    for m in _SECRET.finditer(text):
        f.add("code", m.group("code"), m.start("code"), m.end())
    for m in _ID.finditer(text):
        f.add("id", m.group(0).lower(), m.start(), m.end())
    for m in _CODE.finditer(text):
        if any(ch.isdigit() for ch in m.group(0)):
            f.add("code", m.group(0), m.start(), m.end())


# A numbered thing's label: "room 4B", "gate A12", "6F-12", "3号会议室" (a number naming which one,
# not counting: a count's measure word is not 号).
_LABEL_EN = re.compile(
    r"(?<![\w.-])(?:\d{1,3}[A-Z]{1,2}|[A-Z]{1,2}\d{1,3})(?:-\d{1,4})?(?![\w-]|\.\w)"
)
_LABEL_ZH = re.compile(
    r"(?<![\d月])\d{1,4}\s*号(?=[\u3400-\u9fff])"
    # a room by its floor and number ("9楼0921", "3层305"), or by its number ("1203室")
    r"|(?<![\d.])\d{1,3}\s*[楼层]\s*[A-Za-z]?\d{2,4}(?![\d.])|(?<![\d.])[A-Za-z]?\d{2,4}(?=室)"
)
# ... and any number a numbered place's noun names: "room 4.12", "gate 7", "platform 3"
_LABEL_AFTER = re.compile(
    r"\b(?:room|rm|gate|platform|desk|bay|pier|track|suite|unit)\s(?P<n>\d{1,4}(?:\.\d{1,3})?[A-Za-z]?)"
    r"(?![\w.,:-]|\.\w)",
    re.IGNORECASE,
)


def _labels(f: _Found, text: str, zh: bool) -> None:
    for m in (_LABEL_ZH if zh else _LABEL_EN).finditer(text):
        f.add("code", m.group(0).replace(" ", "").lower(), m.start(), m.end())


def _placed_labels(f: _Found, text: str) -> None:
    for m in _LABEL_AFTER.finditer(text):
        f.add("code", m.group("n").lower(), m.start("n"), m.end("n"))


def _bare_versions(f: _Found, text: str) -> None:
    for m in _BARE_VERSION.finditer(text):
        f.add("version", m.group(0), m.start(), m.end())


# A span of two times sharing one "am"/"pm": "7.30-9.30pm", "6-8 pm" (both said in the evening).
_CLOCK_SPAN = re.compile(
    r"(?<![\d:.])(?P<h>\d{1,2})(?:[:.](?P<m>\d{2}))?\s?[-–]\s?(?=\d{1,2}(?:[:.]\d{2})?\s?(?P<ap>[ap])\.?m\b)",
    re.IGNORECASE,
)


def _clocks(f: _Found, text: str) -> None:
    for m in _CLOCK_SPAN.finditer(text):
        h, mm = int(m.group("h")) % 12, int(m.group("m") or 0)
        h += 12 if m.group("ap").lower() == "p" else 0
        if mm < 60:
            end = m.end("m") if m.group("m") else m.end("h")
            f.add("clock", f"{h:02d}:{mm:02d}", m.start(), end)
    for m in _CLOCK.finditer(text):
        if m.group("h") is not None:
            h, mm = int(m.group("h")) % 12, int(m.group("m") or 0)
            h += 12 if m.group("ap").lower().startswith("p") else 0
        elif m.group("h2") is not None:
            h, mm = int(m.group("h2")), int(m.group("m2"))
        else:
            raw = m.group("h3")
            n = int(raw) if raw.isdigit() else _zh_number(raw)
            if n is None:
                continue
            h, mm = int(n), 30 if m.group("m3") == "半" else int(m.group("m3") or 0)
            if m.group(0).startswith(("下午", "晚上")) and h < 12:
                h += 12
        if h < 24 and mm < 60:
            f.add("clock", f"{h:02d}:{mm:02d}", m.start(), m.end())


# A time of day in words: "half past seven", "quarter to ten", "ten to six", "half eight"
# (British: half past), "nine o'clock", "noon".
_HOUR_WORD = r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d{1,2})"
_WORD_CLOCK = re.compile(
    rf"\b(?:(?P<part>half|quarter|five|ten|twenty|twenty-five|\d{{1,2}}(?= minutes))(?: minutes)? "
    rf"(?P<dir>past|to) (?P<h>{_HOUR_WORD})|half (?P<half>{_HOUR_WORD})(?! (?:an?|of|the)\b)"
    rf"|(?P<oc>{_HOUR_WORD}) o['’]clock|(?P<noon>noon|midday))\b"
    r"(?P<pm>\s+(?:pm|p\.m\.|in the (?:afternoon|evening)|at night|tonight))?",
    re.IGNORECASE,
)
_PARTS = {"half": 30, "quarter": 15, "twenty-five": 25}
# ("ten to six" is a time after "at", "by", …; "five to ten people" is a count)
_AT = re.compile(r"\b(?:at|by|until|till|around|about|before|after|gone)\s+$", re.IGNORECASE)


def _word_clocks(f: _Found, text: str) -> None:
    for m in _WORD_CLOCK.finditer(text):
        if m.group("noon"):
            h, mm = 12, 0
        else:
            word = m.group("h") or m.group("half") or m.group("oc")
            h = int(word) if word.isdigit() else _NUMBER_WORDS[word.lower()]
            mm = 30 if m.group("half") else 0
            if m.group("part"):
                part = m.group("part").lower()
                if part not in _PARTS and not _AT.search(text[max(0, m.start() - 8) : m.start()]):
                    continue
                n = _PARTS.get(part) or (int(part) if part.isdigit() else _NUMBER_WORDS[part])
                mm = n if m.group("dir").lower() == "past" else 60 - n
                h = h if m.group("dir").lower() == "past" else (h - 1) % 12 or 12
        if m.group("pm") and h < 12:
            h += 12
        if 0 < h < 24 and mm < 60:
            f.add("clock", f"{h:02d}:{mm:02d}", m.start(), m.end())


def _versions(f: _Found, text: str) -> None:
    for m in _VERSION.finditer(text):
        if m.group("v") is not None:
            words = m.group("name").split()
            while words and words[0].lower() in _NOT_NAMES:
                words.pop(0)  # "The API 2": the name is "API"
            if not words or _followed_by_unit(text, m.end()):
                continue
            start = m.start() + m.group(0).index(words[0])
            f.add("version", f"{' '.join(words).lower()} {m.group('v')}", start, m.end())
        else:
            f.add("version", m.group("v2"), m.start(), m.end())


def _followed_by_unit(text: str, at: int) -> bool:
    """Whether the number ending at ``at`` is an amount (a unit follows it)."""
    nxt = re.match(r"\s?([%a-zA-Z€$£]+)", text[at:])
    return nxt is not None and nxt.group(1).lower() in _UNIT_FAMILY


# A sum without its unit, named by what it pays, in its clause or just after ("押金 5200", "押金是
# 两个月的，10400"): money.
_MONEY_NOUN_ZH = re.compile(
    r"(?:押金|定金|订金|租金|月租|房租|房费|学费|工资|月薪|年薪|费用|价格|报价|总价|单价|预算|金额|"
    # a total said without its unit ("合计12800")
    r"一共|总共|合计|共计|总计|总额)"
    r"[^。；;\d]{0,8}?(?<![\d.])(?P<n>(?:\d{1,3}(?:,\d{3})+|\d{3,})(?:\.\d+)?)"
    r"(?![\d.%]|\s*[年月日号天个位万元块])"
)


def _amounts(f: _Found, text: str, zh: bool) -> None:
    if zh:
        for m in _MONEY_SIGN.finditer(text):  # "¥3,900/月": a sign in front, no unit after
            n = number(m.group("n"))
            if n is not None and not m.group("u"):  # "¥300 元": the unit says it (below)
                f.add("amount:money", _fmt(n), m.start(), m.end())
        for m in _AMOUNT_ZH.finditer(text):
            n = number(m.group("n"))
            unit = m.group("u")
            if n is None:
                continue
            if unit.startswith("万"):
                n, unit = n * 10000, unit[1:] or "元"
            family = _UNIT_FAMILY.get(unit)
            kind = f"amount:{family}" if family else "count"
            f.add(kind, f"{_fmt(n)} {unit if family else ''}".strip(), m.start(), m.end())
        for m in _THOUSANDS_ZH.finditer(text):  # "3.1k": thousands, as a chat writes a sum
            n = number(m.group("n"))
            if n is not None:
                f.add("amount:money", f"{_fmt(n * 1000)} 元", m.start(), m.end())
        for m in _MONEY_NOUN_ZH.finditer(text):  # after the sums with a unit: theirs is said
            n = number(m.group("n"))
            if n is not None:
                f.add("amount:money", f"{_fmt(n)} 元", m.start("n"), m.end("n"))
        return
    for m in _AMOUNT_EN.finditer(text):
        if m.group("pre"):
            n = number(m.group("n"))
            if n is None:
                continue
            n *= 1000 if m.group("k") else 1
            f.add("amount:money", _fmt(n), m.start(), m.end())
            continue
        n = number(m.group("n2"))
        unit = m.group("u").lower()
        if n is None:
            continue
        family = _UNIT_FAMILY.get(unit)
        if unit == "per" and not re.match(r"\s*cent\b", text[m.end() :], re.IGNORECASE):
            family = None  # "two per room": a rate's count, no percent ("5 per cent" is one)
        if family is None and m.group("u2") is not None:
            family = _UNIT_FAMILY.get(m.group("u2").lower())  # "5 more minutes"
        if family is not None:
            n *= 1000 if unit == "k" else 1
            f.add(f"amount:{family}", f"{_fmt(n)} {family}", m.start(), m.end())
        elif (
            (unit.isalpha() and unit not in _NOT_NAMES and len(unit) > 2 and unit.endswith("s"))
            or (unit in ("people", "staff", "folks"))
            or (m.group("u2") is not None and m.group("u2").lower() not in _NOT_NAMES)
        ):
            # "nine engineers", "12 people": a count of something (the thing stays a word)
            f.add("count", _fmt(n), m.start("n2"), m.end("n2"))


# A booking's size: "a table for 12", "a party of 9", "booked for 6".
_PARTY = re.compile(
    r"\b(?:table|party|group|booking|reservation|booked)\s(?:for|of)\s(?P<n>"
    + _EN_NUMBER
    + r")(?![\w.,:]|\s?(?:[ap]\.?m\b|o'clock|%))",
    re.IGNORECASE,
)


def _party_sizes(f: _Found, text: str) -> None:
    for m in _PARTY.finditer(text):
        n = number(m.group("n"))
        if n is not None:
            f.add("count", _fmt(n), m.start("n"), m.end("n"))


def _statuses(f: _Found, text: str, zh: bool) -> None:
    for m in (_STATUS_ZH if zh else _STATUS_EN).finditer(text):
        word = m.group(0).lower()
        if word in (
            "open",
            "closed",
            "live",
            "complete",
            "done",
            "green",
            "red",
        ) and not _status_slot(text, m):
            continue  # "an open question", "closed doors": adjectives, not states
        f.add("status", _STATUS[word], m.start(), m.end())


def _status_slot(text: str, m: re.Match[str]) -> bool:
    """An English status word stands where a state is stated: after a copula or "now"."""
    before = text[: m.start()].lower().rstrip()
    return bool(re.search(r"\b(?:is|are|was|were|be|been|now|still|marked(?: as)?|as)$", before))


def _subkind(text: str, start: int, end: int, token: str) -> str:
    before, after = text[:start], text[end:]
    if _HONORIFIC.match(token):
        return "name:person"  # "Mrs Quill", "Dr. Osei"
    if _PRODUCT_FORM.search(token):
        return "name:product"  # iOS, GitHub, LISTEN/NOTIFY, S3, AWS
    if _PERSON_AFTER.match(after) or _PERSON_BEFORE.search(before):
        return "name:person"
    if _PRODUCT_BEFORE.search(before):
        return "name:product"
    if _PLACE_BEFORE.search(before):
        return "name:place"
    return "name"


_PRODUCT_FORM = re.compile(r"[a-z][A-Z]|[/\d.+#]|^[A-Z]{2,}$")
_HONORIFIC = re.compile(r"(?:Mr|Mrs|Ms|Mx|Miss|Dr|Prof)\.?\s+[A-Z]")


def _opens(text: str, at: int) -> bool:
    """Whether position ``at`` opens a sentence, a line, a list item or a table cell."""
    before = text[:at].rstrip()
    return not before or before[-1] in ".!?;|•*-–—>(\n"


def _names_en(f: _Found, text: str) -> None:
    for m in _NAME_EN.finditer(text):
        words = m.group(0).split()
        while words and (
            words[0].lower().strip(".") in _NOT_NAMES or _WEEKDAYS.fullmatch(words[0])
        ):
            words.pop(0)  # "Next Friday", "The Apple account": a leading common word is not one
        if not words:
            continue
        name = " ".join(words)
        start = m.start() + m.group(0).index(words[0])
        end = start + len(name)
        name = re.sub(r"['’]s$", "", name).rstrip(".'’")  # "Stripewell's fee": Stripewell
        end = start + len(name)
        if name in ("I", "I'm", "I've", "I'd", "I'll") or not f.free(start, end):
            continue
        after = text[end:]
        if re.match(r"\s*[:：]", after) and not _opens(text, start):
            # a field's label ("… Esra Yilmaz Priority: High"): the words before it may be one
            if " " not in name:
                continue
            name = name.rsplit(" ", 1)[0]
            end = start + len(name)
            after = text[end:]
        alone = _opens(text, start) and " " not in name and not _PRODUCT_FORM.search(name)
        label = re.match(r"\s*[:：]", after) and name.lower() in _FIELD_LABELS
        if alone and (label or not (_PERSON_AFTER.match(after) or re.match(r"\s*[:：]", after))):
            # One capitalised word opening a sentence, a line or a cell is a name only when it
            # says who ("Kenji owns …", "Ben: …"), not "Raised the minimum", "Best regards".
            continue
        f.add(_subkind(text, start, end, name), name.lower(), start, end)


def _names_zh(f: _Found, text: str) -> None:
    for kind, norm, start, end in zh_names(text):
        f.add(kind, norm, start, end)


@lru_cache(maxsize=8192)
def _values(text: str) -> tuple[Value, ...]:
    zh = is_zh(text)
    f = _Found(text)
    _weekly(f, text, zh)
    _dates(f, text)
    _phones(f, text)
    _days(f, text)
    _clocks(f, text)
    if not zh:
        _word_clocks(f, text)
    if not zh:
        _party_sizes(f, text)
    _ids(f, text)
    if not zh:
        _placed_labels(f, text)  # before the versions: "room 4.12" is no version
    _versions(f, text)
    _amounts(f, text, zh)
    _bare_versions(f, text)
    _statuses(f, text, zh)
    if zh:
        _names_zh(f, text)
    else:
        _names_en(f, text)
    _labels(f, text, zh)  # after the names: "ThinkPad X1 Carbon" is one
    return tuple(sorted(f.out, key=lambda v: v.start))


def values(text: str) -> list[Value]:
    """The typed values of ``text`` in reading order (see the module docstring)."""
    return list(_values(text))


_PLACEHOLDER = {"date": "[date]", "weekday": "[date]", "clock": "[time]", "count": "[number]",
                "version": "[version]", "status": "[status]", "phone": "[phone]"}  # fmt: skip


def placeholder(v: Value) -> str:
    """What a value becomes in the masked statement: its kind, never the value."""
    if v.kind.startswith("amount"):
        return "[amount]"
    if v.kind.startswith("name"):
        return "[name]" if v.kind == "name" else f"[{v.kind.split(':', 1)[1]}]"
    return _PLACEHOLDER.get(v.kind, "[value]")


@lru_cache(maxsize=8192)
def masked(text: str) -> str:
    """``text`` with each value replaced by its kind ("The release is on [date].")."""
    out, at = [], 0
    for v in _values(text):
        out.append(text[at : v.start])
        out.append(placeholder(v))
        at = v.end
    out.append(text[at:])
    return "".join(out)


__all__ = ["Value", "is_zh", "masked", "number", "placeholder", "values"]
