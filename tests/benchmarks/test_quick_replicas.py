"""Smoke test of benchmarks/replicas.py --quick: a primary and a standby from the embedded
binaries, a few clients against each setup, and read-your-writes pairs through the replica."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import replicas


def test_quick_replicas_reports_both_setups_and_read_your_writes(tmp_path: Path) -> None:
    data = replicas.main(["--quick", "--out", str(tmp_path), "--pairs", "20"])
    saved = json.loads((tmp_path / "replicas.json").read_text())
    assert saved["phases"] == json.loads(json.dumps(data["phases"]))
    alone, replicated = data["phases"]["primary only"], data["phases"]["primary + 1 replica"]
    for phase in (alone, replicated):
        assert phase["searches"] > 0 and phase["failed_searches"] == 0, phase
        assert phase["episodes_written"] > 0 and phase["failed_writes"] == 0, phase
    assert alone["reads_served"].get("replica", 0) == 0
    assert replicated["reads_served"]["replica"] > 0  # the standby took searches
    ryw = data["read_your_writes"]
    assert ryw["found"] == ryw["pairs"] == 20 and ryw["reads"]["replica"] > 0
    md = (tmp_path / "replicas.md").read_text()
    assert "share its 2 cores" in md or "share its" in md
    assert "**20 of 20**" in md
