"""When a document or a section happened: its own title or heading date before its body's dates.

A note titled "Platform sync — 17 Sep 2024" that mentions a review planned for 8 Oct 2024 happened
on 17 Sep: the date a document gives itself (its title, a heading, a file name such as
``2024-03-14-standup.md``) says when it was written; dates in its body are often plans,
deadlines or history. Rules (English and Chinese, any format :mod:`memflow.text.timeparse` reads):

1. a title or heading that names a calendar time (a day, month, quarter, year or a range of them;
   never a relative or fuzzy one such as "next week") dates the text;
2. the body's best date refines it only when it lies inside that span and is narrower
   ("March 2024 retro" whose body says "on 14 March we decided...");
3. without a title date, the body's most confident date, as before.

Conversations are dated by their sessions (or their reference time) and never reach these rules.

The **source date** of a note's sentence (:func:`source_dated`: when the source says it was
written, what ``as_of`` reads) comes from the document's own dates only, never from its body: its
section heading, the document's head (YAML front matter ``date:``, an e-mail ``Date:`` header:
:func:`document_head`), its title, its file name. Sentences without one are dated by the
document's reference time (the caller's, else the file's modification time) when stored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from pathlib import PurePath

from memflow.drafts import EpisodeDraft, TimeSpan
from memflow.text.document import Chunk, ParsedDocument
from memflow.text.timeparse import TimeMatch, best_time, parse_time, resolve_tz
from memflow.text.timestamps import parse_timestamp

# What a title may name to date its text: calendar times only.
TITLE_KINDS = frozenset({"date", "month", "quarter", "year", "range"})
TITLE_CONFIDENCE_MIN = 0.8


def title_time(title: str | None, now: datetime, tz: str | tzinfo = "UTC") -> TimeMatch | None:
    """The calendar time a title or heading names (the narrowest, then the first), or None."""
    if not title or not title.strip():
        return None
    found = [
        t
        for t in parse_time(title, now, tz)
        if t.kind in TITLE_KINDS and t.confidence >= TITLE_CONFIDENCE_MIN
    ]
    if not found:
        return None
    return min(found, key=lambda t: (t.end - t.start, t.pos[0]))


def text_time(
    titles: list[str | None],
    body: str,
    now: datetime,
    tz: str | tzinfo = "UTC",
    *,
    body_confidence_min: float = 0.5,
    written: datetime | None = None,
) -> TimeMatch | None:
    """The time of a text: the first of ``titles`` (most specific first, e.g. a section heading,
    then the document title) that names a date, else the day it was ``written`` (its source
    date: front matter, an e-mail header), refined by a narrower body date inside it; else the
    body's most confident date (at least ``body_confidence_min``); else None."""
    # Year-less titles and relative body dates are read around the day the text was written,
    # else around the date a later title gives with its year (a file name "2024-02-01 plan.md":
    # a heading "Plan (1 Feb)" is 2024's, not this year's; as source_dated reads them).
    if written is not None:
        now = written
    else:
        for x in reversed(titles):
            named = title_time(x, now, tz)
            if named is not None:
                now = named.start
    own = next((t for t in (title_time(x, now, tz) for x in titles) if t is not None), None)
    if (
        own is not None
        and written is not None
        and own.end - own.start > timedelta(days=1)
        and own.start <= written < own.end
    ):
        own = None  # a title naming a period the text was written in ("2025年度年会安排"): its day
    if own is None and written is not None:
        span = day_span(written, tz)
        own = TimeMatch(start=span.start, end=span.end, confidence=span.confidence,
                        text=span.text, pos=(0, 0))  # fmt: skip
    found = best_time(body, now, tz) if body else None
    if found is not None and found.confidence < body_confidence_min:
        found = None
    if own is None:
        return found
    if (
        found is not None
        and own.start <= found.start
        and found.end <= own.end
        and found.end - found.start < own.end - own.start
    ):
        return found
    return own


def day_span(when: datetime, tz: str | tzinfo = "UTC", confidence: float = 0.95) -> TimeSpan:
    """The calendar day of ``when`` in ``tz``."""
    local = when.astimezone(resolve_tz(tz))
    day = local.replace(hour=0, minute=0, second=0, microsecond=0)
    text = f"{day.day} {day:%B %Y}"
    return TimeSpan(start=day, end=day + timedelta(days=1), confidence=confidence, text=text)


