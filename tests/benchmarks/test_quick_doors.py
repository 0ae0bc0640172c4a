"""Smoke test of benchmarks/doors.py --quick: all doors answer, agree, and the files are written."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import doors


def test_quick_doors_writes_comparable_latencies(pg_admin_url: str, tmp_path: Path) -> None:
    doors.main(["--quick", "--database-url", pg_admin_url, "--out", str(tmp_path)])
    data = json.loads((tmp_path / "doors.json").read_text())
    assert set(data["latency_ms"]) == set(doors.DOORS)
    assert all(v["p50"] > 0 for v in data["latency_ms"].values())
    # Server-Timing gave the server's own time: the rest of the round trip is positive and
    # below the whole request's time.
    for door in ("http", "http_stdlib"):
        outside = data["round_trip_outside_search_ms"][door]["p50"]
        assert 0 < outside < data["latency_ms"][door]["p50"]
        assert data["http_layer_cpu_ms_per_search"][door] > 0
    assert data["searches_per_door"] == 5 and data["result_mismatches"] == 0
    assert data["store"]["episodes"] >= 4
    md = (tmp_path / "doors.md").read_text()
    assert "hash embedder" in md and "HTTP overhead" in md and "Server-Timing" in md
