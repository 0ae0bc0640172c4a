"""Recall sorts a small dataset exactly instead of scanning the HNSW indexes (issue 28): the
search's bind statement decides it from the dataset's own node count and its share of the
store, counted under row-level security once the dataset is bound. Invented notes; the hash
embedder."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from memflow.db.engine import transaction
from memflow.db.queries import q, raw
from memflow.recall import sqlrecall
from memflow.recall.config import RecallConfig
from memflow.recall.visibility import params

NOTES = [
    "The greenhouse heater was serviced on Monday; the thermostat now holds 18 degrees.",
    "Lena waters the seedlings on weekdays, Tomas on weekends.",
    "The tomato trays moved to the east bench because the west bench gets too much shade.",
    "Order more coconut coir before the end of the month; the supplier is Verdigris Supplies.",
]


def _nodes(mem: Any, ds: Any) -> int:
    return sum(ds.stats()[k] for k in ("episodes", "facets", "facet_points", "entities"))


def test_bind_counts_the_bound_datasets_nodes(mem: Any) -> None:
    big = mem.dataset("exact-recall-big")
    for note in NOTES:
        big.memorize(note, extractor="rules")
    other = mem.dataset("exact-recall-other")
    held = _nodes(mem, big)
    assert held > 4
    with transaction(mem.engine) as conn:
        # Another dataset bound first: a count taken before bind_search's own binding would see
        # that dataset's rows (none) and call the big one small.
        conn.execute(q("bind_dataset"), {"dataset_id": str(other.id)})
        assert sqlrecall.bind(conn, big.id, 200, exact_nodes=held - 1, exact_share=1.0) is False
        assert sqlrecall.bind(conn, big.id, 200, exact_nodes=held, exact_share=1.0) is True
        # A dataset that is the whole store is not a small share of it.
        assert sqlrecall.bind(conn, big.id, 200, exact_nodes=held, exact_share=0.0) is False


def test_an_exact_recall_ranks_as_the_indexes_do_on_a_small_dataset(mem: Any) -> None:
    ds = mem.dataset("exact-recall-same")
    for note in NOTES:
        ds.memorize(note, extractor="rules")
    exact = RecallConfig(exact_recall_nodes=1_000_000, exact_recall_share=1.0)
    indexed = RecallConfig(exact_recall_nodes=0)
    for query in ("who waters the seedlings?", "where did the tomato trays go?"):
        a = ds.search(query, display="highly_related", config=exact)
        b = ds.search(query, display="highly_related", config=indexed)
        assert [r.episode_id for r in a.results] == [r.episode_id for r in b.results]
        assert a.context == b.context
        assert a.results, query


def test_an_exact_recall_never_plans_an_hnsw_scan(mem: Any) -> None:
    ds = mem.dataset("exact-recall-plan")
    for note in NOTES:
        ds.memorize(note, extractor="rules")
    qvec = mem.embedder.embed_query("who waters the seedlings?")
    with transaction(mem.engine) as conn:
        sqlrecall.bind(conn, ds.id, 200)
        # Sorting made dear: the planner then takes the HNSW order wherever the statement lets
        # it (on rows this few it would otherwise sort).
        conn.exec_driver_sql("SET LOCAL enable_sort = off")

        def plan(exact: bool) -> str:
            lines = conn.execute(
                text("EXPLAIN (COSTS OFF) " + raw("recall")),
                {
                    "dataset_id": ds.id,
                    "q": qvec,
                    "k": 50,
                    "exact": exact,
                    "point_distances": False,
                    **params(None),
                },
            ).scalars()
            return "\n".join(lines)

        assert plan(False).count("hnsw") == 6, plan(False)
        assert "hnsw" not in plan(True), plan(True)