def date_drafts(
    drafts: list[EpisodeDraft], doc: ParsedDocument, tz: str | tzinfo = "UTC"
) -> list[EpisodeDraft]:
    """Drafts an extractor left undated, dated by the same rules as the rules extractor: the
    session of their first cited turn (a conversation), else their section heading, the
    document's title and file name, then the cited text (:func:`text_time`)."""
    chunks = {c.key: c for c in doc.chunks}
    out = []
    for draft in drafts:
        cited = [chunks[k] for k in draft.sources if k in chunks]
        if draft.time is not None or not cited:
            out.append(draft)
            continue
        span: TimeSpan | None = None
        session = next((doc.sessions[c.session] for c in cited if c.session is not None
                        and 0 <= c.session < len(doc.sessions)), None)  # fmt: skip
        if session is not None and session.started_at is not None:
            span = day_span(session.started_at, tz)
        elif not doc.sessions:
            titles = [cited[0].section, doc.title, PurePath(doc.source).name]
            body = " ".join(c.text for c in cited)[:6000]
            found = text_time(titles, body, doc.reference_time, tz, written=cited[0].timestamp)
            span = found.to_span() if found is not None else None
        out.append(draft.model_copy(update={"time": span}) if span is not None else draft)
    return out


# ---------------------------------------------------------------- the document's own dates

# A YAML front matter block: "---" on the first line, "key: value" lines, "---" (or "...").
_FRONT_OPEN = re.compile(r"\A\ufeff?---[ \t]*\n")
_FRONT_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
_FIELD = re.compile(
    r"^(?P<key>[A-Za-z_][\w -]{0,40}?|[\u3400-\u9fff]{1,6})\s*[:：]\s*(?P<value>.*)$"
)
# The front matter keys that date a note, best first.
DATE_KEYS = ("date", "created", "created_at", "published", "updated", "modified", "last_modified")
# E-mail headers (English and Chinese mail clients): a block of them opens the text.
_MAIL_KEYS = {
    "from": "from", "to": "to", "cc": "cc", "bcc": "bcc", "date": "date", "sent": "date",
    "subject": "subject", "reply-to": "reply-to", "message-id": "message-id",
    "发件人": "from", "收件人": "to", "抄送": "cc", "日期": "date", "时间": "date",
    "发送时间": "date", "主题": "subject",
}  # fmt: skip
HEAD_LINES_MAX = 60


@dataclass(frozen=True)
class DocumentHead:
    """What opens a note or an e-mail before its text: its fields, the text after them, the date
    it gives itself and its title (``title:`` or the e-mail's subject)."""

    kind: str  # "front_matter" | "email"
    body: str
    fields: dict[str, str] = field(default_factory=dict)
    written: datetime | None = None
    title: str | None = None


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1].strip()
    return value


def _front_matter(text: str) -> DocumentHead | None:
    opened = _FRONT_OPEN.match(text)
    if opened is None:
        return None
    close = _FRONT_CLOSE.search(text, opened.end())
    if close is None or text.count("\n", opened.end(), close.start()) > HEAD_LINES_MAX:
        return None
    fields: dict[str, str] = {}
    for line in text[opened.end() : close.start()].splitlines():
        m = _FIELD.match(line.strip())
        if m and m.group("value").strip():
            fields.setdefault(m.group("key").strip().lower(), _unquote(m.group("value")))
    if not fields:
        return None
    written = next(
        (w for k in DATE_KEYS if k in fields and (w := parse_timestamp(fields[k])) is not None),
        None,
    )
    body = text[close.end() :].lstrip("\n")
    return DocumentHead("front_matter", body, fields, written, fields.get("title") or None)


def _email(text: str) -> DocumentHead | None:
    fields: dict[str, str] = {}
    lines = text.lstrip("\ufeff").split("\n")
    last = None
    end = 0
    for i, line in enumerate(lines[:HEAD_LINES_MAX]):
        if not line.strip():
            end = i
            break
        if line[:1] in " \t" and last is not None:  # a folded header line
            fields[last] += " " + line.strip()
            continue
        m = _FIELD.match(line.strip())
        key = _MAIL_KEYS.get(m.group("key").strip().lower()) if m else None
        if m is None or key is None:
            return None
        fields.setdefault(key, m.group("value").strip())
        last = key
    else:
        return None
    if "date" not in fields or not ({"from", "subject", "to"} & fields.keys()):
        return None
    body = "\n".join(lines[end + 1 :]).strip("\n")
    if not body.strip():
        return None
    return DocumentHead(
        "email", body, fields, parse_timestamp(fields["date"]), fields.get("subject") or None
    )


