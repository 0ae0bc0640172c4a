"""benchmarks/search_guard.py: the CI guard's verdict, and a small run end to end."""

from __future__ import annotations

import copy
from typing import Any

from benchmarks import search_guard


def _run(episodic: int, vector: int, ratio: float) -> dict[str, Any]:
    return {
        "trees": {
            "this": {
                "episodic": {"statements": episodic, "ms": {"p50": ratio}},
                "vector": {"statements": vector, "ms": {"p50": 1.0}},
                "ratio": ratio,
            }
        }
    }


def test_check_fails_on_a_statement_more_or_a_ratio_half_again_as_high() -> None:
    recorded = {"quick": _run(5, 4, 4.0)}
    assert search_guard.check(_run(5, 4, 4.0), recorded) == []
    assert search_guard.check(_run(4, 3, 5.9), recorded) == []  # fewer, and within 50 %
    more = search_guard.check(_run(6, 4, 4.0), recorded)
    assert len(more) == 1 and "episodic search sends 6 statements" in more[0]
    assert "vector" in search_guard.check(_run(5, 5, 4.0), recorded)[0]
    slower = search_guard.check(_run(5, 4, 6.1), recorded)
    assert len(slower) == 1 and "6.1" in slower[0] and "limit 6.0" in slower[0]
    assert copy.deepcopy(recorded) == {"quick": _run(5, 4, 4.0)}


def test_a_small_run_counts_the_statements_of_each_mode(pg_admin_url: str) -> None:
    trees, shape = search_guard.measure(pg_admin_url, 600, 4, 1, None)
    assert set(trees) == {"this"} and shape["episodes"] >= 5
    this = trees["this"]
    assert this["episodic"]["searches"] == this["vector"]["searches"] == 4
    # bind and recall: after the warm-up searches the dataset's graph is cached at its
    # revision, so the projection and the best episodes' points (with the results' documents)
    # need no statement (memflow.recall.graphcache)
    assert this["episodic"]["statements"] == 2
    assert {"recall_sql", "projection_sql", "expand_rank", "expand_sql", "index_grow",
            "score"} <= set(this["episodic"]["stages_p50"])  # fmt: skip
    assert this["ratio"] > 0
    # the full passes of the cyclic collector each search made, and the others' percentiles
    for mode in ("episodic", "vector"):
        m = this[mode]
        assert 0 <= m["full_gc"] <= m["searches"] and m["full_gc_ms"] >= 0
        assert set(m["ms_without_full_gc"]) == {"p50", "p95", "p99", "mean"}
        assert m["cpu_ms"]["p50"] > 0
