"""One long line (issue 25 item 8): a 2 MB single-line Markdown file printed nothing for 13
minutes; 100 KB took 22.6 s and 200 KB 67.5 s (the sentence splitter read the whole text before
each period again: quadratic); interrupting left an empty dataset.

The splitter's work is counted here, not timed (benchmarks/long_line.py times it): the
characters its searches read grow with the length of the line, not with its square. Progress
starts before the first text is embedded and keeps coming while a large document is written; an
interrupted first memorize leaves no dataset behind.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memflow.embed.hash import HashEmbedder
from memflow.ingest.progress import ProgressEvent
from memflow.memory import Memory
from memflow.text import sentences

from .test_write_stalls import notes


class _Counting:
    """Wraps a compiled pattern; adds up the characters each search reads: from where it starts
    to where its match ends (to the end of its range when nothing matches)."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.read = pattern, 0

    def search(self, string: str, pos: int = 0, endpos: int | None = None) -> Any:
        end = len(string) if endpos is None else min(endpos, len(string))
        found = self.pattern.search(string, pos, end)
        self.read += (found.end() if found else end) - pos
        return found


def _work(text: str, monkeypatch: pytest.MonkeyPatch) -> int:
    word, gap = _Counting(sentences._WORD_BEFORE), _Counting(sentences._NON_WS)
    with monkeypatch.context() as m:
        m.setattr(sentences, "_WORD_BEFORE", word)
        m.setattr(sentences, "_NON_WS", gap)
        pieces = sentences.split_sentences(text)
    assert len(pieces) >= text.count("twice.")  # one sentence per period: the split itself
    return word.read + gap.read


def test_splitting_a_long_line_reads_each_character_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    line = notes(2000).replace("\n", " ")
    short, long = _work(line[: len(line) // 8], monkeypatch), _work(line, monkeypatch)
    assert long <= 50 * len(line)  # per character: a bounded window, not the text before it
    assert long <= 10 * short  # 8 times the line, about 8 times the work (quadratic: 64)


def test_abbreviations_and_initials_still_hold_sentences_together() -> None:
    text = "Dr. Lee met J. Smith at 9 a.m. on the dock. They left. " * 300
    pieces = sentences.split_sentences(text)
    assert pieces[:2] == ["Dr. Lee met J. Smith at 9 a.m. on the dock.", "They left."]
    assert len(pieces) == 600


def test_progress_comes_before_the_first_embedding_and_during_the_write(db_url: str) -> None:
    log: list[str] = []

    class Watched(HashEmbedder):
        def embed_passages(self, texts: Any) -> Any:
            log.append("embed")
            return super().embed_passages(texts)

    def seen(e: ProgressEvent) -> None:
        log.append(e.stage)

    with Memory.open(db_url, embedder=Watched(384)) as mem:
        report = mem.dataset("line").memorize(
            notes(300).replace("\n", " "), extractor="rules", on_progress=seen
        )
    assert report.ok
    assert log[0] == "document" and log.index("document") < log.index("embed")
    writing = [i for i, stage in enumerate(log) if stage == "writing"]
    # The transaction reports its stages (rows, edges, each embedding table), not once only.
    assert len(writing) >= 6, log


@pytest.fixture
def long_file(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "one-line.md"
    path.write_text(notes(3000).replace("\n", " "), encoding="utf-8")
    yield path


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_an_interrupted_first_memorize_leaves_no_dataset(db_url: str, long_file: Path) -> None:
    env = {**os.environ, "MEMFLOW_DATABASE_URL": db_url, "MEMFLOW_EMBEDDER": "hash"}
    cmd = [sys.executable, "-m", "memflow.cli", "memorize", str(long_file), "--dataset",
           "interrupted", "--extractor", "rules", "--progress", "json"]  # fmt: skip
    # The child takes Ctrl-C as a terminal gives it: a runner started in the background (`cmd &`)
    # has SIGINT ignored, and a Python started with it ignored keeps ignoring it.
    proc = subprocess.Popen(
        cmd, env=env, stderr=subprocess.PIPE, text=True, preexec_fn=_sigint_default
    )
    assert proc.stderr is not None
    first = json.loads(proc.stderr.readline())  # progress, before the model's first batch ends
    assert first["stage"] == "document" and first["chunks_total"] > 0
    proc.send_signal(signal.SIGINT)
    rest = proc.communicate(timeout=120)[1]
    assert proc.returncode == 130, rest
    listed = subprocess.run(
        [sys.executable, "-m", "memflow.cli", "datasets", "--json"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == {"datasets": []}
