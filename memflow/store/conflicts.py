"""The similarity path of supersession: new facts that give another value for what a stored one
states (issue 26, part 3). Runs before the document's transaction, like the model path.

For each new FacetPoint, its nearest current stored points (one statement for the whole
document: the nearest ``neighbours`` by embedding, in the document's dataset and scope, at least
``min_similarity`` cosine) and the other new points of the document said at another time are
candidates. Of a pair, the one said later (the record time: the sources' own dates) is the
newer statement, whichever was stored first. :func:`memflow.text.conflict.difference` says
whether their values differ; the similarity of the two statements with their values masked
(:func:`memflow.text.values.masked`, embedded) says whether they speak of the same thing:

- a **departure** (the newer names the older's value as left behind) closes the older when the
  two statements are at least ``depart_similarity`` alike;
- a **change** that the newer says happened ("moved to", "now", "改到") closes it when the
  masked statements are at least ``close_similarity`` alike;
- any other change of one value (no change word: "the review is on 15 October" in a later
  note) **links** them when the masked statements are at least ``link_similarity`` alike: the
  older stays current, and a search about the present shows the newer first and the older as
  possibly outdated (:mod:`memflow.recall.temporal`). The link is kept in the props of the point
  written now (``restates`` / ``restated_by``: [id, score]), so forgetting either document
  drops it with its rows.

A moved date closes only the latest plan it matches (an earlier review held on its own date is
another occurrence). Every closure is logged with ``by: "similarity"``, its score and the values
that changed (:func:`memflow.store.temporal.after_write`).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import numpy as np

from memflow.db.queries import q
from memflow.db.steps import Op, sql_tx
from memflow.embed.base import Embedder, embed_passages_checked
from memflow.ids import text_hash
from memflow.store.plan import NodeRow, WritePlan
from memflow.text.conflict import Difference, difference
from memflow.text.revision import words
from memflow.text.slots import TEMPLATE_KEYS, same_topic
from memflow.text.supersede import Closure, strip_speaker
from memflow.text.values import masked

_FIRST_PERSON = ("i ", "i'm", "i've", "i'd", "we ", "we're", "we've", "my ", "our ", "me ", "us ")
_LATEST = datetime.max.replace(tzinfo=UTC)


@dataclass(frozen=True)
class ConflictSettings:
    """The similarity path's constants (``MemorizeOptions.conflicts``). Cosine similarities of
    the embedder's passage vectors; ``neighbours`` 0 turns the path off. Chosen where each
    comment says (docs/benchmarks/updates.md)."""

    neighbours: int = 8  # as the rules' candidates (memflow.store.temporal.CANDIDATES_K)
    # Candidates: stored points at least this alike the new one (raw statements).
    min_similarity: float = 0.78
    # A departure ("from X to Y", "X is no longer ...") closes at this raw similarity.
    depart_similarity: float = 0.82
    # A change the newer statement says happened closes at this masked similarity.
    close_similarity: float = 0.90
    # Any change of one value links (possibly outdated) at this masked similarity.
    link_similarity: float = 0.88
    # A change (not a departure) also needs this much in common besides the changed value:
    # content words (Chinese character pairs) or other values both state ...
    shared_min: int = 1
    # ... and this share of the words in front of the two values (what they are the value of).
    head_min: float = 0.5
    # A change said of one named ticket, host or id closes at this masked similarity.
    id_similarity: float = 0.80
    # A statement with at most this many content words (Chinese character pairs) besides its
    # values is a template ("Owner: X"): it pairs with another document's statement only when
    # the two documents' titles share a content word.
    template_keys: int = TEMPLATE_KEYS
    # Statements longer than this (words; a CJK character is half a word) are not compared:
    # a passage states many things (the rules' TEXT_WORDS_MAX is 30).
    words_max: int = 60


def decide(
    diff: Difference, similarity: float, masked_similarity: float | None, s: ConflictSettings
) -> str | None:
    """ "close", "link" or None for a pair whose values differ (see the module docstring)."""
    if diff.how == "departure":
        return "close" if similarity >= s.depart_similarity else None
    if masked_similarity is None or not needs_masked(diff, s):
        return None
    if diff.kind == "term" and not diff.cued:
        return None  # a word no form marks as a value: only when the newer says it changed
    if diff.cued and masked_similarity >= (s.id_similarity if diff.same_id else s.close_similarity):
        return "close"
    return "link" if masked_similarity >= s.link_similarity else None


def needs_masked(diff: Difference, s: ConflictSettings) -> bool:
    """Whether :func:`decide` reads the masked similarity of the pair: a change with enough in
    common besides its value (the others are decided without embedding anything); a change of
    a word no form marks (kind "term") only when the newer says it changed."""
    if diff.kind == "term" and not diff.cued:
        return False
    return diff.how == "change" and diff.shared >= s.shared_min and diff.head >= s.head_min


@dataclass(frozen=True)
class Said:
    """One statement of a pair: its point, text (speaker label removed), speaker, times."""

    id: uuid.UUID
    text: str  # without the speaker's label
    speaker: str | None
    recorded_at: datetime | None
    valid_at: datetime | None
    stored: bool
    own: bool = False  # said of the speaker themself ("I ...", "我 ...")
    about: str = ""  # the title of its document (what a bare "Owner: X" line is about)

    @property
    def when(self) -> datetime:
        return self.recorded_at or _LATEST


@dataclass(frozen=True)
class Found:
    """A pair whose values differ: the older statement, the newer, how, and how alike."""

    older: Said
    newer: Said
    diff: Difference
    similarity: float
    masked_similarity: float | None = None
    action: str = ""  # "close" | "link"

    def detail(self) -> dict[str, Any]:
        score = self.masked_similarity if self.diff.how == "change" else self.similarity
        return {
            "by": "similarity",
            "score": round(score if score is not None else self.similarity, 4),
            "how": self.diff.how,
            "kind": self.diff.kind,
            "change": self.diff.detail,
        }


@dataclass
class ConflictFinder:
    """Finds, for a document's new points, the stored (or other new) points they close or link
    (see the module docstring); fills ``plan.closures`` and the new points' ``props``."""

    embedder: Embedder
    settings: ConflictSettings = field(default_factory=ConflictSettings)
    # False when a model decides the closures (supersede="llm"): this path then only links.
    close: bool = True

    def plan(
        self,
        ds: uuid.UUID,
        plan: WritePlan,
        vectors: Mapping[bytes, Any],
        speakers: Mapping[str, str | None],
        scope: Mapping[str, str],
        title: str = "",
    ) -> Op[list[Found]]:
        """Decide for the plan's points (``speakers``: chunk key -> speaker), as an operation
        (:mod:`memflow.db.steps`: one read of the neighbours); returns what was found
        (closures are on ``plan.closures``, links in the points' props)."""
        s = self.settings
        if s.neighbours <= 0:
            return []
        points = [
            (n, vectors[h])
            for n in plan.nodes.values()
            if n.kind == "FacetPoint"
            and n.search_text
            and (h := text_hash(n.search_text)) in vectors
        ]
        if not points:
            return []
        new = [replace(_said(n, speakers), about=title) for n, _ in points]
        pairs: list[tuple[Said, Said, float]] = []
        mat = np.stack([_array(v) for _, v in points])
        for i, j, sim in _within(mat, s.neighbours, s.min_similarity):
            if new[i].when != new[j].when:  # one document: one subject
                pairs.append((new[i], replace(new[j], about=""), sim))
        near = yield from self._neighbours(ds, [v for _, v in points], scope)
        for i, cand, sim in near:
            pairs.append((new[i], cand, sim))
        found = self._judge(pairs)
        self._apply(plan, found)
        return found

    def _neighbours(
        self, ds: uuid.UUID, vecs: list[Any], scope: Mapping[str, str]
    ) -> Op[list[tuple[int, Said, float]]]:
        s = self.settings
        params = {
            "dataset_id": ds,
            "vectors": [_array(v) for v in vecs],
            "k": s.neighbours,
            "min_similarity": s.min_similarity,
            "scope": json.dumps(dict(scope), sort_keys=True),
        }
        rows = yield sql_tx(lambda conn: conn.execute(q("conflict_neighbours"), params).all(), ds)
        return [
            (
                int(r.i) - 1,
                replace(
                    _statement(r.id, r.text or "", r.speaker, r.recorded_at, r.valid_at, True),
                    about=r.title or "",
                ),
                float(r.similarity),
            )
            for r in rows
        ]

    def _judge(self, pairs: list[tuple[Said, Said, float]]) -> list[Found]:
        """The pairs whose values differ, with their masked similarity (embedded in one batch),
        each marked close or link (or dropped)."""
        s = self.settings
        seen: set[tuple[uuid.UUID, uuid.UUID]] = set()
        candidates: list[Found] = []
        for a, b, sim in pairs:
            older, newer = (a, b) if a.when < b.when else (b, a)
            key = (older.id, newer.id)
            if a.when == b.when or key in seen or older.id == newer.id:
                continue
            seen.add(key)
            if not _same_subject(older, newer) or max(words(older.text), words(newer.text)) > (
                s.words_max
            ):
                continue  # two people's "I …", or passages too long to read as one statement
            if not _same_topic(older, newer, s):
                continue  # "Owner: X" in two notes about two things
            diff = difference(newer.text, older.text)
            if diff is not None and not _own_dates(diff, older, newer):
                candidates.append(Found(older, newer, diff, sim))
        masks = sorted({_masked(f, newer) for f in candidates if needs_masked(f.diff, s)
                        for newer in (False, True)})  # fmt: skip
        vec: dict[str, Any] = {}
        if masks:
            out = embed_passages_checked(self.embedder, masks)
            vec = {t: np.asarray(v, dtype=np.float32) for t, v in zip(masks, out, strict=True)}
        judged: list[Found] = []
        for f in candidates:
            m = None
            if needs_masked(f.diff, s):
                m = _cosine(vec[_masked(f, False)], vec[_masked(f, True)])
            action = decide(f.diff, f.similarity, m, s)
            if action is not None:
                judged.append(_with(f, masked_similarity=m, action=action))
        return _latest_plans(judged)

    def _apply(self, plan: WritePlan, found: list[Found]) -> None:
        for f in found:
            if f.action == "close" and self.close:
                plan.closures.append(
                    Closure(f.older.id, f.newer.id, "rule", f.detail(), f.newer.valid_at)
                )
                continue
            score = f.masked_similarity if f.masked_similarity is not None else f.similarity
            for here, key, other in ((f.newer, "restates", f.older), (f.older, "restated_by",
                                                                     f.newer)):  # fmt: skip
                node = plan.nodes.get(here.id)
                if node is not None and not here.stored:
                    links = node.props.setdefault(key, [])
                    if str(other.id) not in (x[0] for x in links):
                        links.append([str(other.id), round(score, 4)])


