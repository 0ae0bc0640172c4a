"""Rule-based time expressions in Chinese and English (retrieval.md, "Time parsing").

No model: regular expressions turn explicit dates, months, years, quarters, relative and fuzzy
expressions into half-open spans ``[start, end)``. Relative expressions resolve against the
caller's ``now`` in the caller's time zone (never a hard-coded one). Weeks start on Monday (ISO).
A year or month given without its year ("3月15日", "in May") takes the year of ``now``.

Confidence: explicit date 0.95, month 0.90, quarter 0.90 (0.80 without a year), year 0.85,
relative 0.6-0.9 (the vaguer the lower), fuzzy 0.4-0.5.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict

from memflow.bounds import check_time
from memflow.drafts import TimeSpan
from memflow.errors import InvalidInput


class TimeMatch(BaseModel):
    """One time expression found in a text: a tz-aware half-open span and where it was found."""

    model_config = ConfigDict(frozen=True)

    start: datetime
    end: datetime
    confidence: float
    text: str
    pos: tuple[int, int]
    kind: str = "date"  # date | month | quarter | year | relative | fuzzy | range

    def to_span(self) -> TimeSpan:
        return TimeSpan(start=self.start, end=self.end, confidence=self.confidence, text=self.text)


# ---------------------------------------------------------------- time zone and calendar helpers

_OFFSET = re.compile(r"^(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::?(\d{2}))?$", re.IGNORECASE)


def resolve_tz(tz: str | tzinfo) -> tzinfo:
    """An IANA name ("Asia/Shanghai"), "UTC", a fixed offset ("+08:00", "UTC+8") or a tzinfo."""
    if isinstance(tz, tzinfo):
        return tz
    name = tz.strip()
    if name.upper() in ("UTC", "Z", "GMT"):
        return UTC
    offset = _OFFSET.match(name)
    if offset:
        sign = -1 if offset.group(1) == "-" else 1
        delta = timedelta(hours=int(offset.group(2)), minutes=int(offset.group(3) or 0))
        return timezone(sign * delta)
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise InvalidInput(
            f"unknown time zone {tz!r}: use an IANA name such as 'Asia/Shanghai' or an offset "
            "such as '+08:00'"
        ) from exc


class _Ctx:
    def __init__(self, now: datetime, tz: tzinfo) -> None:
        self.tz = tz
        self.now = now.replace(tzinfo=tz) if now.tzinfo is None else now.astimezone(tz)
        self.today = self.now.date()

    def at(self, d: date) -> datetime:
        return datetime.combine(d, time(), tzinfo=self.tz)

    def days(self, d: date, n: int = 1) -> _Span:
        return self.at(d), self.at(d + timedelta(days=n))

    def between(self, a: date, b: date) -> _Span:
        return self.at(a), self.at(b)

    def month(self, y: int, m: int, n: int = 1) -> _Span:
        ey, em = shift_month(y, m, n)
        return self.at(date(y, m, 1)), self.at(date(ey, em, 1))

    def year(self, y: int) -> _Span:
        return self.at(date(y, 1, 1)), self.at(date(y + 1, 1, 1))

    def quarter(self, y: int, q: int) -> _Span:
        return self.month(y, 3 * (q - 1) + 1, 3)

    def week(self, offset: int, d: date | None = None) -> _Span:
        base = d or self.today
        monday = base - timedelta(days=base.weekday()) + timedelta(weeks=offset)
        return self.days(monday, 7)

    def weekday_in_week(self, offset: int, wd: int) -> _Span:
        monday = self.today - timedelta(days=self.today.weekday()) + timedelta(weeks=offset)
        return self.days(monday + timedelta(days=wd))

    def weekend(self, offset: int) -> _Span:
        saturday = (
            self.today - timedelta(days=self.today.weekday()) + timedelta(weeks=offset, days=5)
        )
        return self.days(saturday, 2)

    def recent_weekday(self, wd: int, strictly_before: bool) -> _Span:
        back = (self.today.weekday() - wd) % 7
        if back == 0 and strictly_before:
            back = 7
        return self.days(self.today - timedelta(days=back))

    def next_weekday(self, wd: int) -> _Span:
        ahead = (wd - self.today.weekday()) % 7 or 7
        return self.days(self.today + timedelta(days=ahead))

    def shifted(self, unit: str, n: int) -> _Span:
        """The day / week / month / year that lies ``n`` units from today (negative: past)."""
        if unit == "day":
            return self.days(self.today + timedelta(days=n))
        if unit == "week":
            return self.week(0, self.today + timedelta(weeks=n))
        if unit == "month":
            return self.month(*shift_month(self.today.year, self.today.month, n))
        return self.year(self.today.year + n)

    def window(self, unit: str, n: int) -> _Span:
        """The last ``n`` units up to the end of today ("past 3 days", "近三个月")."""
        end = self.today + timedelta(days=1)
        if unit == "day":
            return self.between(self.today - timedelta(days=n), end)
        if unit == "week":
            return self.between(self.today - timedelta(weeks=n), end)
        if unit == "month":
            y, m = shift_month(self.today.year, self.today.month, -n)
            return self.between(_clamp_day(y, m, self.today.day), end)
        return self.between(_clamp_day(self.today.year - n, self.today.month, self.today.day), end)


_Span = tuple[datetime, datetime]
_Result = tuple[datetime, datetime, float, str]
_Handler = Callable[[re.Match[str], _Ctx], _Result | None]


def shift_month(y: int, m: int, k: int) -> tuple[int, int]:
    """(year, month) moved by ``k`` months."""
    idx = y * 12 + (m - 1) + k
    return idx // 12, idx % 12 + 1


def _clamp_day(y: int, m: int, d: int) -> date:
    for day in (d, 30, 29, 28):
        try:
            return date(y, m, day)
        except ValueError:
            continue
    return date(y, m, 28)


# ------------------------------------------------------------------------------ numbers and names

_CN_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4}
_CN_DIGIT |= {"五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_EN_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_EN_NUM |= {"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_MONTH = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8}
_MONTH |= {"sep": 9, "oct": 10, "nov": 11, "dec": 12}
_WEEKDAY = {"mon": 0, "tue": 1, "wed": 2, "thu": 3, "fri": 4, "sat": 5, "sun": 6}
_CN_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_CN_WEEKDAY |= {str(i + 1): i for i in range(7)}
_CN_YEAR = {"大前年": -3, "前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2}
_CN_OFFSET = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2}
_EN_OFFSET = {"last": -1, "previous": -1, "past": -1, "this": 0, "next": 1, "coming": 1}
_CN_UNIT = {"天": "day", "日": "day", "周": "week", "星期": "week", "礼拜": "week"}
_CN_UNIT |= {"月": "month", "年": "year"}


def _int(text: str) -> int | None:
    s = re.sub(r"\s+", " ", text.strip().lower())
    if s.isdecimal():
        return int(s)
    if s in _EN_NUM:
        return _EN_NUM[s]
    if s.endswith("couple of"):
        return 2
    if s and all(ch in _CN_DIGIT or ch == "十" for ch in s):
        if "十" not in s:
            return int("".join(str(_CN_DIGIT[ch]) for ch in s))
        tens, _, ones = s.partition("十")
        if len(tens) > 1 or len(ones) > 1:
            return None
        return (_CN_DIGIT[tens] if tens else 1) * 10 + (_CN_DIGIT[ones] if ones else 0)
    return None


def _unit(text: str) -> str:
    t = text.lower().replace("个", "").strip()
    if t in _CN_UNIT:
        return _CN_UNIT[t]
    return t.rstrip("s")


def _year_ok(y: int) -> bool:
    return 1900 <= y <= 2100


# ------------------------------------------------------------------------------------------- rules

_RULES: list[tuple[re.Pattern[str], _Handler]] = []


def _rule(pattern: str) -> Callable[[_Handler], _Handler]:
    def register(handler: _Handler) -> _Handler:
        _RULES.append((re.compile(pattern, re.IGNORECASE), handler))
        return handler

    return register


_MON = (
    r"(?P<mon>january|february|march|april|may|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
)
_WD = r"(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_ORD = r"(?:st|nd|rd|th)?"
_CLOCK = r"(?:\d{1,2}(?::\d{2})?\s*[ap]\.?\s?m\.?\s+(?:on\s+)?)?"
_WD_PREFIX = r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+)?"
_YSEP = r"(?:\s*,\s*|\s+)"
_CN_N = r"(?:\d{1,3}|[零一二两三四五六七八九十]{1,3})"
_EN_N = r"(?:\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:a\s+)?couple\s+of)"
_CN_MON = r"(?:1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])"
_CN_DAY = r"(?:3[01]|[12]\d|0?[1-9]|[二三]?十[一二三四五六七八九]?|[一二三四五六七八九])"


def _month_no(m: re.Match[str]) -> int:
    return _MONTH[m.group("mon").lower()[:3]]


_MAY_VERB = re.compile(r"\s+(?:be|have|not|also|still|need|want|take|help|well|as|go|come)\b")


def _may_is_verb(m: re.Match[str]) -> bool:
    """Lower-case "may" followed by a verb-like word ("by may be") is the modal verb."""
    mon = m.group("mon")
    return mon == "may" and bool(_MAY_VERB.match(m.string, m.end()))


def _date(ctx: _Ctx, y: int, mo: int, d: int, conf: float = 0.95) -> _Result | None:
    if not _year_ok(y):
        return None
    try:
        return (*ctx.days(date(y, mo, d)), conf, "date")
    except ValueError:
        return None


@_rule(
    r"(?<![\d.])(?P<y>\d{4})(?P<s>[-/.])(?P<m>\d{1,2})(?P=s)(?P<d>\d{1,2})(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?(?![\d])"
)
def _iso_date(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    return _date(ctx, int(m["y"]), int(m["m"]), int(m["d"]))


@_rule(r"(?<![\d/])(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<y>\d{4})(?![\d/])")
def _slash_date(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    a, b = int(m["a"]), int(m["b"])
    month, day = (b, a) if a > 12 else (a, b)  # US order unless the first number cannot be a month
    return _date(ctx, int(m["y"]), month, day, 0.9)


@_rule(r"(?<![\d.\-/])(?P<y>\d{4})[-/](?P<m>1[0-2]|0?[1-9])(?![\d/\-.])")
def _iso_month(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    y = int(m["y"])
    return (*ctx.month(y, int(m["m"])), 0.9, "month") if _year_ok(y) else None


@_rule(
    r"(?<!\d)(?:(?P<y>\d{4})\s*年\s*|(?P<ry>大前年|前年|去年(?![检审])|今年|明年|后年))?"
    rf"(?P<m>{_CN_MON})\s*月份?(?:\s*(?P<d>{_CN_DAY})\s*[日号])?"
)
def _cn_date(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    if m["y"]:
        y = int(m["y"])
    elif m["ry"]:
        y = ctx.today.year + _CN_YEAR[m["ry"]]
    else:
        y = ctx.today.year
    month = _int(m["m"])
    if month is None or not 1 <= month <= 12 or not _year_ok(y):
        return None
    if m["d"]:
        day = _int(m["d"])
        return _date(ctx, y, month, day) if day else None
    return (*ctx.month(y, month), 0.9, "month")


@_rule(rf"\b{_CLOCK}{_WD_PREFIX}{_MON}\s+(?P<d>\d{{1,2}}){_ORD}{_YSEP}(?P<y>\d{{4}})\b")
def _en_mdy(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    return _date(ctx, int(m["y"]), _month_no(m), int(m["d"]))


@_rule(
    rf"\b{_CLOCK}{_WD_PREFIX}(?:the\s+)?(?P<d>\d{{1,2}}){_ORD}\s+(?:of\s+)?{_MON}{_YSEP}(?P<y>\d{{4}})\b"
)
def _en_dmy(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    return _date(ctx, int(m["y"]), _month_no(m), int(m["d"]))


@_rule(rf"\b{_MON}\s+(?P<d>\d{{1,2}}){_ORD}\b(?![:.,]?\d)")
def _en_md(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    if _may_is_verb(m):
        return None
    return _date(ctx, ctx.today.year, _month_no(m), int(m["d"]))


@_rule(rf"\b(?:the\s+)?(?P<d>\d{{1,2}}){_ORD}\s+(?:of\s+)?{_MON}\b")
def _en_dm(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    if m["mon"] != "May" and m["mon"].lower() == "may":  # "5 may be enough" is not a date
        return None
    return _date(ctx, ctx.today.year, _month_no(m), int(m["d"]))


@_rule(rf"\b{_MON}{_YSEP}(?:of\s+)?(?P<y>\d{{4}})\b")
def _en_month_year(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    y = int(m["y"])
    return (*ctx.month(y, _month_no(m)), 0.9, "month") if _year_ok(y) else None


@_rule(
    r"\b(?:in|during|since|until|till|by|from|around|through|throughout|early|mid|late|"
    rf"(?:the\s+)?(?:end|beginning|start|middle)\s+of)\s+(?:(?:early|mid|late)[\s-]+)?{_MON}\b(?!\s*\d)"
)
def _en_cue_month(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    if _may_is_verb(m):
        return None
    return (*ctx.month(ctx.today.year, _month_no(m)), 0.9, "month")


@_rule(rf"\b(?P<p>last|this|next)\s+{_MON}\b")
def _en_rel_month_name(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    month, cur = _month_no(m), ctx.today.month
    y = ctx.today.year
    if m["p"].lower() == "last":
        y -= 0 if month < cur else 1
    elif m["p"].lower() == "next":
        y += 0 if month > cur else 1
    return (*ctx.month(y, month), 0.85, "month")


@_rule(
    r"\b(?:in|since|during|of|by|until|till|from|around|circa|throughout|early|mid|late|"
    r"(?:the\s+)?year)\s+(?:(?:early|mid|late)[\s-]+)?(?P<y>\d{4})\b(?![.,]\d)(?!\s*%)"
)
def _en_year(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    y = int(m["y"])
    return (*ctx.year(y), 0.85, "year") if _year_ok(y) else None


@_rule(r"(?<!\d)(?P<y>\d{4})\s*年度?(?!代)")
def _cn_year(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    y = int(m["y"])
    return (*ctx.year(y), 0.85, "year") if _year_ok(y) else None


@_rule(r"大前年|前年|去年(?![检审])|今年|明年|后年")
def _cn_rel_year(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    k = _CN_YEAR[m[0]]
    return (*ctx.year(ctx.today.year + k), 0.9 if k == 0 else 0.85, "relative")


@_rule(
    r"(?:(?P<y>\d{4})\s*年?|(?P<ry>前年|去年(?![检审])|今年|明年))?\s*第?\s*(?P<q>[一二三四1-4])\s*季度"
)
def _cn_quarter(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    q = _int(m["q"]) or 1
    if m["y"]:
        y, conf = int(m["y"]), 0.9
    elif m["ry"]:
        y, conf = ctx.today.year + _CN_YEAR[m["ry"]], 0.85
    else:
        y, conf = ctx.today.year, 0.8
    return (*ctx.quarter(y, q), conf, "quarter") if _year_ok(y) else None


@_rule(
    r"\b(?:Q(?P<q1>[1-4])(?:(?:\s*,?\s*|\s+of\s+)(?P<y1>\d{4}))?|(?P<y2>\d{4})\s*-?\s*Q(?P<q2>[1-4])|"
    r"(?:the\s+)?(?P<q3>first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter(?:\s+of\s+(?P<y3>\d{4}))?)\b"
)
def _en_quarter(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    word = m["q1"] or m["q2"] or m["q3"]
    order = {"first": 1, "second": 2, "third": 3, "fourth": 4}
    q = order.get(word.lower()) or int(word[0])
    year = m["y1"] or m["y2"] or m["y3"]
    y = int(year) if year else ctx.today.year
    return (*ctx.quarter(y, q), 0.9 if year else 0.8, "quarter") if _year_ok(y) else None


@_rule(r"(?P<p>上|这|本|下)\s*个?\s*季度")
def _cn_rel_quarter(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    return _rel_quarter(ctx, _CN_OFFSET[m["p"]])


@_rule(r"\b(?P<p>last|previous|this|next|coming)\s+quarter\b")
def _en_rel_quarter(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    return _rel_quarter(ctx, _EN_OFFSET[m["p"].lower()])


def _rel_quarter(ctx: _Ctx, k: int) -> _Result:
    y, mo = shift_month(ctx.today.year, (ctx.today.month - 1) // 3 * 3 + 1, 3 * k)
    return (*ctx.month(y, mo, 3), 0.9 if k == 0 else 0.85, "relative")


@_rule(r"(?:(?P<y>\d{4})\s*年\s*|(?P<ry>去年(?![检审])|今年|明年))?(?P<h>上|下)半年")
def _cn_half_year(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    y = int(m["y"]) if m["y"] else ctx.today.year + (_CN_YEAR[m["ry"]] if m["ry"] else 0)
    if not _year_ok(y):
        return None
    return (*ctx.month(y, 1 if m["h"] == "上" else 7, 6), 0.85, "relative")


_CN_DAYS = {"大前天": (-3, 0.85), "前天": (-2, 0.9), "昨天": (-1, 0.9), "昨日": (-1, 0.9)}
_CN_DAYS |= {"昨晚": (-1, 0.85), "昨夜": (-1, 0.85), "今天": (0, 0.9), "今日": (0, 0.9)}
_CN_DAYS |= {"今早": (0, 0.85), "今晚": (0, 0.85), "明天": (1, 0.9), "明日": (1, 0.9)}
_CN_DAYS |= {"后天": (2, 0.9), "大后天": (3, 0.85)}


@_rule("|".join(sorted(_CN_DAYS, key=len, reverse=True)))
def _cn_rel_day(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    k, conf = _CN_DAYS[m[0]]
    return (*ctx.days(ctx.today + timedelta(days=k)), conf, "relative")


_EN_DAYS = {"the day before yesterday": (-2, 0.9), "the day after tomorrow": (2, 0.9)}
_EN_DAYS |= {"yesterday": (-1, 0.9), "last night": (-1, 0.85), "today": (0, 0.9)}
_EN_DAYS |= {"tonight": (0, 0.85), "this morning": (0, 0.85), "this afternoon": (0, 0.85)}
_EN_DAYS |= {"this evening": (0, 0.85), "earlier today": (0, 0.85), "tomorrow": (1, 0.9)}
_EN_DAYS |= {"the day before": (-1, 0.6), "the previous day": (-1, 0.6)}
_EN_DAYS |= {"the next day": (1, 0.6), "the following day": (1, 0.6)}


@_rule(r"\b(?:" + "|".join(sorted(_EN_DAYS, key=len, reverse=True)).replace(" ", r"\s+") + r")\b")
def _en_rel_day(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    k, conf = _EN_DAYS[re.sub(r"\s+", " ", m[0].lower())]
    return (*ctx.days(ctx.today + timedelta(days=k)), conf, "relative")


@_rule(
    rf"(?<![\d])(?P<n>{_CN_N})\s*(?P<u>天|日|个?\s*(?:周|星期|礼拜)|个\s*月|年)\s*(?P<d>前|以前|之前|后|以后|之后)"
)
def _cn_ago(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    n, unit = _int(m["n"]), _unit(m["u"])
    if n is None:
        return None
    sign = -1 if "前" in m["d"] else 1
    return (*ctx.shifted(unit, sign * n), 0.8 if unit == "day" else 0.75, "relative")


@_rule(rf"\b(?P<n>{_EN_N})\s+(?P<u>days?|weeks?|months?|years?)\s+(?P<d>ago|from\s+now)\b")
def _en_ago(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    n, unit = _int(m["n"]), _unit(m["u"])
    if n is None:
        return None
    sign = -1 if m["d"].lower() == "ago" else 1
    return (*ctx.shifted(unit, sign * n), 0.8 if unit == "day" else 0.75, "relative")


@_rule(rf"(?:最近|近|过去|过去的)\s*(?P<n>{_CN_N})\s*(?P<u>天|日|个?\s*(?:周|星期|礼拜|月)|年)")
def _cn_window(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    n = _int(m["n"])
    return (*ctx.window(_unit(m["u"]), n), 0.8, "relative") if n else None


@_rule(rf"\b(?:last|past|previous)\s+(?P<n>{_EN_N})\s+(?P<u>days?|weeks?|months?|years?)\b")
def _en_window(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    n = _int(m["n"])
    return (*ctx.window(_unit(m["u"]), n), 0.8, "relative") if n else None


@_rule(
    r"(?P<p>上上|上|这|本|下下|下)\s*(?P<g>个)?\s*(?:周|星期|礼拜)(?P<wd>[一二三四五六日天1-7](?![直起样下般定些次切点共边]))?(?!期)"
)
def _cn_rel_week(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    k = _CN_OFFSET[m["p"]]
    if m["wd"]:
        return (*ctx.weekday_in_week(k, _CN_WEEKDAY[m["wd"]]), 0.85, "relative")
    return (*ctx.week(k), 0.9 if k == 0 else 0.85 - 0.05 * (abs(k) - 1), "relative")


@_rule(r"(?<![上下这本个每一二两三四五六七八九十\d])(?:周|星期|礼拜)(?P<wd>[一二三四五六日天])")
def _cn_weekday(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    return (*ctx.recent_weekday(_CN_WEEKDAY[m["wd"]], strictly_before=False), 0.6, "relative")


@_rule(r"(?P<p>上|这|本|下)\s*个?\s*周末")
def _cn_weekend(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    return (*ctx.weekend(_CN_OFFSET[m["p"]]), 0.8, "relative")


@_rule(r"(?P<p>上上|上|这|本|下下|下)\s*个?\s*月(?!份?\s*[\d一二三四五六七八九十])")
def _cn_rel_month(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    k = _CN_OFFSET[m["p"]]
    return (*ctx.shifted("month", k), 0.9 if k == 0 else 0.85 - 0.05 * (abs(k) - 1), "relative")


@_rule(r"\b(?:the\s+)?(?P<p>last|previous|past|this|next|coming)\s+(?P<u>week|month|year)\b")
def _en_rel_unit(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    p, unit = m["p"].lower(), m["u"].lower()
    if p == "past":  # "the past week" is the rolling window, not the calendar week
        return (*ctx.window(unit, 1), 0.8, "relative")
    k = _EN_OFFSET[p]
    return (*ctx.shifted(unit, k), 0.9 if k == 0 else 0.85, "relative")


@_rule(r"\b(?:the\s+)?(?P<u>week|month|year)\s+before\s+last\b")
def _en_before_last(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    return (*ctx.shifted(m["u"].lower(), -2), 0.8, "relative")


@_rule(
    r"\bthe\s+(?:(?P<u1>week|month|year)\s+(?P<d1>before|after)|(?P<d2>prior|following)\s+(?P<u2>week|month|year))\b"
)
def _en_the_unit_before(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    unit = (m["u1"] or m["u2"]).lower()
    k = -1 if (m["d1"] or m["d2"]).lower() in ("before", "prior") else 1
    return (*ctx.shifted(unit, k), 0.6, "relative")


@_rule(rf"\b(?:(?P<p>last|previous|past|this|next|coming|on)\s+)?{_WD}\b")
def _en_weekday(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    wd = _WEEKDAY[m["wd"].lower()[:3]]
    p = (m["p"] or "").lower()
    if p in ("last", "previous", "past"):
        return (*ctx.recent_weekday(wd, strictly_before=True), 0.8, "relative")
    if p == "this":
        return (*ctx.weekday_in_week(0, wd), 0.8, "relative")
    if p in ("next", "coming"):
        return (*ctx.next_weekday(wd), 0.75, "relative")
    return (*ctx.recent_weekday(wd, strictly_before=False), 0.65 if p else 0.6, "relative")


@_rule(r"\b(?:(?P<p>last|this|next|over\s+the|on\s+the|the)\s+)weekend\b")
def _en_weekend(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    p = m["p"].lower().split()[-1]
    if p in _EN_OFFSET:
        return (*ctx.weekend(_EN_OFFSET[p]), 0.8, "relative")
    return (*ctx.weekend(0 if ctx.today.weekday() >= 5 else -1), 0.7, "relative")


@_rule(r"\bearlier\s+this\s+(?P<u>week|month|year)\b")
def _en_earlier_this(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    start, _ = ctx.shifted(m["u"].lower(), 0)
    return start, ctx.at(ctx.today + timedelta(days=1)), 0.65, "relative"


# Fuzzy expressions: (days back of the start, days back of the end (exclusive), confidence).
_FUZZY = {
    "最近": (30, -1, 0.5),
    "近期": (30, -1, 0.5),
    "近来": (30, -1, 0.45),
    "这段时间": (30, -1, 0.45),
    "这几天": (3, -1, 0.45),
    "前几天": (7, 0, 0.5),
    "前些天": (7, 0, 0.5),
    "前些日子": (14, 0, 0.45),
    "几天前": (7, 0, 0.5),
    "不久前": (60, -1, 0.4),
    "前不久": (60, -1, 0.4),
    "前阵子": (60, 0, 0.4),
    "前段时间": (60, 0, 0.4),
    "几周前": (35, 7, 0.45),
    "几个星期前": (35, 7, 0.45),
    "几个月前": (180, 30, 0.4),
    "几年前": (365 * 5, 365, 0.4),
    "recently": (30, -1, 0.5),
    "lately": (30, -1, 0.45),
    "of late": (30, -1, 0.45),
    "these days": (30, -1, 0.4),
    "nowadays": (30, -1, 0.4),
    "the other day": (7, 0, 0.45),
    "a few days ago": (7, 0, 0.5),
    "few days ago": (7, 0, 0.5),
    "several days ago": (10, 1, 0.45),
    "the past few days": (4, -1, 0.5),
    "the last few days": (4, -1, 0.5),
    "a few weeks ago": (35, 7, 0.45),
    "several weeks ago": (42, 7, 0.45),
    "a few months ago": (180, 30, 0.4),
    "several months ago": (240, 30, 0.4),
    "a few years ago": (365 * 5, 365, 0.4),
    "a while ago": (90, 0, 0.4),
    "some time ago": (90, 0, 0.4),
}


@_rule(
    r"(?<![a-z])(?:"
    + "|".join(sorted((re.escape(k).replace(r"\ ", r"\s+") for k in _FUZZY), key=len, reverse=True))
    + r")(?![a-z])"
)
def _fuzzy(m: re.Match[str], ctx: _Ctx) -> _Result | None:
    back, end_back, conf = _FUZZY[re.sub(r"\s+", " ", m[0].lower())]
    start = ctx.today - timedelta(days=back)
    return ctx.at(start), ctx.at(ctx.today - timedelta(days=end_back)), conf, "fuzzy"


# --------------------------------------------------------------------------------- matching logic

_SINCE_BEFORE = re.compile(r"(?:since|(?<!来)自从?|从)\s*$", re.IGNORECASE)
_SINCE_AFTER = re.compile(r"^\s*(?:以来|至今|到现在)")
_FOUR_DIGITS = re.compile(r"\d{4}")
_RANGE_GAP = re.compile(r"^\s*(?:to|until|till|through|-|–|—|~|到|至)\s*$", re.IGNORECASE)


def _raw_matches(text: str, ctx: _Ctx) -> list[TimeMatch]:
    found: list[TimeMatch] = []
    for pattern, handler in _RULES:
        for m in pattern.finditer(text):
            try:
                result = handler(m, ctx)
            except (ValueError, OverflowError, KeyError):
                result = None
            if result is None:
                continue
            start, end, conf, kind = result
            found.append(
                TimeMatch(
                    start=start,
                    end=end,
                    confidence=conf,
                    text=m[0],
                    pos=(m.start(), m.end()),
                    kind=kind,
                )
            )
    return found


def _non_overlapping(found: list[TimeMatch]) -> list[TimeMatch]:
    """Longest match first (then most confident, then leftmost); drop what overlaps a kept one."""
    kept: list[TimeMatch] = []
    for cand in sorted(found, key=lambda t: (-(t.pos[1] - t.pos[0]), -t.confidence, t.pos[0])):
        if all(cand.pos[1] <= k.pos[0] or cand.pos[0] >= k.pos[1] for k in kept):
            kept.append(cand)
    return sorted(kept, key=lambda t: t.pos)


def _extend_since(text: str, tm: TimeMatch, ctx: _Ctx) -> TimeMatch:
    """ "since May" / "2023年以来": from the span's start up to ``now``."""
    lo, hi = tm.pos
    before = _SINCE_BEFORE.search(text[:lo])
    after = _SINCE_AFTER.match(text[hi:])
    starts_with_since = tm.text.lower().startswith("since")
    if not (before or after or starts_with_since) or tm.start >= ctx.now:
        return tm
    lo = before.start() if before else lo
    hi = hi + after.end() if after else hi
    return tm.model_copy(update={"end": ctx.now, "text": text[lo:hi], "pos": (lo, hi)})


