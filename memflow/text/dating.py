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
"""

from __future__ import annotations

from datetime import datetime, timedelta, tzinfo
from pathlib import PurePath

from memflow.drafts import EpisodeDraft, TimeSpan
from memflow.text.document import ParsedDocument
from memflow.text.timeparse import TimeMatch, best_time, parse_time, resolve_tz

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
) -> TimeMatch | None:
    """The time of a text: the first of ``titles`` (most specific first, e.g. a section heading,
    then the document title) that names a date, refined by a narrower body date inside it; else
    the body's most confident date (at least ``body_confidence_min``); else None."""
    own = next((t for t in (title_time(x, now, tz) for x in titles) if t is not None), None)
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
            found = text_time(titles, body, doc.reference_time, tz)
            span = found.to_span() if found is not None else None
        out.append(draft.model_copy(update={"time": span}) if span is not None else draft)
    return out


__all__ = [
    "TITLE_CONFIDENCE_MIN",
    "TITLE_KINDS",
    "date_drafts",
    "day_span",
    "text_time",
    "title_time",
]
