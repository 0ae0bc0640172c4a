"""benchmarks.locomo_identity compares two trees' responses search by search: any change in a
result list, or anywhere else in a response, counts; the page says identical only when every
search of both runs matched."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.locomo_identity import compare, markdown


def _search(key: str, name: str, score: float, context: str = "ctx") -> dict[str, Any]:
    results = [
        {"rank": 1, "kind": "episode", "episode_id": "e1", "score": score},
        {"rank": 2, "kind": "episode", "episode_id": "e2", "score": 2.0},
    ]
    resp = {"query": "q", "results": results, "context": context}
    return {"key": key, "set": name, "question": f"question {key}", "split": "tune", "resp": resp}


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


BASE = [_search(f"conv-1/{i}", s, 1.0) for i in range(3) for s in ("benchmark", "vector")]


def test_identical_runs_are_identical(tmp_path: Path) -> None:
    got = compare(_write(tmp_path / "a", BASE), _write(tmp_path / "b", copy.deepcopy(BASE)))
    assert got["compared"] == got["identical"] == 6
    assert got["differ"] == {"question": 0, "results": 0, "response": 0}
    assert got["questions"] == {"tune": 3, "test": 0}
    assert got["per_set"]["vector"] == {"searches": 3, "identical": 3}


def test_a_changed_score_or_context_counts(tmp_path: Path) -> None:
    after = copy.deepcopy(BASE)
    after[0]["resp"]["results"][0]["score"] = 1.0000001  # the result list
    after[3]["resp"]["context"] = "other"  # the response only
    got = compare(_write(tmp_path / "a", BASE), _write(tmp_path / "b", after))
    assert got["identical"] == 4
    assert got["differ"] == {"question": 0, "results": 1, "response": 2}
    assert got["examples"]["results"] == ["conv-1/0 (benchmark)"]
    assert got["examples"]["response"] == ["conv-1/0 (benchmark)", "conv-1/1 (vector)"]


def test_the_page_says_identical_only_when_every_search_matched(tmp_path: Path) -> None:
    before = _write(tmp_path / "a", BASE)
    settings = {"trees": {"before": "aaa", "after": "bbb"}, "option_sets": {"benchmark": {}}}
    run = {"searches": 6, "seconds": 1.0, "store_revision": "0006"}

    def page(after: list[dict[str, Any]]) -> str:
        res = {
            "stamp": common.stamp(settings),
            "before": run,
            "after": run,
            "comparison": compare(before, _write(tmp_path / "b", after)),
        }
        return markdown(res)

    assert "6 of 6 responses identical: identical**" in page(copy.deepcopy(BASE))
    assert "5 of 5 responses identical: NOT identical**" in page(copy.deepcopy(BASE[:5]))
    changed = copy.deepcopy(BASE)
    changed[2]["resp"]["results"].reverse()
    assert "5 of 6 responses identical: NOT identical**" in page(changed)
