"""Smoke test of benchmarks/rls.py --quick: two child processes (here both this tree), each on
its own migrated store, take turns; the results file has both sides and their ratio."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import rls
from memflow.db import migrate

from ..conftest import REPO


def test_quick_rls_compares_two_trees_in_one_run(pg_admin_url: str, tmp_path: Path) -> None:
    data = rls.main(
        [
            "--quick",
            "--base-tree",
            str(REPO),
            "--database-url",
            pg_admin_url,
            "--out",
            str(tmp_path),
        ]
    )
    saved = json.loads((tmp_path / "rls.json").read_text())
    assert saved["searches"] == {"before": 10, "after": 10} == data["searches"]
    head = migrate.head_revision()
    assert saved["revisions"] == {"before": head, "after": head}  # the same tree twice
    assert saved["latency_ms"]["after"]["p50"] > 0 and saved["ratio_p50"] > 0
    assert "after / before: median" in (tmp_path / "rls.md").read_text()
