"""LongMemEval_S for benchmarks/longmemeval.py: the items, the split, the slice, the documents.

The data stays in ``../shared/data/longmemeval_s/`` (one file per question,
``<haystack sessions>_<question_id>.json``; ``_abs`` question ids are abstention questions).
Evaluation discipline:

- only files numbered 43 or more are read (the others are kept for an independent check);
- split: ``tune`` when the integer value of sha256(question_id) is even, else ``test``;
- slice: per half, abstention items left out, items sorted by sha256(question_id) (hash order),
  the first ``per_type`` items of each question type (stratified), so both halves are
  deterministic samples that nobody picked by looking at them.

Each item is memorised as its own dataset, one conversation document per haystack session (in
time order), dated by the session's date, speakers "user" and "assistant". Turns get the keys
``S<session>:<turn>`` (session = position in time order, turn = position in the session), so a
context unit's provenance names its session and turn and nothing else: the haystack session ids
(which say which session holds the answer) are never stored.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memflow.ingest.parse import parse_input
from memflow.text.document import ParsedDocument

MIN_SESSIONS = 43
QUESTION_TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)
_FILE = re.compile(r"^(\d+)_(.+)\.json$")
_KEY = re.compile(r"^S(\d+):(\d+)$")
_DATE = re.compile(r"^(\d{4})/(\d{2})/(\d{2}) \(\w+\) (\d{2}):(\d{2})$")


def parse_date(text: str) -> datetime:
    """ "2023/05/20 (Sat) 02:21" as an aware datetime (the data names no zone: UTC)."""
    m = _DATE.match(text.strip())
    if m is None:
        raise ValueError(f"not a LongMemEval date: {text!r}")
    y, mo, d, h, mi = (int(g) for g in m.groups())
    return datetime(y, mo, d, h, mi, tzinfo=UTC)


def digest(question_id: str) -> str:
    return hashlib.sha256(question_id.encode()).hexdigest()


def split_of(question_id: str) -> str:
    return "tune" if int(digest(question_id), 16) % 2 == 0 else "test"


def session_of(key: str) -> int | None:
    m = _KEY.match(key)
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class Session:
    index: int  # position in time order
    date: datetime
    date_text: str
    turns: tuple[tuple[str, str, str], ...]  # (key, speaker, text)
    words: int


@dataclass(frozen=True)
class Item:
    question_id: str
    question_type: str
    question: str
    question_date: datetime
    sessions: tuple[Session, ...]
    answer_sessions: frozenset[int]  # session indexes
    evidence: tuple[str, ...]  # keys of the has_answer turns

    @property
    def abstention(self) -> bool:
        return "_abs" in self.question_id

    @property
    def split(self) -> str:
        return split_of(self.question_id)

    @property
    def dataset(self) -> str:
        return f"lme-{self.question_id}"

    @property
    def words(self) -> int:
        return sum(s.words for s in self.sessions)

    def evidence_by_session(self) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for key in self.evidence:
            s = session_of(key)
            if s is not None:
                out.setdefault(s, []).append(key)
        return out

    def dated_answer_sessions(self) -> list[Session]:
        """The answer sessions with evidence turns, oldest first."""
        ev = self.evidence_by_session()
        return sorted((self.sessions[i] for i in ev), key=lambda s: (s.date, s.index))


def read_item(path: Path) -> Item:
    raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    ids: list[str] = raw["haystack_session_ids"]
    dates: list[str] = raw["haystack_dates"]
    bodies: list[list[dict[str, Any]]] = raw["haystack_sessions"]
    if not len(ids) == len(dates) == len(bodies):
        raise ValueError(f"{path.name}: haystack ids, dates and sessions differ in length")
    order = sorted(range(len(ids)), key=lambda i: (parse_date(dates[i]), i))
    answer_ids = set(raw.get("answer_session_ids") or [])
    sessions: list[Session] = []
    evidence: list[str] = []
    answers: set[int] = set()
    for pos, i in enumerate(order):
        turns = []
        for t, turn in enumerate(bodies[i]):
            body = str(turn.get("content") or "").strip()
            if not body:
                continue
            key = f"S{pos}:{t}"
            turns.append((key, str(turn["role"]), body))
            if turn.get("has_answer"):
                evidence.append(key)
        words = sum(len(b.split()) for _, _, b in turns)
        sessions.append(Session(pos, parse_date(dates[i]), dates[i], tuple(turns), words))
        if ids[i] in answer_ids:
            answers.add(pos)
    return Item(
        question_id=str(raw["question_id"]),
        question_type=str(raw["question_type"]),
        question=str(raw["question"]),
        question_date=parse_date(raw["question_date"]),
        sessions=tuple(sessions),
        answer_sessions=frozenset(answers),
        evidence=tuple(evidence),
    )


def item_files(data: Path) -> list[Path]:
    """The files numbered MIN_SESSIONS or more, in hash order of their question ids."""
    if not data.is_dir():
        raise SystemExit(
            f"no LongMemEval_S folder at {data}: see /work/shared/data/README.md, or pass --data"
        )
    out = []
    for path in data.iterdir():
        m = _FILE.match(path.name)
        if m and int(m.group(1)) >= MIN_SESSIONS:
            out.append((digest(m.group(2)), path))
    return [p for _, p in sorted(out)]


def choose(data: Path, per_type: int) -> dict[str, list[Item]]:
    """The slice: per half, the first ``per_type`` non-abstention items of each question type in
    hash order. Reads only the files it needs (each file is ~0.5 MB)."""
    wanted = {(h, t): per_type for h in ("tune", "test") for t in QUESTION_TYPES}
    out: dict[str, list[Item]] = {"tune": [], "test": []}
    for path in item_files(data):
        qid = _FILE.match(path.name).group(2)  # type: ignore[union-attr]
        if "_abs" in qid or not any(wanted[(split_of(qid), t)] for t in QUESTION_TYPES):
            continue
        item = read_item(path)
        slot = (item.split, item.question_type)
        if wanted.get(slot, 0) > 0:
            wanted[slot] -= 1
            out[item.split].append(item)
        if not any(wanted.values()):
            break
    return out


def documents(item: Item) -> list[ParsedDocument]:
    """One conversation document per session, in time order, dated by its session."""
    docs: list[ParsedDocument] = []
    for s in item.sessions:
        if not s.turns:
            continue
        messages = [{"id": k, "speaker": who, "text": body} for k, who, body in s.turns]
        body = json.dumps(
            {"sessions": [{"started_at": s.date.isoformat(), "messages": messages}]},
            ensure_ascii=False,
        )
        src = f"longmemeval/{item.question_id}/S{s.index}"
        docs += parse_input(body, source=src, content_type="conversation")
    return docs


def ingest_order(chosen: dict[str, list[Item]]) -> list[Item]:
    """The slice's items with the first of each type and half first, then the second, ...: an
    ingest stopped early leaves a store that holds a whole smaller slice (``per_type`` - 1)."""
    ranked = []
    for split, items in chosen.items():
        seen: dict[str, int] = {}
        for item in items:
            rank = seen[item.question_type] = seen.get(item.question_type, -1) + 1
            ranked.append((rank, split, QUESTION_TYPES.index(item.question_type), item))
    return [r[-1] for r in sorted(ranked, key=lambda r: r[:3])]
