"""How the similarity path's constants were chosen (issue 26, part 3): the pairs it would judge
on the tune half of the hand-written set (:mod:`benchmarks.updates_handwritten`), with their
features and labels, and what each threshold closes and links.

Every pair of statements of a case said at different times (the sources' own dates, as the
write path reads them) whose values differ (:func:`memflow.text.conflict.difference`) is a
candidate. Labels: **true** when the older states a ``stale`` value of a change case and the
newer a ``current`` value (or another ``stale`` value: a change in two steps); **false** when
the older states a control case's ``current`` value (the fact that must hold) and for pairs of
a change case where neither states a value of the case (distractors); the rest is left
unlabelled (another line item of a control may change: "an update of a different line item"). Features: cosine similarity of the two
statements, of the two with their values masked, whether the change is said (cued) or a
departure, and how much they share besides the changed value.

    python -m benchmarks.conflict_calibration             # tune half: counts per threshold
    python -m benchmarks.conflict_calibration --pairs     # and every labelled pair
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmarks.updates_handwritten import halves, load
from memflow.ingest.parse import parse_input
from memflow.store.conflicts import ConflictSettings, decide
from memflow.text.conflict import Difference, difference, said_by
from memflow.text.supersede import strip_speaker
from memflow.text.values import masked


@dataclass(frozen=True)
class Pair:
    case: str
    label: str  # true | false | ?
    older: str
    newer: str
    diff: Difference
    similarity: float
    masked_similarity: float


def _statements(case: dict[str, Any]) -> list[tuple[Any, str]]:
    out = []
    for d in case["documents"]:
        content = d["content"]
        name = d["name"]
        if d["format"] == "conversation":
            content = json.dumps(content, ensure_ascii=False)
            name = name.rsplit(".", 1)[0] + ".json"
        for doc in parse_input(content, source=name, filename=name):
            when = {s.index: s.started_at for s in doc.sessions}
            for c in doc.chunks:
                t = c.timestamp or (when.get(c.session) if c.session is not None else None)
                out.append((t, said_by(strip_speaker(c.text, c.speaker), c.speaker)))
    return out


def _has(text: str, needles: Sequence[str]) -> bool:
    low = text.lower()
    return any(n.lower() in low for n in needles)


def _label(case: dict[str, Any], older: str, newer: str) -> str:
    cur, stale = case["current"], case["stale"]
    if case["kind"] == "control":
        return "false" if _has(older, cur) else "?"  # the fact that must hold
    if _has(older, stale) and (_has(newer, cur) or _has(newer, stale)) and not _has(older, cur):
        return "true"
    if not any(_has(t, cur) or _has(t, stale) for t in (older, newer)):
        return "false"
    return "?"


def pairs(embedder: Any, half: str = "tune") -> list[Pair]:
    cases = load()
    half_of = halves(cases)
    out: list[Pair] = []
    for case in cases:
        if half_of[case["id"]] != half:
            continue
        said = [(t, s) for t, s in _statements(case) if t is not None]
        found = []
        for t1, a in said:
            for t2, b in said:
                if t1 < t2 and (d := difference(b, a)) is not None:
                    found.append((a, b, d))
        if not found:
            continue
        texts = sorted({x for a, b, _ in found for x in (a, b, masked(a), masked(b))})
        vec = dict(zip(texts, np.asarray(embedder.embed_passages(texts)), strict=True))
        for a, b, d in found:
            out.append(
                Pair(case["id"], _label(case, a, b), a, b, d,
                     _cos(vec[a], vec[b]), _cos(vec[masked(a)], vec[masked(b)]))
            )  # fmt: skip
    return out


def _cos(a: Any, b: Any) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def tally(found: Sequence[Pair], settings: ConflictSettings) -> dict[str, dict[str, int]]:
    """Pairs closed and linked, by label, under ``settings``."""
    out: dict[str, dict[str, int]] = {}
    for p in found:
        action = decide(p.diff, p.similarity, p.masked_similarity, settings)
        row = out.setdefault(p.label, {"pairs": 0, "close": 0, "link": 0})
        row["pairs"] += 1
        if action:
            row[action] += 1
    return out


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--embedder", default="local")
    ap.add_argument("--half", default="tune", choices=("tune", "test"))
    ap.add_argument("--pairs", action="store_true", help="print every labelled pair")
    args = ap.parse_args(argv)
    from memflow.embed.factory import make_embedder

    found = pairs(make_embedder(args.embedder), args.half)
    shipped = ConflictSettings()
    if args.pairs:
        for p in sorted(found, key=lambda p: (p.label, -p.masked_similarity)):
            action = decide(p.diff, p.similarity, p.masked_similarity, shipped) or "-"
            print(f"{p.label:5} {action:5} {p.diff.how[:6]} cued={int(p.diff.cued)} "
                  f"shared={p.diff.shared} raw={p.similarity:.3f} masked={p.masked_similarity:.3f}"
                  f" {p.case} | {p.older[:60]!r} -> {p.newer[:60]!r}")  # fmt: skip
    print(json.dumps({"half": args.half, "shipped": tally(found, shipped)}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
