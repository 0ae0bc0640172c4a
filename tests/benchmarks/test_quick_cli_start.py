"""Smoke test of benchmarks/cli_start.py --quick: `memflow --version`, `--help` and a cold
search, each a new process, with this tree as both trees; the page is the script's rendering."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import cli_start

from ..conftest import REPO


def test_quick_cli_start_times_every_command_and_the_search_stages(
    pg_admin_url: str, tmp_path: Path
) -> None:
    cli_start.main(["--quick", "--database-url", pg_admin_url, "--base-tree", str(REPO),
                    "--out", str(tmp_path)])  # fmt: skip
    data = json.loads((tmp_path / "cli-start.json").read_text())
    assert [t["label"] for t in data["trees"]] == ["this", "base"]
    assert data["stamp"]["script"] == "benchmarks/cli_start.py"
    for name in ("--version", "--help", "search"):
        for label in ("this", "base"):
            s = data["commands"][name][label]
            assert len(s["wall_s"]) == data["runs"] == 1
            assert 0 < s["min_s"] <= s["median_s"] <= s["max_s"] and s["median_cpu_s"] > 0
    stages = data["stages"]["this"]
    for key in ("python", "imports", "recorded_embedder", "open", "model_load", "embed", "search"):
        assert stages[key] is not None and stages[key] > 0, key
    assert stages["imports"] < stages["total"] < stages["wall"]
    page = (tmp_path / "cli-start.md").read_text()
    assert page == cli_start.markdown(data).rstrip() + "\n"
    assert "python -m benchmarks.cli_start" in page and "`memflow search`" in page