_RANGE_KINDS = frozenset({"date", "month", "year", "quarter"})


def _merge_ranges(text: str, matches: list[TimeMatch]) -> list[TimeMatch]:
    """ "May 3 to May 7" / "3月到5月": one span from the first start to the second end."""
    out: list[TimeMatch] = []
    for tm in matches:
        prev = out[-1] if out else None
        joinable = (
            prev is not None
            and {prev.kind, tm.kind} <= _RANGE_KINDS
            and _RANGE_GAP.match(text[prev.pos[1] : tm.pos[0]]) is not None
        )
        if prev is None or not joinable:
            out.append(tm)
            continue
        prev = _borrow_year(prev, tm)
        if tm.end <= prev.start:
            out.append(tm)
            continue
        lo, hi = prev.pos[0], tm.pos[1]
        confidence = min(prev.confidence, tm.confidence)
        out[-1] = TimeMatch(
            start=prev.start,
            end=tm.end,
            confidence=confidence,
            text=text[lo:hi],
            pos=(lo, hi),
            kind="range",
        )
    return out


def _borrow_year(prev: TimeMatch, tm: TimeMatch) -> TimeMatch:
    """ "May 3 to May 7, 2023": the first end takes the year written on the second."""
    delta = tm.start.year - prev.start.year
    if delta == 0 or _FOUR_DIGITS.search(prev.text):
        return prev
    try:
        start = prev.start.replace(year=prev.start.year + delta)
        end = prev.end.replace(year=prev.end.year + delta)
    except ValueError:
        return prev
    return prev.model_copy(update={"start": start, "end": end})


def parse_time(text: str, now: datetime, tz: str | tzinfo = "UTC") -> list[TimeMatch]:
    """Every time expression in ``text``, in order of position, without overlaps. ``now`` must
    lie in memflow's time range (memflow.bounds: InvalidInput otherwise); an expression whose
    span would end past Python's calendar ("next year" said in 9998) is left out, not clamped."""
    if now.tzinfo is not None:
        check_time(now, "now")
    else:  # a naive now is read in ``tz``
        check_time(now.replace(tzinfo=resolve_tz(tz)), "now")
    ctx = _Ctx(now, resolve_tz(tz))
    matches = _non_overlapping(_raw_matches(text, ctx))
    matches = [_extend_since(text, tm, ctx) for tm in matches]
    return _merge_ranges(text, matches)


def best_time(text: str, now: datetime, tz: str | tzinfo = "UTC") -> TimeMatch | None:
    """The most confident time expression in ``text`` (the earliest one on ties), or None."""
    matches = parse_time(text, now, tz)
    if not matches:
        return None
    return min(matches, key=lambda t: (-t.confidence, t.pos[0]))


__all__ = ["TimeMatch", "best_time", "parse_time", "resolve_tz", "shift_month"]
