"""Smoke test of benchmarks/updates.py --quick: every question is asked in both modes, the
supersession counts are consistent, and the files are written."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import updates
from benchmarks.updates_data import conversations


def test_quick_updates_writes_comparable_figures(pg_admin_url: str, tmp_path: Path) -> None:
    res = updates.main(["--quick", "--database-url", pg_admin_url, "--out", str(tmp_path)])
    data = json.loads((tmp_path / "updates.json").read_text())
    assert data["conversations"] == 8 and data["controls"] >= 2
    # Figures per half (tune, test) and for both ("all"); --quick's 8 conversations are all tune.
    assert set(data["accuracy"]) == {"tune", "test", "all"}
    accuracy = data["accuracy"]["all"]
    for mode in updates.MODES:
        cell = accuracy[f"{mode}/all"]
        assert cell["current_first"]["n"] + cell["control_first"]["n"] == 8
        assert 0.0 <= cell["current_first"]["rate"] <= 1.0
        en, zh = accuracy[f"{mode}/en"], accuracy[f"{mode}/zh"]
        assert en["current_first"]["n"] + zh["current_first"]["n"] == cell["current_first"]["n"]
        if res["as_of_supported"]:
            assert cell["as_of_past"]["n"] == sum(c.changes for c in conversations(8))
        else:
            assert "as_of_past" not in cell
    if res["validity_columns"]:
        counts = data["supersession"]["all"]["all"]
        assert counts["valid_points"] > counts["outdated_points"] > 0
        assert 0 <= counts["false_superseded"] <= counts["valid_points"]
    md = (tmp_path / "updates.md").read_text()
    assert "current_first" in md and "vector" in md
    # The hand-written set (issue 26): a smoke run of its first cases, scored and summarised.
    hw = data["handwritten"]
    assert hw["cases"] == 4 and len(hw["results"]) == 4
    assert hw["summary"]["all"]["all"]["changes"] + hw["summary"]["all"]["all"]["controls"] == 4
    assert "hand-written set" in md
