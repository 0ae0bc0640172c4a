"""Smoke test of benchmarks/reliability.py --quick: a few reliability tests run in a subprocess,
and the documents are built from what they recorded."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import reliability


def test_quick_reliability_reports_what_the_tests_measured(
    pg_admin_url: str, tmp_path: Path
) -> None:
    data = reliability.main(["--quick", "--database-url", pg_admin_url, "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "reliability.json").read_text())
    assert saved["summary"] == data["summary"]
    assert set(saved["stamp"]) >= {"commit", "date", "machine", "settings"}
    tests = data["summary"]["tests"]
    assert tests["total"] == tests["passed"] >= len(reliability.QUICK_TESTS), tests
    recorded = {f["test"] for f in data["figures"]}
    assert recorded >= {"fault_stage", "rls_raw_session"}
    assert data["summary"]["rows_lost"] == {
        "checks": 1, "rows_lost": 0, "tables_changed_by_failed_calls": 0, "documents_lost": 0
    }  # fmt: skip
    iso = data["summary"]["isolation"]
    assert iso["sessions"] == 1 and iso["statements_per_session"][0] > 100
    assert iso["cross_dataset_rows"] == 0
    hostile = data["summary"]["hostile_inputs"]
    assert hostile["doors"] == ["python"] and hostile["calls_cases"] >= 60, hostile
    assert hostile["internal_errors"] == hostile["wrong"] == hostile["integrity_problems"] == 0
    md = (tmp_path / "reliability.md").read_text()
    assert "| hostile inputs through the doors |" in md and "| `python` |" in md
    assert "| rows lost | **0** committed rows missing over 1 checks" in md
    # What the quick selection does not run is said to be unmeasured, never filled in.
    assert "| load held | not measured in this run |" in md
    assert "`before_commit`" in md and "`embedding`" not in md