# A date field near the top of a ticket or a form ("Opened: 2023-11-07   Assignee: …").
_DATE_FIELD = re.compile(
    r"(?:^|\s)(?:created|opened|reported|filed|date|updated|创建(?:时间|日期)?|提交(?:时间|日期)?|申请(?:时间|日期)|日期)\s*[:：]\s*"
    r"(?P<v>\d{4}[-/.年]\d{1,2}[-/.月]\d{1,2}日?(?:[ T]\d{1,2}:\d{2})?)",
    re.IGNORECASE,
)
FIELD_LINES = 5


def _date_field(text: str) -> DocumentHead | None:
    top = "\n".join(text.lstrip().splitlines()[:FIELD_LINES])
    m = _DATE_FIELD.search(top)
    when = parse_timestamp(m.group("v")) if m else None
    return DocumentHead("fields", text, {"date": m.group("v")}, when) if m and when else None


def document_head(text: str) -> DocumentHead | None:
    """The YAML front matter or the e-mail header block that opens ``text``, or (the text kept
    whole) a date field among its first lines: "Created: 2024-05-02"; or None."""
    return _front_matter(text) or _email(text) or _date_field(text)


def source_dated(
    chunks: list[Chunk],
    titles: list[str | None],
    now: datetime,
    tz: str | tzinfo = "UTC",
    *,
    written: datetime | None = None,
) -> list[Chunk]:
    """A note's chunks, each without a time of its own given the day its source says it was
    written: its section heading's date (the deepest heading that names one; one naming only a
    period yields to ``written`` and to a document date inside it), else ``written``
    (front matter, e-mail header), else the first of ``titles`` (the document title, its file
    name) that names a date. A chunk with no such date keeps no time (its document's reference
    time dates it when stored)."""
    doc_time: datetime | None = written
    # The document names the day it was written (a header, front matter, a title or file name
    # naming a day, not only a year or a month).
    own_day = written is not None
    if doc_time is None:
        # A file name date carries its year ("2024-02-01 planning.md"): read the titles around
        # it, so a heading "Planning – 1 Feb" is 2024's, not this year's.
        for x in reversed(titles):
            found = title_time(x, doc_time or now, tz)
            if found is not None:
                doc_time, own_day = found.start, found.end - found.start <= timedelta(days=1)
    anchor = doc_time or now
    by_section: dict[str | None, datetime | None] = {}
    out: list[Chunk] = []
    for c in chunks:
        if c.timestamp is not None:
            out.append(c)
            continue
        if c.section not in by_section:
            heads = list(reversed((c.section or "").split(" > ")))
            found = next(
                (t for t in (title_time(h, anchor, tz) for h in heads) if t is not None), None
            )
            by_section[c.section] = _section_day(found, doc_time, own_day)
        when = by_section[c.section]
        out.append(c.model_copy(update={"timestamp": when}) if when is not None else c)
    return out


def _section_day(
    found: TimeMatch | None, doc_time: datetime | None, own_day: bool
) -> datetime | None:
    """The day a section was written: its heading's date, unless the heading names only a
    period (a month, a quarter: "Q3 plan" says what the section is about) and the document
    says its own day (front matter, an e-mail header, a title or file name naming a day: "##
    Q3" in "2025-06-02 planning.md" was written on 2 June) or a day inside that period."""
    if found is None:
        return doc_time
    period = found.end - found.start > timedelta(days=1)
    if doc_time is not None and period and (own_day or found.start <= doc_time < found.end):
        return doc_time
    return found.start


__all__ = [
    "DATE_KEYS",
    "TITLE_CONFIDENCE_MIN",
    "TITLE_KINDS",
    "DocumentHead",
    "date_drafts",
    "day_span",
    "document_head",
    "source_dated",
    "text_time",
    "title_time",
]
