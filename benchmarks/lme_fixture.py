"""A tiny synthetic folder shaped like LongMemEval_S, for ``benchmarks.longmemeval --quick`` and
its smoke test (CI has no LongMemEval data). Every sentence is invented here.

Each question type gets one item per half (question ids are tried until the hash split puts them
where they are wanted), plus an abstention item and an item with fewer than 43 sessions, which
the benchmark must leave out. Each item has 43 short sessions, dated out of order in the file
(as in the real data); filler sessions are the same in every item (the embedding cache serves
them the second time).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from itertools import count
from pathlib import Path
from typing import Any

from benchmarks.lme_data import MIN_SESSIONS, split_of

_TOPICS = (
    ("a lentil soup", "simmer red lentils with cumin and a bay leaf for twenty minutes"),
    ("a desk lamp", "look for a warm colour temperature and an adjustable arm"),
    ("a running plan", "alternate easy runs with one longer run at the weekend"),
    ("a birthday card", "keep it short and mention a memory you share"),
    ("a spreadsheet formula", "use a lookup over the table and lock the range"),
    ("a tomato plant", "water it at the base in the morning and stake it early"),
    ("a bike chain", "clean it with a rag, then oil every link lightly"),
    ("a packing list", "roll the clothes and keep chargers in one pouch"),
)

# Per question type: (question, [(session offset in days, user turn, assistant turn, which turn
# holds the answer: "user" / "assistant")]). Offsets order the answer sessions in time.
_CASES: dict[str, tuple[str, list[tuple[int, str, str, str]]]] = {
    "single-session-user": (
        "Where do I keep my kayak paddles?",
        [(5, "I keep my kayak paddles on hooks in the garage.", "Hooks keep them dry.", "user")],
    ),
    "single-session-assistant": (
        "Which stretch did you suggest for my calves last time?",
        [
            (
                7,
                "My calves ache after running.",
                "Try the wall calf stretch, thirty seconds a side.",
                "assistant",
            )
        ],
    ),
    "single-session-preference": (
        "Can you suggest a snack for my hike?",
        [
            (
                9,
                "I avoid peanuts and I love dried mango.",
                "Noted: no peanuts, mango is fine.",
                "user",
            )
        ],
    ),
    "multi-session": (
        "How many board games did I buy this spring?",
        [
            (3, "I bought a copy of a tile-laying board game today.", "Enjoy it.", "user"),
            (20, "I bought a second board game, a card-drafting one.", "Nice pick.", "user"),
        ],
    ),
    "knowledge-update": (
        "How many people are on my volunteering team now?",
        [
            (4, "Our volunteering team has five people.", "A good size.", "user"),
            (30, "Our volunteering team grew to nine people this month.", "Congrats.", "user"),
        ],
    ),
    "temporal-reasoning": (
        "How many days passed between my first pottery class and my first glazing session?",
        [
            (6, "Today I went to my first pottery class.", "How exciting.", "user"),
            (16, "Today was my first glazing session at the studio.", "Fun!", "user"),
        ],
    ),
}
START = datetime(2023, 3, 1, 9, 30, tzinfo=UTC)


def _date(t: datetime) -> str:
    return t.strftime("%Y/%m/%d (%a) %H:%M")


def _filler(n: int) -> list[dict[str, Any]]:
    topic, advice = _TOPICS[n % len(_TOPICS)]
    return [
        {"role": "user", "content": f"Can you help me with {topic}? (note {n})"},
        {"role": "assistant", "content": f"Sure: {advice}."},
    ]


def _ids(question_type: str, split: str) -> Iterator[str]:
    for n in count():
        qid = f"fx{list(_CASES).index(question_type)}q{n:03d}"
        if split_of(qid) == split:
            yield qid


def item(question_type: str, qid: str, sessions: int = MIN_SESSIONS) -> dict[str, Any]:
    question, answers = _CASES[question_type]
    days = list(range(sessions))
    haystack: dict[int, list[dict[str, Any]]] = {d: _filler(d) for d in days}
    answer_ids: list[str] = []
    for day, user, assistant, holder in answers:
        haystack[day] = [
            {"role": "user", "content": user, "has_answer": holder == "user"},
            {"role": "assistant", "content": assistant, "has_answer": holder == "assistant"},
        ]
        answer_ids.append(f"answer_{qid}_{day}")
    order = days[::2] + days[1::2]  # the file lists sessions out of time order
    ids = [f"answer_{qid}_{d}" if any(a[0] == d for a in answers) else f"s{d}" for d in order]
    return {
        "question_id": qid,
        "question_type": question_type,
        "question": question,
        "answer": "(synthetic)",
        "question_date": _date(START + timedelta(days=sessions + 2)),
        "haystack_session_ids": ids,
        "haystack_dates": [_date(START + timedelta(days=d, hours=d % 5)) for d in order],
        "haystack_sessions": [haystack[d] for d in order],
        "answer_session_ids": answer_ids,
    }


def write_fixture(folder: Path) -> list[Path]:
    """The fixture's files in ``folder``; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    items = [item(t, next(_ids(t, split))) for t in _CASES for split in ("tune", "test")]
    abstention = item("single-session-user", "fxabs001_abs")
    abstention["answer"] = "You did not mention this."
    items.append(abstention)
    short = item("knowledge-update", "fxshort01", sessions=MIN_SESSIONS - 1)
    paths = []
    for raw in [*items, short]:
        path = folder / f"{len(raw['haystack_sessions'])}_{raw['question_id']}.json"
        path.write_text(json.dumps(raw), encoding="utf-8")
        paths.append(path)
    return paths
