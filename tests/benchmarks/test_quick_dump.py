"""Smoke test of benchmarks/dump.py --quick: LoCoMo's first conversation (3 sessions, hash
embedder) exported with vectors, imported into a fresh database and replayed on both with the
same figures; a small synthetic dump imported under another name; peak RSS measured per process."""

from __future__ import annotations

import json
import os
from pathlib import Path

from benchmarks import dump, locomo


def test_quick_dump_round_trip_writes_documented_results(pg_admin_url: str, tmp_path: Path) -> None:
    data = os.environ.get("MEMFLOW_LOCOMO_DATA", str(locomo.DATA))
    res = dump.main(
        ["--quick", "--database-url", pg_admin_url, "--out", str(tmp_path), "--data", data]
    )
    written = json.loads((tmp_path / "dump.json").read_text())
    lo, big = written["locomo"], written["large"]
    assert lo["identical"] and lo["figures_source"] == lo["figures_imported"]
    assert lo["questions"] == sum(lo["sql_results_source_vs_imported"].values()) > 0
    assert lo["control_reindexed"]["figures_identical"]
    assert lo["figures_source"]["overall"]["evidence_recall@1000"] > 0
    for run in (*lo["export"], *lo["import"], big["export"], big["import"]):
        assert 50 < run["peak_rss_mb"] < 1000 and run["report"]["seconds"] > 0
    assert big["import"]["report"]["counts"] == big["export"]["report"]["counts"]
    assert big["records"] == sum(big["export"]["report"]["counts"].values()) > 1000
    assert written["stamp"]["commit"] and res["large"]["dump_mb"] == big["dump_mb"]
    md = (tmp_path / "dump.md").read_text()
    assert "figures **identical**" in md and "peak RSS MB" in md
