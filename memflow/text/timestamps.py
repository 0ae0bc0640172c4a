"""Timestamps of stored messages and sessions: one instant from a date string in a common format.

Accepted (the first that matches wins):

- Unix seconds: ``1684549260`` or ``1684549260.5``;
- ISO-8601: ``2023-05-20T02:21:00Z``, ``2023-05-20 02:21``, ``20230520``;
- RFC 2822: ``Sat, 20 May 2023 02:21:00 +0000`` (e-mail headers);
- a year-first numeric date, ``YYYY/MM/DD``, ``YYYY-MM-DD`` or ``YYYY.MM.DD`` (or
  ``2023年5月20日``), a month-name date, ``20 May, 2023`` or ``May 20, 2023``; either with a
  weekday in parentheses or a leading weekday name (``2023/05/20 (Sat)``, ``Sat, May 20 2023``),
  which is ignored, and a 24- or 12-hour time anywhere (``02:21``, ``2:21:05 pm``, ``9 am``),
  as in ``8:56 pm on 20 May, 2023``; a trailing ``UTC``, ``GMT``, ``Z`` or ``+08:00`` sets the
  zone;
- a time alone, on the reference's day.

Times without a zone are read in the reference's zone, else UTC. (Spans in queries and texts,
"last week", are :mod:`memflow.text.timeparse`'s.)
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from email.utils import parsedate_to_datetime

_MONTH_NAMES = (
    ("jan", "january"),
    ("feb", "february"),
    ("mar", "march"),
    ("apr", "april"),
    ("may",),
    ("jun", "june"),
    ("jul", "july"),
    ("aug", "august"),
    ("sep", "sept", "september"),
    ("oct", "october"),
    ("nov", "november"),
    ("dec", "december"),
)
MONTHS = {name: i + 1 for i, names in enumerate(_MONTH_NAMES) for name in names}

_UNIX = re.compile(r"^\d{9,11}(?:\.\d+)?$")
_RFC2822 = re.compile(
    r"^(?:[A-Za-z]{3},\s*)?\d{1,2}\s+[A-Za-z]{3}\s+\d{4}\s+\d{1,2}:\d{2}(?::\d{2})?"
    r"\s*(?:[+-]\d{4}|[A-Z]{1,5})?$"
)
_PARENS = re.compile(r"\([^)]*\)|（[^）]*）")
_ZONE = re.compile(
    r"(?:\s*(?<![A-Za-z])(?P<utc>Z|UTC|GMT)\s*(?P<sign1>[+-])?(?P<h1>\d{1,2})?(?::?(?P<m1>\d{2}))?"
    r"|(?:\s+|(?<=:\d\d))(?P<sign2>[+-])(?P<h2>\d{2}):?(?P<m2>\d{2}))$"
)
_YMD = re.compile(
    r"(?<!\d)(\d{4})\s*([/.\-年])\s*(\d{1,2})\s*(?:\2|月)\s*(\d{1,2})(?!\d)\s*[日号]?"
)
_DMY = re.compile(r"(?<!\d)(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]{3,9})\.?,?\s+(\d{4})")
_MDY = re.compile(r"([A-Za-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})")
_CLOCK = re.compile(
    r"(?<![\d:])(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([ap])\.?\s*m\b\.?)?", re.IGNORECASE
)
_HOUR_AMPM = re.compile(r"(?<![\d:])(\d{1,2})\s*([ap])\.?\s*m\b", re.IGNORECASE)


def _aware(dt: datetime, zone: tzinfo) -> datetime:
    return dt.replace(tzinfo=zone) if dt.tzinfo is None else dt


def _zone(value: str) -> tuple[str, tzinfo | None]:
    """``value`` without a trailing zone, and that zone (None when there is none)."""
    m = _ZONE.search(value)
    if m is None or not m.group(0).strip():
        return value, None
    sign = m.group("sign1") or m.group("sign2")
    hours = m.group("h1") or m.group("h2")
    if sign is None or hours is None:
        return value[: m.start()], UTC
    offset = timedelta(hours=int(hours), minutes=int(m.group("m1") or m.group("m2") or 0))
    if offset >= timedelta(hours=24):
        return value, None
    return value[: m.start()], timezone(-offset if sign == "-" else offset)


def _day(value: str) -> tuple[int, int, int] | None:
    if m := _YMD.search(value):
        return int(m.group(1)), int(m.group(3)), int(m.group(4))
    if (m := _DMY.search(value)) and (month := MONTHS.get(m.group(2).lower())):
        return int(m.group(3)), month, int(m.group(1))
    if (m := _MDY.search(value)) and (month := MONTHS.get(m.group(1).lower())):
        return int(m.group(3)), month, int(m.group(2))
    return None


def _clock(value: str) -> tuple[int, int, int] | None:
    hour, minute, second, half = 0, 0, 0, None
    if m := _CLOCK.search(value):
        hour, minute, second, half = int(m[1]), int(m[2]), int(m[3] or 0), m[4]
    elif m := _HOUR_AMPM.search(value):
        hour, half = int(m[1]), m[2]
    else:
        return None
    if half is not None:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half.lower() == "p" else 0)
    return hour, minute, second


def parse_timestamp(value: str, reference: datetime | None = None) -> datetime | None:
    """The instant ``value`` names (see the module doc), or None when it names none.
    ``reference`` gives a bare time its day and a zoneless one its zone."""
    value = value.strip()
    if not value:
        return None
    zone = reference.tzinfo if reference is not None and reference.tzinfo else UTC
    if _UNIX.match(value):
        return datetime.fromtimestamp(float(value), tz=UTC)
    try:
        return _aware(datetime.fromisoformat(value.replace("Z", "+00:00")), zone)
    except ValueError:
        pass
    if _RFC2822.match(value):
        try:
            return _aware(parsedate_to_datetime(value), zone)
        except (TypeError, ValueError):
            pass
    text, explicit = _zone(_PARENS.sub(" ", value).strip())
    day = _day(text)
    clock = _clock(text)
    if day is None and reference is not None and clock is not None:
        day = (reference.year, reference.month, reference.day)
    if day is None:
        return None
    hour, minute, second = clock or (0, 0, 0)
    try:
        return datetime(*day, hour, minute, second, tzinfo=explicit or zone)
    except ValueError:
        return None


__all__ = ["MONTHS", "parse_timestamp"]
