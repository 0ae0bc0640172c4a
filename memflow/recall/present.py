"""Present-tense questions get the present (issue 26, part 2): of two statements that answer the
same question with different values, the newer comes first and the older is marked possibly
outdated, whether or not anything closed it. Pure: it reads only what the search fetched.

Applies to a question that names no date and does not name the past
(:func:`memflow.text.tense.asks_about_the_past`): "Which broker do we use?" asks about today;
so does one only put in the past tense, unless it asks when ("How many films did I watch?" asks
what the memory holds now; "When did we meet?" asks of an event: ``present_past_tense``). Two points of the search's graph answer the same question with different values
when

- the write path **linked** them (:mod:`memflow.store.conflicts`: their statements, values
  masked, mean the same and one value differs), unless all they share is a clause of one
  template ("…, owner: X" / "Owner: Y") and their notes are about two things, or
- both are among the best recalled points (within ``present_margin`` of the best point's unit
  score: both answer it) and the newer gives **another value** of the kind the question asks
  for ("When …": a date or time; "Who …": a name; "How many …": a count or amount:
  :func:`memflow.text.conflict.answers_differ`), about the same thing; or, when the question
  itself says "now" / "currently" / "现在", they share most of their content words
  (``present_overlap``).

- asked in the present tense, a later source **takes the best answer up** again: it names what
  the best answer's source says beyond the question's words, and gives another value of a kind
  that source gives (``present_mention``); its statements among the best recalled that day
  come first together.

- two versions of one document (titles the same but for their dates and version numbers)
  both answer it: each line of the older that a line of the newer speaks of again in other
  words is outdated by it (``present_versions``).

A question in the present tense naming a time that a statement was said before the end of
("the plan for Q3", said in May or in August) asks what holds for it: a later statement
outdates that one as above (``present_planned``); one said after it is a report of it.
A question asking where something stands ("Where are we with …?", "status", "进展") asks
about now as if it said so: a status has no form of its own, each statement of it is one.
Another value outdates one answer per older source (its statement nearest the question, and
those of it naming that answer's value again), not its greeting, signature or other items; a
value the question names itself (a ticket's id) is what it asks about, never an answer. A
later statement that places its value in a year before the older was said tells of the past
("the rent was £950 when we moved in in 2021"): it outdates nothing; nor does one naming only
other years than the question ("for 2026 I've asked for …" asked of 2025's budget).

The one said later (record time: the sources' own dates; a source memorised without a date of
its own counts from the day its episode starts) is the newer. An unrelated statement is
never moved: a pair needs a link, another value of the same thing, or (asked "now") the same
words; then the newer takes the older's place, no further.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from itertools import pairwise
from typing import Any
from uuid import UUID

from memflow.recall.config import RecallConfig
from memflow.recall.types import GraphNode, Subgraph, first_document
from memflow.text.conflict import (
    aligned_change,
    answers_differ,
    any_kind,
    asked_kinds,
    asks_who,
    asserted,
    cued,
    difference,
    labelled_place,
    said_by,
    stated,
    told_over,
    unsure,
)
from memflow.text.revision import content_keys
from memflow.text.slots import (
    TEMPLATE_KEYS,
    aligned_words,
    same_topic,
    slot_terms,
)
from memflow.text.supersede import strip_speaker
from memflow.text.tense import asks_about_the_past, asks_about_the_present, asks_in_the_past
from memflow.text.values import Value, is_zh, masked, values

# What a possibly outdated statement is followed by in a context: "<text> [possibly outdated:
# restated 2024-10-20]".
OUTDATED_MARK = "[possibly outdated: restated"


@dataclass(frozen=True)
class Outdated:
    """A point a newer one gives another value for: the newer point, its day, and what paired
    them ("closed": a closure; "link": the write path; "value": another value; "wording": the
    same words)."""

    newer: UUID
    day: str
    how: str
    # The older statement answers this question (among the best recalled): the newer takes its
    # place. A statement outdated elsewhere in the results is only marked.
    near: bool = True
    # "taken up": the newer one's source's statements that answer the question, in the order
    # they take the older's place (the newer among them); empty: the newer alone.
    order: tuple[UUID, ...] = ()
    # False for a "rival" pair sharing no word: the newer is only placed first.
    marked: bool = True

    def mark(self, text: str) -> str:
        return f"{text} {OUTDATED_MARK} {self.day}]"


def applies(query: str | None, dated: bool, config: RecallConfig) -> bool:
    """Whether ``query`` asks about the present (see the module docstring)."""
    if not query or not config.present_order or dated or asks_about_the_past(query):
        return False
    if not asks_in_the_past(query):
        return True
    # Only put in the past tense: what the memory holds now, unless it asks when something
    # happened (RecallConfig.present_past_tense).
    return config.present_past_tense and "when" not in asked_kinds(query)


def _when(node: GraphNode, times: Mapping[UUID, Mapping[str, object]]) -> datetime | None:
    t = times.get(node.id, {}).get("recorded_at")
    if isinstance(t, datetime):
        return t
    return node.created_at


def _text(node: GraphNode, name_speaker: bool = False) -> str:
    bare = strip_speaker(node.search_text or node.name, node.speaker)
    return said_by(bare, node.speaker) if name_speaker else bare


@lru_cache(maxsize=4096)
def _word(word: str) -> re.Pattern[str]:
    """``word`` as a whole word, compiled once (re's own cache is small for a search's terms)."""
    return re.compile(rf"\b{re.escape(word)}\b")


def _keys(text: str) -> frozenset[str]:
    """What ``text`` says in words: its content words (names too), not its numbers with their
    units ("8万元" gives "差旅：8万元" no word "万元")."""
    for v in values(text):
        if v.family.startswith("amount") or v.family == "count":
            text = text.replace(v.text, " ")
    return frozenset(content_keys(text, []))


def _wording(a: str, b: str, overlap: float) -> bool:
    ka = _keys(a)
    kb = _keys(b)
    small = min(len(ka), len(kb))
    return a != b and small >= 2 and len(ka & kb) >= overlap * small


def outdated_points(
    query: str | None,
    subgraph: Subgraph,
    scores: Mapping[UUID, float],
    config: RecallConfig,
    *,
    dated: bool = False,
    named: datetime | None = None,
    now: datetime | None = None,
) -> dict[UUID, Outdated]:
    """The points of ``subgraph`` that a newer point of it answers differently, for a question
    about the present (``scores``: the recalled points' unit scores); {} for any other. A
    question naming a time (``dated``) that ends at ``named`` asks what holds for it: a
    statement said before it ends (a plan for Q3, said in May or in August) is outdated by a
    later one as for the present.
    ``now``: the present (default: the clock's)."""
    ahead = (
        dated and named is not None and config.present_planned and not asks_in_the_past(query or "")
    )
    if not applies(query, dated and not ahead, config) or not subgraph.times:
        return {}  # no times yet (the first ranking, before node_times): nothing to order
    up = _parents(subgraph)
    nodes, times = subgraph.nodes, _said_times(subgraph, up)
    pairs: list[tuple[UUID, UUID, str]] = []  # (older, newer, how)
    for node_id, t in times.items():  # closed, and its replacement is in the search too
        heir = t.get("superseded_by")
        if t.get("invalid_at") is not None and heir in nodes and node_id in nodes:
            pairs.append((node_id, heir, "closed"))
    links: list[tuple[UUID, UUID]] = []
    for node_id, linked in subgraph.links.items():
        for other, role in linked:
            if node_id in nodes and other in nodes:
                links.append((other, node_id) if role == "restates" else (node_id, other))
    # Equal scores go by what is said, never by an id that differs from one ingest to the next.
    kinds = asked_kinds(query or "")
    ranked = sorted(
        ((s, p) for p, s in scores.items() if p in nodes and nodes[p].kind == "FacetPoint"),
        key=lambda sp: (sp[0], nodes[sp[1]].search_text or nodes[sp[1]].name),
    )
    best = ranked[0][0] if ranked else 0.0
    reach = max(config.present_margin, config.present_reach)
    near = [p for s, p in ranked if s <= best + reach][: config.present_pool]
    # A source that takes the answer up brings its other answers along: before the pairs
    # read from two statements alone (of one day, the first pair found marks).
    # (of the few points compared, read when first compared)
    abouts: dict[UUID, str] = {}

    def about(p: UUID) -> str:
        found = abouts.get(p)
        if found is None:
            found = abouts[p] = _about(p, subgraph, up)
        return found

    def one_topic(older: UUID, newer: UUID, clauses: bool = False) -> bool:
        # "Owner: X" in two notes about two things: not one fact told twice
        a, b = nodes[older], nodes[newer]
        return same_topic(
            _text(a), _text(b), about(older), about(newer), TEMPLATE_KEYS, clauses=clauses
        )

    # The write path's links too: "Owner: X" in two notes about two things was linked as one
    # statement told twice with another value (issue 29: a budget's owner and a survey's).
    pairs += [(older, newer, "link") for older, newer in links if one_topic(older, newer, True)]
    taken = [t for t in _taken_up(query or "", near, nodes, times, config) if one_topic(*t[:2])]
    pairs += [(older, newer, "taken up") for older, newer, _ in taken]
    pairs += [
        (older, newer, how)
        for older, newer, how in _answer_pairs(query or "", near, ranked, nodes, times, config)
        if one_topic(older, newer)
    ]
    pairs += _versions(near, subgraph, up, times, config.present_versions)
    # Placed first only: after every pair that marks (a pair that marks wins over it).
    rival = _rival_pair(query or "", kinds, ranked, nodes, times, config)
    told, asked = {p: _text(nodes[p]) for p in near}, _keys(query or "")
    pairs += [
        (older, newer, how)
        for older, newer, how in rival
        if one_topic(older, newer)
        # (a quote's lamp re-priced: no rival answer about its desk)
        and not (
            older in told
            and newer in told
            and _other_item(older, newer, near, told, nodes, times, kinds, asked)
        )
    ]
    order = {(older, newer): seq for older, newer, seq in taken}
    answering = set(near)
    spans, projects = _spans(query or ""), _zh_subjects(query or "")
    years = _years(query or "")
    owners = _owners(query or "")
    whose = _zh_owner(query or "")
    who = "name" in kinds
    today = now or datetime.now(UTC)
    out: dict[UUID, Outdated] = {}
    for older, newer, how in pairs:
        tn, to = _when(nodes[newer], times), _when(nodes[older], times)
        if tn is None or to is None or tn <= to:
            continue
        if how != "closed" and any(_elsewhen(_text(nodes[p]), spans) for p in (older, newer)):
            continue  # "Q2 spend closed at $31,260" answers nothing of Q3's budget
        if how not in ("closed", "link") and _another_subject(_text(nodes[newer]), projects):
            continue  # "智能客服项目推迟到…" asked of 会员积分项目
        if how != "closed" and _elsewhen_year(_text(nodes[newer]), years):
            continue  # "for 2026 I've asked for £8,000" asked of 2025's budget
        if how != "closed" and _someone_elses(nodes[newer], owners):
            continue  # "Bram: mine is due 9 June now" asked of Oriel's thesis
        if how != "closed" and _another_row(nodes[older], nodes[newer], whose):
            continue  # "新来的实习生莫辞，储物柜 26号" asked of 蒋澄's locker ("蒋澄：储物柜 24号")
        if how != "closed" and _text(nodes[older]) == _text(nodes[newer]):
            continue  # "Hi Ambrose," in two e-mails: said again, nothing changed
        said_old, said_new = _text(nodes[older], who), _text(nodes[newer], who)
        if how in ("link", "wording") and _other_attribute(said_old, said_new, kinds):
            continue  # "书展改到图书馆副楼" asked when: the date still holds
        if how != "closed" and _other_labelled(said_old, said_new, kinds, asked):
            continue  # "the remaining amount is now £420" asked of the booking fee
        if ahead and named is not None and to >= named:
            continue  # the older said after the time asked about: a report, that time decides
        if how not in ("closed", "link") and _recalls(_text(nodes[newer]), to):
            continue  # "the rent was £950 when we moved in in 2021": history, not a new value
        if (
            not ahead
            and how not in ("closed", "link")
            and _passing(
                _text(nodes[newer]),
                _text(nodes[older]),
                tn,
                today,
                config.present_passing_days,
                config.present_once_days,
            )
        ):
            continue  # "暑假（7月10日—8月20日）托管到 16:30": that holiday's hours, not the usual
        held = out.get(older)
        if held is not None and how == "rival":
            continue  # only the order: a pair that marks decides
        if held is not None and held.marked and (_when(nodes[held.newer], times) or tn) >= tn:
            continue  # the newest restatement marks it
        # A closed statement ranks low (its penalty): its replacement answering is enough.
        answers = older in answering or (how == "closed" and newer in answering)
        seq = order.get((older, newer), ()) if how == "taken up" else ()
        # A rival pair marks when the two share a word the question does not give: one thing
        # told twice (session 16: one change case more marked on the tune halves of sets 1-8,
        # no control marked; marking every rival pair marked three tune controls, and a word of
        # the question shared ("quiz") one control of set 9's tune half).
        marks = how != "rival" or bool((_keys(said_old) & _keys(said_new)) - asked)
        out[older] = Outdated(newer, tn.date().isoformat(), how, answers, seq, marks)
    return out


def _owners(text: str) -> set[str]:
    """The people whose thing ``text`` speaks of ("When is Oriel's thesis due?"): a name with its
    "'s" (the last word of a name :func:`values` reads: "What's Oriel" ends with it)."""
    names = [v.norm for v in values(text) if v.family == "name"]
    return {
        m
        for m in (w.lower() for w in _POSSESSOR.findall(text))
        if any(n == m or n.endswith(" " + m) for n in names)
    }


# A capitalised word with its "'s" ("Oriel's thesis", "Morvah's got …"), not a question word or
# a pronoun with its verb ("What's", "It's").
_POSSESSOR = re.compile(
    r"\b(?!(?:What|Who|Where|When|Why|How|It|That|There|Here|He|She|This|Let|Today)['’]s)"
    r"([A-Z][\w-]+)['’]s\b"
)
_MINE = re.compile(r"\b(?:my|mine)\b", re.IGNORECASE)


def _someone_elses(node: GraphNode, owners: set[str]) -> bool:
    """Whether ``node`` tells of another person's thing than the question asks of: another
    person named as its owner ("Morvah's got a new number") and the one asked of not, or its
    speaker's own ("mine is due …", "my flight …"): another person's value, not a change."""
    if not owners:
        return False
    text = _text(node)
    named = _owners(text)
    if named and not named & owners:
        return True
    speaker = (node.speaker or "").strip().lower()
    if not speaker or any(o in speaker for o in owners):
        return False
    return bool(_MINE.search(text))


# A Chinese question about someone's thing: "蒋澄的储物柜是几号？" (two or three characters and 的).
_ZH_OWNER = re.compile(r"^(?:请问)?([\u4e00-\u9fff]{2,3}?)的")


def _zh_owner(query: str) -> str:
    m = _ZH_OWNER.match(query.strip())
    return m.group(1) if m else ""


def _another_row(older: GraphNode, newer: GraphNode, whose: str) -> bool:
    """Whether ``older`` is a row of the person the question asks of ("蒋澄：储物柜 24号", or said
    by them) and ``newer`` names them nowhere, nor is said by them: another person's row."""
    if not whose:
        return False
    said = _text(older)
    own = said.startswith((whose + "：", whose + ":")) or whose in (older.speaker or "")
    return own and whose not in _text(newer) and whose not in (newer.speaker or "")


def _spans(text: str) -> list[tuple[str, str]]:
    """The dates ``text`` names, as (start, end) month-day spans ("Q3": 07-01 to 10-01)."""
    out = []
    for v in values(text):
        start, _, end = v.norm.partition("/")
        if v.kind == "date" and start and end:
            out.append((start, end))
    return out


def _years(text: str) -> set[int]:
    return {int(y) for y in _YEAR.findall(text)}


def _elsewhen_year(text: str, asked: set[int]) -> bool:
    """Whether ``text`` names years, none of them one the question names ("for 2026 …" asked
    of 2025's budget)."""
    own = _years(text)
    return bool(asked and own and not asked & own)


def _elsewhen(text: str, asked: list[tuple[str, str]]) -> bool:
    """Whether ``text`` speaks of another time than the question names: it names dates, none
    of them within the question's ("Q2 spend …" asked of Q3's budget)."""
    if not asked:
        return False
    own = _spans(text)
    if not own:
        return False
    return not any(a < be and b < ae for a, ae in asked for b, be in own)


_YEAR = re.compile(r"(?<!\d)((?:19|20)\d{2})(?:年|(?!\d))")


# What joins the two ends of a period: "1 July to 30 June", "1月24日—2月22日".
_PERIOD_JOIN = re.compile(r"\s*(?:to|until|till|through|thru|and|[-–—~～至到])\s*", re.IGNORECASE)


# An exception said as one ("this Sunday only", "back to normal next week", "仅限本周"): a
# week from when it was said.
_ONCE = re.compile(
    r"\b(?:this (?:\w+day|week|weekend|time) only|only (?:this|for this) (?:\w+day|week|weekend|"
    r"time)|just (?:this|for this) (?:\w+day|week|weekend|once)|back to normal)\b|"
    r"仅限?(?:本|这)周|只有?(?:这|本)(?:周|次)|(?:这|本)周[一二三四五六日天]?例外|下周恢复|恢复正常",
    re.IGNORECASE,
)


def _period(text: str, said: datetime, once_days: int = 0) -> tuple[date, date] | None:
    """The period ``text`` names by its two ends (two dates joined by "to", "–", "至" …), in
    the year ``text`` names or the one it was said in, or as an exception ("this Saturday
    only": ``once_days`` from when it was said); None when it names none."""
    if once_days and _ONCE.search(text):
        return said.date(), said.date() + timedelta(days=once_days)
    found = [v for v in values(text) if v.kind == "date" and "/" in v.norm]
    for a, b in pairwise(found):
        if not _PERIOD_JOIN.fullmatch(text[a.end : b.start]):
            continue
        ends = []
        for v in (a, b):
            month, day = v.norm.split("/")[0].split("-")
            year = _YEAR.search(v.text)
            try:
                ends.append(date(int(year.group(1)) if year else said.year, int(month), int(day)))
            except ValueError:
                break
        if len(ends) == 2:
            start, end = ends
            if end < start and not _YEAR.search(b.text):
                end = end.replace(year=end.year + 1)
            if start <= end:
                return start, end
    return None


def _passing(
    new: str, old: str, said: datetime, now: datetime, days: int, once_days: int = 0
) -> bool:
    """Whether ``new`` (said on ``said``) tells of a short period that does not hold ``now``
    (a holiday's hours) against ``old``, a value said with no period of its own: an exception
    in that period, not a change of the standing value."""
    if days <= 0:
        return False
    period = _period(new, said, once_days)
    if period is None or _period(old, said, once_days) is not None:
        return False
    start, end = period
    return (end - start).days <= days and not start <= now.date() <= end


# "back when we used X", "想当年用快批的时候": what it says is told of the past.
_BACK_THEN = re.compile(
    r"\b(?:back when|back in the day|in the old days|in those days)\b|想当年|那时候|那会儿|"
    # what was said before, said again ("as I said, …"): no new value of its own
    r"\b(?:as|like) (?:I|we) (?:said|mentioned)\b|\bas mentioned\b|我之前说了|我说过|之前说过|前面说了",
    re.IGNORECASE,
)


def _recalls(text: str, older: datetime) -> bool:
    """Whether ``text`` places what it says in a year before the older statement was said, or
    says it tells of those days ("back when …", "想当年"), and names no present: it tells of the
    past, not of a value that came later."""
    if _BACK_THEN.search(text) and not asks_about_the_present(text):
        return True
    years = [int(y) for y in _YEAR.findall(text)]
    return bool(years) and max(years) < older.year


_PARTS = ("has_facet", "has_point", "has_key_point", "has_context_point")
# A record time this close to the row's write time is the write time: the source gave no date.
_WRITTEN = timedelta(hours=1)


def _said_times(subgraph: Subgraph, up: Mapping[UUID, list[UUID]]) -> dict[UUID, dict[str, Any]]:
    """The nodes' times, with the record time of a point whose source gave no date of its own
    (recorded when it was memorised) replaced by the day its episode starts when that is
    earlier (a ticket "Opened 2024-11-04", memorised today, was said then, not today): two
    sources are ordered by when they were said, not by when they were memorised (``up``:
    :func:`_parents`)."""
    nodes, times = subgraph.nodes, subgraph.times
    out: dict[UUID, dict[str, Any]] = dict(times)
    for p, t in times.items():
        node, rec = nodes.get(p), t.get("recorded_at")
        if node is None or node.kind != "FacetPoint" or not isinstance(rec, datetime):
            continue
        if node.created_at is None or abs(rec - node.created_at) > _WRITTEN:
            continue
        episode = _episode(p, up, nodes)
        start = episode.time_start if episode is not None else None
        if start is not None and start.date() < rec.date():
            out[p] = {**t, "recorded_at": start}
    return out


def _parents(subgraph: Subgraph) -> dict[UUID, list[UUID]]:
    """Each node of ``subgraph`` -> the nodes it is a part of (a point's facet, its episode)."""
    up: dict[UUID, list[UUID]] = {}
    for e in subgraph.edges:
        if e.relationship in _PARTS:
            up.setdefault(e.dst, []).append(e.src)
    return up


def _episode(
    p: UUID, up: Mapping[UUID, list[UUID]], nodes: Mapping[UUID, GraphNode]
) -> GraphNode | None:
    """The episode point ``p`` belongs to (its source), if the search fetched it."""
    seen, todo = {p}, list(up.get(p, ()))
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        node = nodes.get(n)
        if node is not None and node.kind == "Episode":
            return node
        todo += up.get(n, ())
    return None


def _titles(
    subgraph: Subgraph, up: Mapping[UUID, list[UUID]], points: list[UUID]
) -> dict[UUID, str]:
    """The name of the episode each of ``points`` belongs to (its document's title)."""
    return {p: e.name for p in points if (e := _episode(p, up, subgraph.nodes)) is not None}


_VERSION = re.compile(
    r"\bv(?:er(?:sion)?)?\.?\s*\d+(?:\.\d+)*\b|版本?\s*\d+|第?\d+版", re.IGNORECASE
)


_PLACEHOLDER = re.compile(r"\[[^\]]*\]")


def _title_keys(title: str) -> frozenset[str]:
    """What a document's title says besides its dates and version numbers."""
    return _keys(_PLACEHOLDER.sub(" ", masked(_VERSION.sub(" ", title))))


def _versions(
    near: list[UUID],
    subgraph: Subgraph,
    up: Mapping[UUID, list[UUID]],
    times: Mapping[UUID, Mapping[str, object]],
    alike: float,
) -> list[tuple[UUID, UUID, str]]:
    """(older, newer, "version") of the best recalled points of two sources that are two
    versions of one document (``RecallConfig.present_versions``): their titles differ only in
    their dates and version numbers (content words this alike, Jaccard) and the newer source was
    said on a later day; the older statement and the newer speak of one thing in other words
    (of the older's lines, those sharing the most content words with the newer). A document written again is what holds now, line by line; a
    chat's sessions are not versions of each other (``up``: :func:`_parents`)."""
    if alike <= 0 or len(near) < 2:
        return []
    nodes = subgraph.nodes
    # A chat's turns (a speaker's) are not a document written again: each session adds to it.
    near = [p for p in near if not nodes[p].speaker]
    title = _titles(subgraph, up, near)
    keys = {p: _title_keys(t) for p, t in title.items()}
    when = {p: _when(nodes[p], times) for p in near}
    doc = {p: _document(nodes[p]) for p in near}
    # newer -> its older lines speaking of one thing, with the content words they share
    found: dict[UUID, list[tuple[int, UUID]]] = {}
    for older in near:
        for newer in near:
            to, tn = when[older], when[newer]
            if to is None or tn is None or tn.date() <= to.date() or doc[older] == doc[newer]:
                continue
            ka, kb = keys.get(older, frozenset()), keys.get(newer, frozenset())
            if not ka or not kb or len(ka & kb) < alike * len(ka | kb):
                continue
            if title[older] == title[newer]:
                continue  # one title, no date or version apart: two threads, not two versions
            a, b = _text(nodes[older]), _text(nodes[newer])
            if not (_keys(a) - _keys(title[older])) or not (_keys(b) - _keys(title[newer])):
                continue  # a title line ("People budget revision (DATE)") says no value
            if a != b and (shared := len(_keys(a) & _keys(b))):
                found.setdefault(newer, []).append((shared, older))
    # A newer line speaks again of the older lines it shares the most words with, not of every
    # line of the older version naming the same attribute ("负责人" of another item).
    return [
        (older, newer, "version")
        for newer, olders in found.items()
        for shared, older in olders
        if shared == max(n for n, _ in olders)
    ]


def _about(p: UUID, subgraph: Subgraph, up: Mapping[UUID, list[UUID]]) -> str:
    """What point ``p`` of ``subgraph`` is about beyond its own words: the names of the facet
    and the episode it belongs to (a note's heading and title); "" for any other node
    (``up``: :func:`_parents`)."""
    node = subgraph.nodes.get(p)
    if node is None or node.kind != "FacetPoint":
        return ""
    names, seen, todo = [], {p}, list(up.get(p, ()))
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if n in subgraph.nodes and subgraph.nodes[n].kind != "FacetPoint":
            names.append(subgraph.nodes[n].name)
        todo += up.get(n, ())
    return " ".join(names)


def _day(t: datetime | None) -> object:
    return t.date() if t is not None else None


def _document(node: GraphNode) -> object:
    """The document a point was said in (the point itself when it has no provenance)."""
    return first_document(node.sources) or node.id


def _taken_up(
    query: str,
    near: list[UUID],
    nodes: Mapping[UUID, GraphNode],
    times: Mapping[UUID, Mapping[str, object]],
    config: RecallConfig,
) -> list[tuple[UUID, UUID, tuple[UUID, ...]]]:
    """(older, newer, order) for a question put in the present tense: a statement of the
    source of the best recalled point (the question's answer) and a later one from another
    source that answers it too and names what the older one says beyond the question's own
    words (its answer: "we're on X" / "everything reports to Y now, deleted the X token").
    The later source takes the answer up again, whatever its wording; its statements among
    the best recalled that day come with it, those that do not name the older's answer first
    (they state what holds now)."""
    if not config.present_mention or len(near) < 2 or asks_in_the_past(query):
        return []
    asked = _keys(query)
    # What the question names ("When does Milos fly …?"): the later source must name it too.
    # (Not a category it names in capitals: "Which CI system …", "the HR tool".)
    subjects = [
        v.text.lower()
        for v in values(query)
        if v.family == "name" and not _CATEGORY.match(query, v.start)
    ]
    spans, named = _spans(query), _zh_subjects(query)
    keys = {p: _keys(_text(nodes[p])) for p in near}
    when = {p: _when(nodes[p], times) for p in near}
    doc = {p: _document(nodes[p]) for p in near}
    out: list[tuple[UUID, UUID, tuple[UUID, ...]]] = []
    kinds, now = asked_kinds(query), asks_about_the_present(query)
    who = "name" in kinds  # "聂青禾: …找我": the speaker names themself
    # the best answer's source: the only one taken up
    said = [_text(nodes[p]) for p in near if doc[p] == doc[near[0]]]
    for older in near:
        if doc[older] != doc[near[0]]:
            continue  # only the best answer's source is taken up (nothing else moves)
        answer = keys[older] - asked
        to = when[older]
        if not answer or to is None:
            continue
        for newer in near:
            tn = when[newer]
            if tn is None or doc[newer] == doc[older] or tn.date() <= to.date():
                continue
            if not answer & keys[newer]:
                continue
            same = [p for p in near if doc[p] == doc[newer] and _day(when[p]) == tn.date()]
            told = " ".join(_text(nodes[p]) for p in same).lower()
            if (
                not all(n in told for n in subjects)
                or _elsewhen(told, spans)
                or _another_subject(told, named)
            ):
                continue  # another person's trip, another quarter's figures, another project
            new = _new_values(said, [_text(nodes[p]) for p in same], kinds, tn, now)
            # ... of a kind the older statement gives or names again itself, when the question
            # asks for one ("Have the order slip ready by 9am" is taken up by no new delivery day;
            # "聂青禾: …找我" names the owner)
            if not new or (kinds and not _gives(_text(nodes[older], who), said, new)):
                continue
            # Naming the older's answer: its values ("down from 6,200", "Quillmoor itself is
            # closed"), or its words when it gives no value.
            was = [v.text.strip("$€£¥￥ ").lower() for v in values(_text(nodes[older]))]
            fresh = [
                p
                for p in same
                if (was or not answer & keys[p])
                and not any(len(w) > 1 and w in _text(nodes[p]).lower() for w in was)
            ]
            out.append((older, newer, tuple(fresh + [p for p in same if p not in fresh])))
    return out


# A name in capitals that only says which kind of thing the question asks about.
_CATEGORY = re.compile(r"[A-Z]{2,4}\s+(?:system|tool|platform|service|provider|team|app|stack)\b")


def _new_values(
    older: list[str],
    newer: list[str],
    kinds: frozenset[str],
    day: datetime,
    asked_now: bool = False,
) -> frozenset[str]:
    """The families (a time: its kind) of value that the statements ``newer`` (one source, said
    on ``day``) state and the statements ``older`` state too (of a kind the question asks for,
    when it names one; a name, when it names none), with a value none of them states: another
    answer, not the same one again, a side remark or a proposal ("if we moved to …",
    "rejected"); empty: none. ``asked_now``: the question says "now" (a lower-case word in a
    value slot is a value then: family "term")."""

    def found(texts: list[str]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for t in texts:
            if unsure(t):
                continue
            # A name no capital marks counts too, where a value stands ("we're on sqlite"), for
            # a question that asks for a name ("where", "which tool") now ("currently"): one that
            # names no kind is answered by any word (LoCoMo's chats, tune half), and without
            # "now" similarity decides between two places (tests/integration/test_temporal).
            terms = slot_terms(t) if asked_now and "name" in kinds else []
            for v in [*values(t), *terms]:
                if v.kind != "name:term" and not is_zh(t) and not stated(t, v):
                    continue  # "the Apple account": no value of anything
                if (not kinds or v.family in kinds) and v.norm not in own:
                    # (a time of day is no other date: each kind of time apart)
                    family = "term" if v.kind == "name:term" else v.family
                    family = v.kind if family == "when" else family
                    out.setdefault(family, set()).add(v.norm)
        return out

    # A date that is the day the newer source was said restates no value ("revision (DATE)").
    end = day + timedelta(days=1)
    own = {f"{day.month:02d}-{day.day:02d}/{end.month:02d}-{end.day:02d}"}
    was, now = found(older), found(newer)
    if not kinds:
        was.setdefault("name", set())  # a question naming no kind: a new name answers it
    # A lower-case word is another value only when the older statements never say it (a word
    # of theirs in a slot is the same thing, not another answer) and they state a name or one.
    said = " ".join(older).lower()
    terms = {t for t in now.pop("term", set()) if not _word(t).search(said)}
    out = {f for f in now.keys() & was.keys() if f != "term" and now[f] - was[f]}
    if terms and ("term" in was or "name" in was):
        out |= {"term", "name"}
    return frozenset(out)


def _gives(statement: str, source: list[str], families: frozenset[str]) -> bool:
    """Whether ``statement`` gives a value of one of ``families`` (a time: its kind), or names
    again one that a statement of its ``source`` gives ("聂青禾: …找我" after "由聂青禾负责")."""

    def family(v: Value) -> str:
        return v.kind if v.family == "when" else v.family

    if any(family(v) in families for v in values(statement)):
        return True
    low = statement.lower()
    return any(
        family(v) in families and len(v.text) > 1 and v.text.lower() in low
        for t in source
        for v in values(t)
    )


def _answer_pairs(
    query: str,
    near: list[UUID],
    ranked: list[tuple[float, UUID]],
    nodes: Mapping[UUID, GraphNode],
    times: Mapping[UUID, Mapping[str, object]],
    config: RecallConfig,
) -> list[tuple[UUID, UUID, str]]:
    """(older, newer, how) of the best recalled points that answer ``query`` differently."""
    if len(near) < 2:
        return []
    best = ranked[0][0]
    close = {p for s, p in ranked if s <= best + config.present_margin}
    # A question asking where something stands asks about now, whatever its words: a status
    # has no form of its own (kick-off booked / report received), each statement of it is one.
    loose = asks_about_the_present(query) or "status" in asked_kinds(query)
    # A question that names no kind of value ("What type of model am I working on?") may be
    # answered by any (RecallConfig.present_any_kind).
    kinds = asked_kinds(query) or (any_kind() if config.present_any_kind else frozenset())
    # "Who …?": a speaker saying "I" names themself (a new owner: "I'm looking after it now").
    text = {p: _text(nodes[p], "name" in kinds) for p in near}
    # "could we do the sync at 11:15?" / "+1" / "fine by me": a proposal others agreed to states
    # its value
    text.update(_agreed_proposals(near, nodes, times, text))
    # Only statements that give a value of a kind asked for can answer differently.
    answers = {p for p in near if any(v.family in kinds for v in values(text[p]))}
    asked = _keys(query) if loose else frozenset()
    subject = frozenset(v.norm for v in values(query))  # what it asks about
    out = _apart_pair(query, ranked, nodes, times, kinds, config)
    for i, a in enumerate(near):
        for b in near[i + 1 :]:
            ta, tb = _when(nodes[a], times), _when(nodes[b], times)
            if ta is None or tb is None or ta == tb:
                continue
            older, newer = (a, b) if ta < tb else (b, a)
            both_close = a in close and b in close
            if told_over(text[newer], text[older], kinds, subject):
                out.append((older, newer, "value"))
                continue
            if older in answers and newer in answers:
                got = answers_differ(text[newer], text[older], kinds, subject, asks_who(query))
                if got is not None and (
                    got.head > 0 or (got.cued and (not got.agreed or older in close))
                ):
                    out.append((older, newer, "value"))
                    continue
                if labelled_place(text[newer], text[older], query):
                    out.append((older, newer, "value"))  # "场地：云栖会展中心" asked where
                    continue
            # One statement but for a span no form marks as a value (a Chinese name, a product
            # in lower case): another answer to "who" / "which" / "where".
            if "name" in kinds and (
                aligned_change(text[newer], text[older]) is not None
                or _term_changed(text[newer], text[older])
            ):
                out.append((older, newer, "value"))
                continue
            # A lower-case name said to be the value now ("runs on nats now"), where the older
            # statement gave another.
            if "name" in kinds and _term_change(text[newer], text[older]):
                out.append((older, newer, "value"))
                continue
            if (
                loose
                and both_close
                and (
                    _wording(text[newer], text[older], config.present_overlap)
                    or (
                        config.present_subject
                        and bool(asked & _keys(text[newer]) & _keys(text[older]))
                    )
                )
            ):
                out.append((older, newer, "wording"))
    # Values: one answer per source. (Shared words are no answer of their own: every line of a
    # source that names what the question names is told again by the newer.)
    values_out = [
        p
        for p in out
        if p[2] == "value"
        and not _other_item(p[0], p[1], near, text, nodes, times, kinds, _keys(query))
        and not _another_rows(p[0], p[1], near, text, nodes, times, kinds, _keys(query))
    ]
    return [p for p in out if p[2] != "value"] + _one_per_source(values_out, ranked, nodes)


# A proposal's frame ("could we …?", "能不能…？") and a reply agreeing to it, or refusing it.
_PROPOSING = re.compile(
    r"\b(?:could|can|shall|should) we\b|\bhow about\b|\bwhat about\b|\bwhy don't we\b|"
    r",\s*(?:ok|okay|alright)(?=\s*\?)|\b(?:is that|would that be) (?:ok|okay|alright)\b|"
    r"\bwould that work\b|能不能|可不可以|可以不可以|要不要|要不|能否|是不是可以|"
    # a tag question asking for agreement: "…放到周五好吗？"
    r"(?:好|行|可以)吗(?=\s*[?？])|好不好|行不行",
    re.IGNORECASE,
)
_AGREEING = re.compile(
    r"^\W*(?:\+1|fine by me|works for me|sounds good|agreed|good idea|ok(?:ay)?|sure|yes|yep|"
    r"no (?:problem|objections?)|not a problem|"
    r"同意|赞成|可以|没问题|好的?|行)(?![a-z])",
    re.IGNORECASE,
)
_REFUSING = re.compile(
    r"\b(?:no|not|don't|can't|won't)\b|不行|不同意|反对|不可以|不好", re.IGNORECASE
)
AGREED_WITHIN = timedelta(hours=12)  # replies of one sitting


def _agreed_proposals(
    near: list[UUID],
    nodes: Mapping[UUID, GraphNode],
    times: Mapping[UUID, Mapping[str, object]],
    text: Mapping[UUID, str],
) -> dict[UUID, str]:
    """The proposals among ``near`` ("could we do the sync at 11:15?") that a later reply of the
    same conversation agrees to ("+1", "fine by me", "同意") and none refuses, each as the
    statement it became ("we do the sync at 11:15.")."""
    out: dict[UUID, str] = {}
    for p in near:
        said = text[p]
        if not (_PROPOSING.search(said) and re.search(r"[?？]", said)):
            continue
        doc, at = _document(nodes[p]), _when(nodes[p], times)
        if at is None:
            continue
        replies = [
            _text(n)
            for n in nodes.values()
            if n.kind == "FacetPoint"
            and n.id != p
            and _document(n) == doc
            and (t := _when(n, times)) is not None
            and at < t <= at + AGREED_WITHIN
        ]
        if any(_AGREEING.search(r) for r in replies) and not any(
            _REFUSING.search(r) and not _AGREEING.search(r) for r in replies
        ):
            out[p] = re.sub(r"[?？]", ".", _PROPOSING.sub("", said))
    return out


def _another_rows(
    older: UUID,
    newer: UUID,
    near: list[UUID],
    text: Mapping[UUID, str],
    nodes: Mapping[UUID, GraphNode],
    times: Mapping[UUID, Mapping[str, object]],
    kinds: frozenset[str],
    asked: frozenset[str],
) -> bool:
    """Whether every value of a kind asked that ``newer`` gives and ``older`` does not is one
    that another line of ``older``'s source gives, said the same day, while ``newer`` shares
    no word with ``older`` (words the question names aside): the value of that other row,
    named again ("no more patches for v2.2.5" against a table's "库存系统 | v5.0.1", whose
    "点餐系统 | v2.2.5" it names), not a new value of this one."""
    if (_keys(text[newer]) - asked) & _keys(text[older]):
        return False
    own = {v.norm for v in values(text[older])}
    new = {v.norm for v in values(text[newer]) if v.family in kinds} - own
    rows = [{v.norm for v in values(text[p])} for p in _said_with(older, newer, near, nodes, times)]
    return bool(new) and all(any(n in row for row in rows) for n in new)


def _said_with(
    older: UUID,
    newer: UUID,
    near: list[UUID],
    nodes: Mapping[UUID, GraphNode],
    times: Mapping[UUID, Mapping[str, object]],
) -> list[UUID]:
    """The other lines of ``near`` from ``older``'s source, said the same day as it (a chat's
    other days are not so): the rows and items it was written with."""
    doc, day = _document(nodes[older]), _day(_when(nodes[older], times))
    return [
        p
        for p in near
        if p not in (older, newer)
        and _document(nodes[p]) == doc
        and _day(_when(nodes[p], times)) == day
    ]


def _other_item(
    older: UUID,
    newer: UUID,
    near: list[UUID],
    text: Mapping[UUID, str],
    nodes: Mapping[UUID, GraphNode],
    times: Mapping[UUID, Mapping[str, object]],
    kinds: frozenset[str],
    asked: frozenset[str],
) -> bool:
    """Whether ``newer`` gives the value of another item of ``older``'s source: it shares no
    name and no word with ``older``, and names what another line of that source names, one
    that gives a value of a kind asked, said the same day ("the Belfast sink is now £455"
    against a quote's "oak worktop, fitted: £1,385" and "Belfast sink: £380"), words the
    question names aside."""
    said = _keys(text[newer]) - asked
    if said & _keys(text[older]) or _names(text[newer]) & _names(text[older]):
        return False
    own = {v.norm for v in values(text[older])}
    return any(
        said & _keys(text[p])
        and any(v.family in kinds for v in values(text[p]))
        # (not the line whose value it names again: "Escalations: Mirela Tosh as well.")
        and not own & {v.norm for v in values(text[p])}
        for p in _said_with(older, newer, near, nodes, times)
    )


# What a Chinese statement is about when it names it so: "会员积分项目", "报销系统".
_ZH_SUBJECT = re.compile(r"([\u4e00-\u9fff]{2,6}?)(?:项目|系统|平台|工程|活动|组(?!长)|部门)")


def _zh_subjects(text: str) -> set[str]:
    return {m.group(1) for m in _ZH_SUBJECT.finditer(text)}


def _another_subject(text: str, named: set[str]) -> bool:
    """Whether ``text`` names a project (system, platform …) and none the question names: it
    speaks of another one (no two characters in a row shared)."""
    own = _zh_subjects(text)
    if not named or not own:
        return False
    grams = {n[i : i + 2] for n in named for i in range(len(n) - 1)}
    return not any(o[i : i + 2] in grams for o in own for i in range(len(o) - 1))


def _names(text: str) -> set[str]:
    return {v.norm for v in values(text) if v.family == "name"}


def _one_per_source(
    pairs: list[tuple[UUID, UUID, str]],
    ranked: list[tuple[float, UUID]],
    nodes: Mapping[UUID, GraphNode],
) -> list[tuple[UUID, UUID, str]]:
    """Of the pairs of another value, for each newer statement the older
    source's statement nearest the question (its answer) and those of that source that state
    a value of the answer again ("On-call: Oskar" / "Status page: Oskar"). A source answers a
    question once; its other lines (a greeting, a signature, another item) are not that answer
    told again."""
    rank = {p: i for i, (_, p) in enumerate(ranked)}
    best: dict[tuple[UUID, object], UUID] = {}
    for older, newer, _ in pairs:
        key = (newer, _document(nodes[older]))
        if key not in best or rank.get(older, 1 << 30) < rank.get(best[key], 1 << 30):
            best[key] = older
    said = {p: {v.norm for v in values(_text(nodes[p]))} for p in best.values()}

    def keep(older: UUID, newer: UUID) -> bool:
        answer = best[(newer, _document(nodes[older]))]
        if older == answer:
            return True
        return bool(said[answer] & {v.norm for v in values(_text(nodes[older]))})

    return [pair for pair in pairs if keep(pair[0], pair[1])]


def _term_changed(new: str, old: str) -> bool:
    """One English statement but for one span of words no form marks as a value
    (:func:`memflow.text.slots.aligned_words`), the newer saying it changed ("is now lz4")."""
    if aligned_words(new, old) is None:
        return False
    got = difference(new, old)
    return got is not None and got.kind == "term" and got.cued


def _term_change(new: str, old: str) -> bool:
    """Whether ``new`` says that a word no form marks as a value is the value now (a change word
    next to it: "the jobs run on nats now") that ``old`` never says, and ``new`` names the word
    ``old`` stated in that slot."""
    new, old = asserted(new), asserted(old)
    if not new or not old or is_zh(new) or is_zh(old):
        return False
    low = old.lower()
    fresh = [v for v in slot_terms(new) if cued(new, v) and not _word(v.norm).search(low)]
    if not fresh:
        return False
    # The older states a value of its own in a slot that the newer names beside the new one
    # ("the beanstalkd box is switched off"): the same thing, another value.
    was = [v.norm for v in slot_terms(old)]
    return any(_word(w).search(new.lower()) for w in was)


def _apart_pair(
    query: str,
    ranked: list[tuple[float, UUID]],
    nodes: Mapping[UUID, GraphNode],
    times: Mapping[UUID, Mapping[str, object]],
    kinds: frozenset[str],
    config: RecallConfig,
) -> list[tuple[UUID, UUID, str]]:
    """The best two recalled points as (older, newer, "apart") when every other recalled point
    is ``present_apart`` further from the question (the two answer it, and only they) and the
    newer gives another value of the kind asked, though nothing in front of the values agrees
    ("new hires get X" / "they get Y"). A question naming no kind ("What laptop …?") asks for a
    name when its best answer gives one (a product, a tool)."""
    if config.present_apart <= 0 or len(ranked) < 2:
        return []
    if len(ranked) > 2 and ranked[2][0] - ranked[1][0] < config.present_apart:
        return []
    a, b = ranked[0][1], ranked[1][1]
    ta, tb = _when(nodes[a], times), _when(nodes[b], times)
    if ta is None or tb is None or ta.date() == tb.date():
        return []
    older, newer = (a, b) if ta < tb else (b, a)
    if not kinds:
        kinds = frozenset({v.family for v in values(_text(nodes[a]))} & {"name"})
    if not kinds:
        return []
    return [(older, newer, "apart")] if _differ(query, older, newer, nodes, kinds) else []


def _differ(
    query: str, older: UUID, newer: UUID, nodes: Mapping[UUID, GraphNode], kinds: frozenset[str]
) -> bool:
    """Whether ``newer`` gives another value of ``kinds`` than ``older`` (a speaker saying "I"
    names themself when a name is asked: :func:`answers_differ`)."""
    return (
        answers_differ(
            _text(nodes[newer], "name" in kinds),
            _text(nodes[older], "name" in kinds),
            kinds,
            frozenset(v.norm for v in values(query)),
            asks_who(query),
        )
        is not None
    )


def _other_attribute(older: str, newer: str, kinds: frozenset[str]) -> bool:
    """Whether ``newer`` changes another attribute than the one asked: ``older`` gives a value
    of a kind the question asks for and ``newer`` gives none it does not (a time of day is no
    other date: each kind of time apart). "书展改到图书馆副楼举行" outdates no "6月9日" for
    a question asking when."""
    if not kinds:
        return False
    # A label is read as a name, a code or a version by its form alone ("TANGERINE209"): one.
    if kinds & _LABELS:
        kinds |= _LABELS
    own = [v for v in values(older) if v.family in kinds]
    if not own:
        return False
    norms, times = {v.norm for v in own}, {v.kind for v in own if v.family == "when"}
    return not any(
        v.family in kinds and v.norm not in norms and (v.family != "when" or v.kind in times)
        for v in values(newer)
    )


_LABELS = frozenset({"name", "code", "version", "id"})


# Where a value's label starts: after the value or the clause before it.
_LABEL_START = re.compile(r"[,;:，；：。(（\n]")


def _labelled(text: str, kinds: frozenset[str]) -> list[tuple[Value, frozenset[str]]]:
    """The values of ``text`` of the kinds asked, each with the words of its label: those in
    front of it since the clause or the value before ("Booking fee £40 paid; remaining £360 due":
    "booking fee", "remaining")."""
    out: list[tuple[Value, frozenset[str]]] = []
    start = 0
    for v in values(text):
        front = text[start : v.start]
        cut = max((m.end() for m in _LABEL_START.finditer(front)), default=0)
        if v.family in kinds:
            out.append((v, _keys(front[cut:])))
        start = max(start, v.end)
    return out


def _other_labelled(older: str, newer: str, kinds: frozenset[str], asked: frozenset[str]) -> bool:
    """Whether ``newer`` gives the value of another item that ``older`` labels apart: ``older``
    gives values of a kind asked under several labels, one of them a word of the question, and
    every new value of ``newer`` is labelled by another of them, never by the question's words
    (asked of the booking fee, "the remaining amount is now £420" against "Booking fee £40 paid;
    remaining £360 due")."""
    if not kinds or not asked:
        return False
    was = _labelled(older, kinds)
    if len(was) < 2:
        return False
    answer = [label for _, label in was if label & asked]
    others = frozenset().union(*(label - asked for _, label in was if not label & asked))
    if not answer or not others:
        return False
    norms = {v.norm for v, _ in was}
    new = [label for v, label in _labelled(newer, kinds) if v.norm not in norms]
    return bool(new) and all(not label & asked and label & others for label in new)


def _rival_pair(
    query: str,
    kinds: frozenset[str],
    ranked: list[tuple[float, UUID]],
    nodes: Mapping[UUID, GraphNode],
    times: Mapping[UUID, Mapping[str, object]],
    config: RecallConfig,
) -> list[tuple[UUID, UUID, str]]:
    """The best recalled point and the best of another source said on another day that gives a
    value of a kind asked (the first such source that differs), as (older, newer, "rival"),
    when both are within ``present_rival`` of the question (raw cosine distance) and the newer gives another value
    of a kind the question asks for (``kinds``): two sources answering one question differently
    ("Dinner: the Old Mill, 7pm" in a plan, "table for 12 at Rosetti's" in a later mail).
    Nothing in front of the values need agree, so the pair orders: the newer comes first, and
    the older is marked only when the two share a word the question does not give
    (:func:`outdated_points`); else its value may still hold (another item of the same kind)."""
    if config.present_rival <= 0 or len(ranked) < 2 or not kinds:
        return []
    best, a = ranked[0]
    source, ta = _document(nodes[a]), _when(nodes[a], times)
    if ta is None:
        return []
    tried = {source}
    for score, b in ranked[1:]:
        if score > best + config.present_rival:
            break
        tb, other = _when(nodes[b], times), _document(nodes[b])
        if other in tried or tb is None or tb.date() == ta.date():
            continue
        if "name" not in kinds and not any(v.family in kinds for v in values(_text(nodes[b]))):
            # a title ("Harbour Swim Club") gives no amount: the source's next line may (a
            # person may answer "who" with no form a value has: answers_differ reads them)
            continue
        tried.add(other)  # each source by its best point giving a value of a kind asked
        older, newer = (a, b) if ta < tb else (b, a)
        if _differ(query, older, newer, nodes, kinds):
            return [(older, newer, "rival")]
    return []


__all__ = ["OUTDATED_MARK", "Outdated", "applies", "outdated_points"]
