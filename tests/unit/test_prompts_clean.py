"""The prompts under memflow/prompts/ teach with invented examples: no speaker name and no phrase
of the LoCoMo benchmark (the evaluation data must not leak into what the model is told)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from ..conftest import REPO

LOCOMO = REPO.parent / "shared" / "data" / "locomo10.json"
PROMPTS = sorted((REPO / "memflow" / "prompts").glob("*.md"))
WINDOW = 6
_WORD = re.compile(r"\w+")


def windows(text: str, n: int = WINDOW) -> set[tuple[str, ...]]:
    """Every run of ``n`` consecutive words of ``text``, lower-cased."""
    words = [w.lower() for w in _WORD.findall(text)]
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def _turns(sample: dict[str, Any]) -> Iterator[dict[str, Any]]:
    conv = sample["conversation"]
    for key, value in conv.items():
        if re.fullmatch(r"session_\d+", key) and isinstance(value, list):
            yield from value


@cache
def locomo() -> tuple[frozenset[str], frozenset[tuple[str, ...]]]:
    """Speaker names, and the word windows of every turn, question and answer."""
    if not LOCOMO.exists():
        pytest.skip(f"{LOCOMO} is absent: nothing to compare the prompts with")
    data = json.loads(LOCOMO.read_text(encoding="utf-8"))
    names: set[str] = set()
    grams: set[tuple[str, ...]] = set()
    for sample in data:
        conv = sample["conversation"]
        names.update(str(conv[k]) for k in ("speaker_a", "speaker_b") if conv.get(k))
        for turn in _turns(sample):
            names.add(str(turn["speaker"]))
            grams |= windows(str(turn.get("text", "")))
        for qa in sample.get("qa", []):
            for key in ("question", "answer", "adversarial_answer"):
                if key in qa:
                    grams |= windows(str(qa[key]))
    return frozenset(names), frozenset(grams)


def test_windows_are_lower_cased_word_runs() -> None:
    assert windows("One two, THREE four five six seven!") == {
        ("one", "two", "three", "four", "five", "six"),
        ("two", "three", "four", "five", "six", "seven"),
    }
    assert windows("too short") == set()


def test_there_are_prompts_to_check() -> None:
    assert {p.stem for p in PROMPTS} >= {"extract_system", "extract_user", "route_system"}


@pytest.mark.parametrize("path", PROMPTS, ids=lambda p: p.name)
def test_prompt_names_no_locomo_speaker(path: Path) -> None:
    names, _ = locomo()
    text = path.read_text(encoding="utf-8")
    found = sorted(n for n in names if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", text))
    assert found == [], f"{path.name} names LoCoMo speakers {found}: invent other people"


@pytest.mark.parametrize("path", PROMPTS, ids=lambda p: p.name)
def test_prompt_quotes_no_locomo_phrase(path: Path) -> None:
    _, grams = locomo()
    shared = sorted(windows(path.read_text(encoding="utf-8")) & grams)
    assert shared == [], f"{path.name} repeats LoCoMo text: {[' '.join(g) for g in shared[:5]]}"


# Code, tests, samples and benchmarks (not the prose under docs/, which reports the benchmark).
SOURCES = sorted(
    p
    for top in ("memflow", "tests", "benchmarks", "examples")
    for p in (REPO / top).rglob("*")
    if p.suffix in {".py", ".md", ".json", ".sql"} and p.is_file() and "__pycache__" not in p.parts
)


def test_no_source_names_a_locomo_speaker() -> None:
    names, _ = locomo()
    # Common first names that LoCoMo also uses are fine in our own inventions only if they are
    # not LoCoMo speakers: any whole-word hit is reported.
    hits = [
        f"{p.relative_to(REPO)}: {n}"
        for p in SOURCES
        for n in sorted(names)
        if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", p.read_text(encoding="utf-8"))
    ]
    assert hits == [], f"LoCoMo speaker names in the repository: {hits}: invent other people"
