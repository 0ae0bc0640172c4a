"""The frozen hand-written sets of issue 26 load, pass the loader's consistency check, have the
sizes benchmarks/data/README.md states, and split into non-empty tune and test halves per
language. The broken cases below are invented for this test."""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import pytest

from benchmarks.updates_handwritten import SETS, halves, load, validate

SIZES = {
    "1": {("en", "change"): 25, ("en", "control"): 11, ("zh", "change"): 24, ("zh", "control"): 11},
    "2": {("en", "change"): 20, ("en", "control"): 10, ("zh", "change"): 20, ("zh", "control"): 10},
    "3": {("en", "change"): 20, ("en", "control"): 10, ("zh", "change"): 20, ("zh", "control"): 10},
    "4": {("en", "change"): 20, ("en", "control"): 10, ("zh", "change"): 20, ("zh", "control"): 10},
    "5": {("en", "change"): 20, ("en", "control"): 10, ("zh", "change"): 20, ("zh", "control"): 10},
    "6": {("en", "change"): 20, ("en", "control"): 10, ("zh", "change"): 20, ("zh", "control"): 10},
    "7": {("en", "change"): 20, ("en", "control"): 10, ("zh", "change"): 20, ("zh", "control"): 10},
    "8": {("en", "change"): 20, ("en", "control"): 10, ("zh", "change"): 20, ("zh", "control"): 10},
    "9": {("en", "change"): 20, ("en", "control"): 10, ("zh", "change"): 20, ("zh", "control"): 10},
}


@pytest.mark.parametrize("which", sorted(SETS))
def test_set_is_consistent_and_splits_per_language(which: str) -> None:
    if not SETS[which].exists():
        pytest.skip(f"{SETS[which].name} is not committed on this branch yet")
    cases = load(SETS[which])
    assert validate(cases) == []
    assert Counter((c["lang"], c["kind"]) for c in cases) == SIZES[which]
    half_of = halves(cases)
    for lang in ("en", "zh"):
        got = Counter(half_of[c["id"]] for c in cases if c["lang"] == lang)
        assert got["tune"] > 0 and got["test"] > 0, (which, lang, got)


def test_second_set_has_as_of_questions_in_both_languages() -> None:
    cases = load(SETS["2"])
    per_lang = Counter(c["lang"] for c in cases if c.get("as_of"))
    assert per_lang["en"] >= 8 and per_lang["zh"] >= 8


def _case() -> dict[str, Any]:
    note = "# Kiln rota\n\nThe kiln is fired on Mondays."
    later = "# Kiln rota\n\nKiln firing is Wednesdays from now on, Mondays clash with the class."
    return {
        "id": "en-x1", "lang": "en", "kind": "change",
        "documents": [
            {"name": "2030-01-02 kiln.md", "format": "markdown", "content": note},
            {"name": "2030-01-09 kiln.md", "format": "markdown", "content": later},
            {"name": "glazes.md", "format": "markdown", "content": "# Glazes\n\nCeladon is out."},
        ],
        "question": "When is the kiln fired?", "current": ["Wednesday"], "stale": ["Monday"],
        "as_of": [{"date": "2030-01-05", "question": "When is the kiln fired?",
                   "expect": ["Monday"], "not": ["Wednesday"]}],
    }  # fmt: skip


def test_validate_accepts_a_good_case_and_names_each_defect() -> None:
    assert validate([_case()]) == []
    broken = []
    control_with_stale = copy.deepcopy(_case()) | {"kind": "control"}
    broken.append((control_with_stale, "a control none"))
    old_first = copy.deepcopy(_case())
    old_first["documents"][1]["content"] = "Mondays clash with the class, so Wednesdays it is."
    broken.append((old_first, "old value before the new one"))
    no_distractor = copy.deepcopy(_case())
    no_distractor["documents"].pop()
    broken.append((no_distractor, "no distractor"))
    bad_day = copy.deepcopy(_case())
    bad_day["as_of"][0]["date"] = "5 Jan 2030"
    broken.append((bad_day, "YYYY-MM-DD"))
    same_name = copy.deepcopy(_case())
    same_name["documents"][2]["name"] = "2030-01-02 kiln.md"
    broken.append((same_name, "two documents with this file name"))
    for case, words in broken:
        problems = validate([case])
        assert any(words in p for p in problems), (words, problems)
    assert any("duplicate id" in p for p in validate([_case(), _case()]))


def test_a_table_row_in_the_context_is_traced_to_its_document() -> None:
    """memflow states a table row with its columns named; the scorer still finds the document
    that holds it (a new document naming the old value is then not the old value shown)."""
    from types import SimpleNamespace

    from benchmarks.updates_handwritten import score_change

    case = {
        "current": ["Harlowe"],
        "stale": ["Ostley"],
        "documents": [
            {"name": "old.md", "format": "markdown", "content": "Hosting is with Ostley."},
            {
                "name": "new.md",
                "format": "markdown",
                "content": "| Area | Host |\n|---|---|\n| Hosting | Harlowe (left Ostley) |",
            },
        ],
    }
    row = "Area: Hosting | Host: Harlowe (left Ostley)"
    got = score_change(SimpleNamespace(context=f"[2031-02-01]\n{row}"), case)
    assert got == {"current_first": True, "stale_unmarked": False}
    old = score_change(
        SimpleNamespace(context=f"[2031-02-01]\n{row}\nHosting is with Ostley."), case
    )
    assert old["stale_unmarked"]
