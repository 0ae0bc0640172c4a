"""Smoke test of benchmarks/updates_locomo.py --quick (one test-half conversation, three sessions,
hash embedder): two trees ingest and measure it on databases of their own; with the same tree on
both sides every figure and every count agree, and the result holds counts only (no LoCoMo text)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import common, locomo, updates_locomo


def test_quick_run_compares_two_trees(pg_admin_url: str, tmp_path: Path) -> None:
    argv = ["--quick", "--base", str(common.REPO), "--database-url", pg_admin_url,
            "--out", str(tmp_path)]  # fmt: skip
    updates_locomo.main(argv)
    data = json.loads((tmp_path / "updates-locomo.json").read_text(encoding="utf-8"))
    assert data["questions"] > 0
    assert set(data["comparison"]["figures"]) == set(updates_locomo.SYSTEMS)
    assert data["comparison"]["largest_points"] == 0.0 and data["comparison"]["within"]
    assert data["base"]["closures"] == data["this"]["closures"]
    (conv,) = data["this"]["closures"].values()  # the first conversation of the test half
    assert conv["points"] > 0 and 0 <= conv["closed"] <= conv["points"]
    page = (tmp_path / "updates-locomo.md").read_text(encoding="utf-8")
    assert page == updates_locomo.markdown(data).rstrip() + "\n"
    assert "python -m benchmarks.updates_locomo" in page
    convs, _ = locomo.load(locomo.DATA)
    first = next(c for c in convs if locomo.split_of(c) == "test")
    texts = [t for t in first.turn_texts().values() if len(t) > 30]
    written = json.dumps(data, ensure_ascii=False)
    assert texts and not any(t in written for t in texts)