def _masked(f: Found, newer: bool) -> str:
    """A statement of the pair with its values masked; a value no form marks (kind "term": the
    span the two statements differ in) is masked too."""
    text = f.newer.text if newer else f.older.text
    out = masked(text)
    value = f.diff.new if newer else f.diff.old
    if f.diff.kind == "term" and value:
        out = re.sub(re.escape(value), "[name]", out, count=1, flags=re.IGNORECASE)
    return out


def _said(n: NodeRow, speakers: Mapping[str, str | None]) -> Said:
    speaker = next((speakers[k] for k in n.sources if speakers.get(k)), None)
    return _statement(n.id, n.search_text or "", speaker, n.recorded_at, n.valid_at, False)


def _statement(
    node: uuid.UUID,
    text: str,
    speaker: str | None,
    recorded_at: datetime | None,
    valid_at: datetime | None,
    stored: bool,
) -> Said:
    bare = strip_speaker(text, speaker)
    own = bool(speaker) and _first_person(bare)
    return Said(node, bare, speaker, recorded_at, valid_at, stored, own)


def _array(v: Any) -> np.ndarray:
    """A vector as numpy (the write path holds new ones as arrays, stored ones as pgvector's)."""
    return np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v, dtype=np.float32)


def _within(mat: np.ndarray, k: int, least: float) -> list[tuple[int, int, float]]:
    """Each row's ``k`` nearest other rows of ``mat`` at least ``least`` alike (cosine), as
    pairs (i < j, once each) with their similarity: a document's own points, as the stored
    ones are read (their ``k`` nearest)."""
    n = len(mat)
    if n < 2:
        return []
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    unit = mat / np.where(norms == 0, 1.0, norms)
    top = min(k, n - 1)
    out: dict[tuple[int, int], float] = {}
    for lo in range(0, n, _BLOCK):  # a block of rows at a time: memory stays O(block x n)
        sims = unit[lo : lo + _BLOCK] @ unit.T
        for r in range(len(sims)):
            sims[r, lo + r] = -1.0
        nearest = np.argpartition(-sims, top - 1, axis=1)[:, :top]
        for r, row in enumerate(nearest):
            i = lo + r
            for j in row:
                sim = float(sims[r, j])
                if sim >= least:
                    out[(min(i, int(j)), max(i, int(j)))] = sim
    return [(i, j, sim) for (i, j), sim in sorted(out.items())]


