"""Smoke test of benchmarks/bilingual.py --quick: the frozen set's notes memorised, a few
questions asked in both modes, ranks and rates written, the page rendered from its json."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import bilingual


def test_the_split_is_stable_and_stratified() -> None:
    queries = bilingual.load()["queries"]
    halves = bilingual.half_of(queries)
    assert halves == bilingual.half_of(list(reversed(queries)))
    for lang in ("en", "zh"):
        for literal in (True, False):
            ids = [q["id"] for q in queries if q["lang"] == lang and q["literal"] == literal]
            tune = sum(halves[i] == "tune" for i in ids)
            assert tune == (len(ids) + 1) // 2


def test_quick_bilingual_ranks_each_question_in_both_modes(
    pg_admin_url: str, tmp_path: Path
) -> None:
    bilingual.main(["--quick", "--database-url", pg_admin_url, "--out", str(tmp_path)])
    data = json.loads((tmp_path / "bilingual.json").read_text(encoding="utf-8"))
    assert data["documents"] == 30 and data["queries"] == len(data["results"]) == 6
    for row in data["results"]:
        for mode in bilingual.MODES:
            assert row[mode]["rank"] is None or 1 <= row[mode]["rank"] <= bilingual.TOP_K
            assert row[mode]["first"] is not None
    cell = data["summary"]["episodic/all/all/all"]
    assert cell["n"] == 6 and 0.0 <= cell["top1"] <= cell["top3"] <= 1.0
    page = (tmp_path / "bilingual.md").read_text(encoding="utf-8")
    assert page == bilingual.markdown(data).rstrip() + "\n"
    assert "python -m benchmarks.bilingual" in page
