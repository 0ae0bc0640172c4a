"""benchmarks/updates.py's page: a hand-written set also measured by the --before result shows
the before figures beside its rows; without one the table is as before. Figures invented."""

from __future__ import annotations

import json
from typing import Any

from benchmarks import updates

REPO_PAGE = updates.common.REPO / "docs" / "benchmarks" / "updates.json"


def _summary(cf: float, stale: float) -> dict[str, Any]:
    cell = {"changes": 4, "current_first": cf, "stale_unmarked": stale, "controls": 2,
            "control_right": 1.0, "false_closures": 0, "as_of_questions": 1, "as_of_right": 1.0}  # fmt: skip
    return {half: {lang: dict(cell) for lang in ("en", "zh", "all")}
            for half in ("tune", "test", "all")}  # fmt: skip


def test_before_figures_of_a_hand_written_set_sit_beside_its_rows() -> None:
    res = json.loads(REPO_PAGE.read_text(encoding="utf-8"))
    res.get("before", {}).pop("handwritten", None)  # the page's own before figures
    plain = updates.markdown(res)
    assert "before current first" not in plain
    res["handwritten3"] = {"cases": 6, "split": "by id", "summary": _summary(0.75, 0.25)}
    res["before"] = {"label": "base X", "accuracy": res.get("before", {}).get("accuracy", {}),
                     "handwritten": {"handwritten3": _summary(0.5, 0.5)}}  # fmt: skip
    page = updates.markdown(res)
    assert "The third frozen hand-written set" in page and "before current first" in page
    row = next(x for x in page.splitlines() if x.startswith("| tune | en | 0.75 (4)"))
    assert row.rstrip(" |").endswith("0.5 | 0.5")
    assert "- before: base X" in page
