"""Smoke test of benchmarks/ingest.py --quick: both phases run and the results file is complete."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchmarks import ingest


def test_synthetic_drafts_have_the_benchmark_shape() -> None:
    drafts = ingest.synthetic_drafts(np.random.default_rng(1), 0, 20, 50)
    facets = [len(d.facets) for d in drafts]
    points = [len(f.points) for d in drafts for f in d.facets]
    assert 3 <= np.mean(facets) <= 7
    assert 2.5 <= np.mean(points) <= 5.5
    assert all(1 <= len(d.entities) <= 5 for d in drafts)


def test_quick_ingest_writes_documented_results(pg_admin_url: str, tmp_path: Path) -> None:
    ingest.main(["--quick", "--database-url", pg_admin_url, "--out", str(tmp_path)])
    data = json.loads((tmp_path / "ingest.json").read_text())
    assert set(data["stamp"]) >= {"commit", "date", "machine", "settings"}
    storage = data["storage"]
    for key in ("nodes_per_s", "edges_per_s", "embeddings_per_s", "nodes", "edges", "embeddings"):
        assert storage[key] > 0
    # Every vector was precomputed: the timed loop never fell back to embedding.
    assert storage["embedder_misses"] == 0
    assert storage["stored"]["episodes"] == storage["documents"] * storage["episodes_per_document"]
    # The bulk import of the same drafts stores the same rows.
    bulk = data["storage_bulk"]
    assert bulk["method"].startswith("Dataset.import_episodes")
    assert bulk["stored"] == storage["stored"] and bulk["nodes_per_s"] > 0
    e2e = data["end_to_end"]
    assert e2e["documents"] >= 1 and e2e["turns"] > 0
    assert e2e["documents_per_s"] > 0 and e2e["turns_per_s"] > 0
    assert e2e["stored"]["episodes"] >= e2e["documents"]
    assert data["peak_rss_mb"] >= data["rss_mb"]["start"] > 0
    md = (tmp_path / "ingest.md").read_text()
    assert "## Storage side" in md and "## End to end" in md
    assert md == ingest.markdown(data).rstrip() + "\n"  # the page is the json, rendered
    assert data["stamp"]["script"] == "benchmarks/ingest.py"