_BLOCK = 256


def _cosine(a: Any, b: Any) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(np.dot(a, b) / (na * nb)) if na and nb else 0.0


def _first_person(text: str) -> bool:
    low = text.lower() + " "
    return (
        low.startswith(_FIRST_PERSON)
        or any(f" {w}" in low for w in _FIRST_PERSON)
        or ("我" in text)
    )


def _same_subject(a: Said, b: Said) -> bool:
    """Two speakers' statements about themselves ("I live in ...") are about two people."""
    if a.speaker and b.speaker and a.speaker.casefold() != b.speaker.casefold():
        return not (a.own or b.own)
    return True


def _same_topic(a: Said, b: Said, s: ConflictSettings) -> bool:
    """A template statement ("Owner: X") and another speak of one thing only when their
    documents' titles share a content word (:func:`memflow.text.slots.same_topic`)."""
    return same_topic(a.text, b.text, a.about, b.about, s.template_keys)


def _own_dates(diff: Difference, older: Said, newer: Said) -> bool:
    """The two dates that differ are the days the two statements were said (a note's heading
    "Budget revision (2025-03-18)" against "Budget 2025 (approved 2024-12-10)"): when each was
    written, not a value of anything that changed. (A date's norm is its day and the next: a
    source's date may sit in another time zone.)"""
    if diff.how != "change" or diff.kind != "when" or diff.new is None:
        return False
    return all(
        s.recorded_at is not None and f"{s.recorded_at:%m-%d}" in norm.split("/")
        for s, norm in ((older, diff.old), (newer, diff.new))
    )


def _with(f: Found, **update: Any) -> Found:
    return replace(f, **update)


def _latest_plans(found: list[Found]) -> list[Found]:
    """A moved date closes the latest plan it matches (and that plan's restatements), not every
    earlier date: "postponed to 22 October" moves the 15 October review, not the one held on 3
    October. The earlier ones are left alone."""
    out: list[Found] = []
    by_newer: dict[uuid.UUID, list[Found]] = {}
    for f in found:
        if f.diff.kind == "date" and f.action == "close":
            by_newer.setdefault(f.newer.id, []).append(f)
        else:
            out.append(f)
    for group in by_newer.values():
        latest = max(group, key=lambda f: (f.older.when, str(f.older.id)))
        out += [f for f in group if f.diff.old == latest.diff.old]
    return out


__all__ = ["ConflictFinder", "ConflictSettings", "Found", "Said", "decide"]
