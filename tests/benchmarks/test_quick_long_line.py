"""Smoke test of benchmarks/long_line.py --quick: the same 20 KB text as lines and as one line,
each memorised by the CLI in a child process; progress lines are timed."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import long_line


def test_the_two_inputs_hold_the_same_paragraphs() -> None:
    texts = long_line.texts(8)
    assert texts["lines"].count("\n") > 10 and texts["one-line"].count("\n") == 1
    assert texts["lines"].split() == texts["one-line"].split()


def test_quick_long_line_times_progress_of_both_inputs(pg_admin_url: str, tmp_path: Path) -> None:
    long_line.main(["--quick", "--database-url", pg_admin_url, "--out", str(tmp_path)])
    [run] = json.loads((tmp_path / "long-line.json").read_text())["runs"]
    for name in ("lines", "one-line"):
        r = run[name]
        assert r["status"] == "written" and r["facet_points"] > 0
        assert 0 < r["first_progress_s"] <= r["seconds"] and r["progress_lines"] >= 3
    assert run["lines"]["facet_points"] == run["one-line"]["facet_points"]
    assert run["one_line_over_lines"] > 0
