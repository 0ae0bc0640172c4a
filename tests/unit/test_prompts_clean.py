"""No LoCoMo text in the repository: the prompts under memflow/prompts/ teach with invented
examples, and no code, test, sample or benchmark repeats a speaker name or a phrase of the
benchmark, not even with the names swapped (the evaluation data must not leak into what the
model is told or into what the tests tune against).

The data lives outside the repository (``../shared/data/locomo10.json``). Without it these checks
skip with the reason printed, but in CI (the ``CI`` environment variable set, as ``.ci/run``
does) they fail: a guard that silently checks nothing is no guard."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from benchmarks.common import shared_data

from ..conftest import REPO

LOCOMO = shared_data("locomo10.json")
PROMPTS = sorted((REPO / "memflow" / "prompts").glob("*.md"))
WINDOW = 6
_WORD = re.compile(r"\w+")
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+\b")
PLACEHOLDER = "NAME"
# Words that carry no content: a shared run of six words must hold at least MIN_CONTENT others to
# count (six common words in a row, "i can t wait to", are English, not LoCoMo; so are the idioms
# "let me know if you want" and "i'll let you know", which set 6 of the frozen sets uses).
STOP = frozenset(
    """a an the and or but if so of to in on at by for with from about as into over after before
    up down out off than then too very just also not no nor only own same such both each few more
    most other some any all i me my mine myself we us our ours you your yours he him his she her
    hers it its they them their theirs this that these those who whom whose which what when where
    why how am is are was were be been being have has had having do does did doing will would
    shall should can could may might must s t d ll re ve m don didn doesn isn aren wasn weren won
    wouldn couldn shouldn oh yeah yes hey wow hi ok okay really let know want""".split()
) | {PLACEHOLDER.lower()}
MIN_CONTENT = 2


def windows(text: str, n: int = WINDOW) -> set[tuple[str, ...]]:
    """Every run of ``n`` consecutive words of ``text``, lower-cased."""
    words = [w.lower() for w in _WORD.findall(text)]
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def _turns(sample: dict[str, Any]) -> Iterator[dict[str, Any]]:
    conv = sample["conversation"]
    for key, value in conv.items():
        if re.fullmatch(r"session_\d+", key) and isinstance(value, list):
            yield from value


def _absent(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must check for leaked evaluation data", pytrace=False)
    pytest.skip(reason)


@cache
def _data() -> list[dict[str, Any]]:
    if not LOCOMO.exists():
        _absent(f"{LOCOMO} is absent: nothing to compare with (put the data in ../shared/data/)")
    data: list[dict[str, Any]] = json.loads(LOCOMO.read_text(encoding="utf-8"))
    return data


def _texts(sample: dict[str, Any]) -> Iterator[str]:
    for turn in _turns(sample):
        yield str(turn.get("text", ""))
    for qa in sample.get("qa", []):
        for key in ("question", "answer", "adversarial_answer"):
            if key in qa:
                yield str(qa[key])


@cache
def locomo() -> tuple[frozenset[str], frozenset[tuple[str, ...]]]:
    """Speaker names, and the word windows of every turn, question and answer."""
    names: set[str] = set()
    grams: set[tuple[str, ...]] = set()
    for sample in _data():
        conv = sample["conversation"]
        names.update(str(conv[k]) for k in ("speaker_a", "speaker_b") if conv.get(k))
        names.update(str(turn["speaker"]) for turn in _turns(sample))
        for text in _texts(sample):
            grams |= windows(text)
    return frozenset(names), frozenset(grams)


class Names:
    """Names replaced by one placeholder before the windows are taken, so that a LoCoMo line
    with other people in it still matches: every LoCoMo speaker, and any capitalised word that
    LoCoMo never writes in lower case (a personal or place name: "Priya", "Lisbon"; not
    "Yesterday" at the start of a sentence)."""

    def __init__(self, speakers: frozenset[str], vocabulary: frozenset[str]) -> None:
        alternatives = "|".join(sorted(map(re.escape, speakers), key=len, reverse=True))
        self.speakers = re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)") if speakers else None
        self.vocabulary = vocabulary

    def normalise(self, text: str) -> str:
        if self.speakers is not None:
            text = self.speakers.sub(PLACEHOLDER, text)
        return _CAPITALISED.sub(
            lambda m: m[0] if m[0].lower() in self.vocabulary else PLACEHOLDER, text
        )

    def shingles(self, text: str) -> set[tuple[str, ...]]:
        """The word windows of ``text`` after name normalisation that say something (at least
        ``MIN_CONTENT`` words that are neither common words nor the placeholder)."""
        return {
            g
            for g in windows(self.normalise(text))
            if sum(w not in STOP and not w.isdigit() for w in g) >= MIN_CONTENT
        }


@cache
def locomo_shingles() -> tuple[Names, frozenset[tuple[str, ...]]]:
    """The name normaliser and the normalised windows of every turn, question and answer."""
    speakers, _ = locomo()
    texts = [t for sample in _data() for t in _texts(sample)]
    vocabulary = frozenset(w for t in texts for w in re.findall(r"\b[a-z]+\b", t))
    names = Names(speakers, vocabulary)
    return names, frozenset(g for t in texts for g in names.shingles(t))


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


# The hand-written evaluation sets are frozen: their git history must show them committed before
# any tuning, so they are never edited afterwards. A first name they share with LoCoMo speakers is
# no leak by itself; they still go through the phrase check below, which normalises names.
FROZEN = REPO / "benchmarks" / "data"


def test_no_source_names_a_locomo_speaker() -> None:
    names, _ = locomo()
    # Common first names that LoCoMo also uses are fine in our own inventions only if they are
    # not LoCoMo speakers: any whole-word hit is reported.
    hits = [
        f"{p.relative_to(REPO)}: {n}"
        for p in SOURCES
        if not p.is_relative_to(FROZEN)
        for n in sorted(names)
        if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", p.read_text(encoding="utf-8"))
    ]
    assert hits == [], f"LoCoMo speaker names in the repository: {hits}: invent other people"


def test_names_are_normalised_before_the_windows() -> None:
    names = Names(frozenset({"Ravi Kumar", "Ines"}), frozenset({"thanks", "the", "yesterday"}))
    assert names.normalise("Thanks, Ravi Kumar! Yesterday Ines met Priya in Lisbon.") == (
        "Thanks, NAME! Yesterday NAME met NAME in NAME."
    )
    # A line with other people in it has the same windows: a name-swapped paraphrase is caught.
    a = names.shingles("Yesterday Ines walked the dog along the canal with Priya before work.")
    b = names.shingles("Yesterday Tomasz walked the dog along the canal with Wen before work.")
    assert a and a == b
    # Six words in a row that say nothing are no evidence of a copy.
    assert names.shingles("and it was so nice to") == set()


def test_no_source_repeats_a_locomo_line_even_with_other_names() -> None:
    names, grams = locomo_shingles()
    hits = {
        str(p.relative_to(REPO)): sorted(
            " ".join(g) for g in names.shingles(p.read_text("utf-8")) & grams
        )
        for p in SOURCES
    }
    hits = {p: found[:5] for p, found in hits.items() if found}
    assert hits == {}, f"LoCoMo phrases (names normalised) in the repository: {hits}: invent text"


def test_absent_data_fails_in_ci_and_skips_with_a_reason_elsewhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must check"):
        _absent("the data is absent")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="the data is absent"):
        _absent("the data is absent")
