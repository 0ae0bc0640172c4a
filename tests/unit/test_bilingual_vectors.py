"""benchmarks/bilingual_vectors.py's measures on invented vectors: a note's distance is its
nearest text's, a per-script shift compares each note with its own script's best, and moving the
query across the gap between the scripts' mean embeddings lets the other script's note win."""

from __future__ import annotations

import numpy as np

from benchmarks.bilingual_vectors import (
    _unit,
    first_other,
    kept_in_pool,
    measure,
    note_distances,
    rank_of,
    shifted,
)


def _v(*xs: float) -> np.ndarray:
    return _unit(np.array(xs, dtype=float))


# Axis 0: "what the text is about" (the answer); axis 1: English; axis 2: Chinese.
POINTS = [
    ("The kiln was relined in spring.", "kiln.md", _v(0.9, 1.0, 0.0)),
    ("Parking permits are renewed yearly.", "parking.md", _v(0.1, 1.0, 0.0)),
    ("窑炉春天重新砌了内衬。", "窑炉.md", _v(0.9, 0.0, 1.0)),
    ("食堂周五供应面条。", "食堂.md", _v(0.1, 0.0, 1.0)),
]
NOTES = {
    "kiln.md": "The kiln was relined in spring.",
    "parking.md": "Parking permits are renewed yearly.",
    "窑炉.md": "窑炉春天重新砌了内衬。",
    "食堂.md": "食堂周五供应面条。",
}


def test_note_distance_is_the_nearest_text() -> None:
    q = _v(1.0, 1.0, 0.0)
    best = note_distances(q, [*POINTS, ("Kiln log.", "kiln.md", _v(0.0, 1.0, 0.0))])
    assert best["kiln.md"] == min(1 - float(POINTS[0][2] @ q), 1 - float(_v(0, 1, 0) @ q))


def test_english_question_prefers_english_until_the_gap_is_removed() -> None:
    q = _v(1.0, 1.0, 0.0)  # an English question about the kiln
    best = note_distances(q, POINTS)
    script = {n: "窑" in n or "食" in n for n in best}
    # raw: the unrelated English note beats the Chinese answer
    assert rank_of("parking.md", best) < rank_of("窑炉.md", best)  # type: ignore[operator]
    # within its own script the Chinese answer is first
    assert rank_of("窑炉.md", best, {"窑炉.md", "食堂.md"}) == 1
    # per-script shift: each script's best is at 0
    moved = shifted(best, script, 1)
    assert moved["窑炉.md"] == moved["kiln.md"] == 0.0
    assert rank_of("parking.md", moved) == 3
    # the first Chinese point of the ranking comes after both English ones
    assert first_other(q, POINTS, own_cjk=False) == 3


def test_measure_counts_questions_by_language() -> None:
    questions = [{"question": "Who relined the kiln?", "lang": "en", "expect": "窑炉.md"}]
    res = measure(
        {"facetpoint_search_text": POINTS, "facet_search_text": [], "facet_anchor_text": []},
        NOTES,
        questions,
        [_v(1.0, 1.0, 0.0)],
        top=1,
    )
    assert res["en"]["n"] == 1 and res["zh"]["n"] == 0
    assert res["all"]["points/raw"]["top1"] == 0
    assert res["all"]["points/own-script rank"]["top1"] == 1
    # the query moved all the way across the gap: the Chinese answer is first
    assert res["all"]["points/moved 1.0"]["top1"] == 1


def test_a_store_grown_in_one_language_drops_the_other_scripts_answer() -> None:
    questions = [{"question": "Who relined the kiln?", "lang": "en", "expect": "窑炉.md"}]
    q = [_v(1.0, 1.0, 0.0)]
    # unrelated English texts, all nearer the English question than the Chinese answer
    chatter = np.stack([_v(0.05 * i, 1.0, 0.0) for i in range(1, 6)])
    raw = kept_in_pool(POINTS, chatter, questions, q, k=4, move=0.0)
    assert raw["en"] == [0, 1]
    moved = kept_in_pool(POINTS, chatter, questions, q, k=4, move=0.5)
    assert moved["en"] == [1, 1] and moved["zh"] == [0, 0]
