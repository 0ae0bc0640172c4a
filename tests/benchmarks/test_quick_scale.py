"""Smoke test of benchmarks/scale.py --quick: the harness runs end to end and writes its files."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import scale, synth

STAGES = {"recall_sql", "projection_sql", "bonus", "index", "score", "render"}
PER_SIZE = {
    "p50_ms", "p95_ms", "p99_ms", "exact_p50_ms", "speedup_vs_exact", "lower_bound_p50_ms",
    "overlap@10", "source_episode@10", "stage_ms", "projection_scoring_share", "concurrency",
    "small_dataset", "store", "plan", "projected_mean",
}  # fmt: skip


def test_dataset_plan_has_one_large_and_one_small_dataset() -> None:
    plans = synth.plan_datasets(100_000)
    assert [p.role for p in plans].count("large") == 1
    assert [p.role for p in plans].count("small") == 1
    assert abs(sum(p.target_rows for p in plans) - 100_000) < len(plans)
    assert len({p.id for p in plans}) == len(plans)


def test_quick_scale_writes_documented_results(pg_admin_url: str, tmp_path: Path) -> None:
    scale.main(
        ["--quick", "--database-url", pg_admin_url, "--out", str(tmp_path), "--sizes", "2000"]
    )
    data = json.loads((tmp_path / "scale.json").read_text())
    assert set(data["stamp"]) >= {"commit", "date", "machine", "settings"}
    res = data["sizes"]["2000"]
    assert set(res) >= PER_SIZE
    assert set(res["stage_ms"]) >= STAGES
    assert "embed" not in res["stage_ms"]
    assert set(res["concurrency"]) == {"1", "4", "16"}
    for level in res["concurrency"].values():
        assert level["errors"] == 0
        assert level["searches"] > 0
    # A store of ~2000 embedding rows really was loaded, over many datasets.
    assert 1500 <= res["store"]["embedding_rows"] <= 2600
    assert res["store"]["datasets"] > 3
    # HNSW and exact recall agree on such a small store, and the query's source episode is found.
    assert res["overlap@10"] >= 0.9
    assert res["source_episode@10"]["exact"] >= 0.5
    assert res["p50_ms"] > 0 and res["exact_p50_ms"] > 0
    # The projection handed the scorer a real subgraph: facets, points and the edges between them.
    assert res["projected_mean"]["FacetPoint"] > 0 and res["projected_mean"]["edges"] > 0
    md = (tmp_path / "scale.md").read_text()
    assert "# Search latency and scale" in md and "Targets at 2,000 rows" in md
