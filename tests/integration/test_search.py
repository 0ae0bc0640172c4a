"""Episodic search end to end against a real PostgreSQL with pgvector."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from sqlalchemy import event

from memflow import InvalidInput, Memory
from memflow.embed.hash import HashEmbedder
from memflow.embed.local import LocalEmbedder

from ..conftest import REPO


@pytest.fixture
def seeded(db_url: str, seed_drafts: list[dict[str, Any]]) -> Any:
    """The seed article's two episodes, embedded with the real default model."""
    with Memory.open(db_url, embedder=LocalEmbedder()) as m:
        ds = m.dataset("seed")
        ds.add_episodes(seed_drafts)
        yield ds


def test_constraint_question_finds_the_streaming_episode_via_facet_or_point(seeded: Any) -> None:
    resp = seeded.search("API 流式返回那个任务有哪些约束？")
    top = resp.results[0]
    assert top.name == "API 流式返回改造"
    assert top.best_path in {"facet", "point"}
    assert resp.preprocessed["keywords"] == ["API"]
    # The explain trace is a chain a person can follow: a facet or point node, edges, the episode.
    kinds = [s.node_kind or s.relationship for s in top.path]
    assert kinds[-1] == "Episode" and "has_facet" in kinds


def test_delivery_question_finds_the_homepage_episode(seeded: Any) -> None:
    resp = seeded.search("首页文案什么时候交付？")
    assert resp.results[0].name == "首页文案交付"
    assert resp.results[0].context.startswith("[")


def test_every_display_mode_and_timings(seeded: Any) -> None:
    summary = seeded.search("鉴权中间件能改吗", display="summary")
    assert "【变更边界】" in summary.results[0].context
    related = seeded.search("鉴权中间件能改吗", display="highly_related", budget_tokens=40)
    assert "鉴权中间件不能改" in related.context
    from memflow.recall.render import count_tokens

    assert count_tokens(related.context) <= 40
    detail = seeded.search("鉴权中间件能改吗", display="detail")
    assert (
        "鉴权中间件不能改" in detail.results[0].context
        and "/chat/completions" in detail.results[0].context
    )
    for stage in ("embed", "recall_sql", "projection_sql", "score", "render"):
        assert stage in summary.timings_ms


def test_vector_and_lexical_baselines(db_url: str) -> None:
    with Memory.open(db_url, embedder=HashEmbedder(384)) as m:
        ds = m.dataset("base")
        ds.add_episode(
            {
                "name": "db choice",
                "summary": "we picked postgres",
                "facets": [
                    {
                        "search_text": "decision",
                        "anchor_text": "postgres over mysql for latency",
                        "points": [{"search_text": "p99 latency must stay under 500 ms"}],
                    }
                ],
            }
        )
        vec = ds.search("latency under 500 ms", mode="vector")
        assert vec.mode == "vector"
        assert vec.results[0].context == "p99 latency must stay under 500 ms"
        assert vec.results[0].name == "db choice"
        with pytest.raises(InvalidInput):
            ds.search("x", mode="nope")  # type: ignore[arg-type]
        with pytest.raises(InvalidInput):
            ds.search("   ")


def test_search_counts_one_round_trip_each_for_recall_and_projection(
    db_url: str, seed_drafts: list[dict[str, Any]]
) -> None:
    with Memory.open(db_url, embedder=HashEmbedder(384)) as m:
        ds = m.dataset("seed")
        ds.add_episodes(seed_drafts)
        statements: list[str] = []

        def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
            statements.append(statement)

        event.listen(m.engine, "before_cursor_execute", count)
        resp = ds.search("API 流式返回那个任务有哪些约束？")
        summary = list(statements)
        statements.clear()
        related = ds.search("API 流式返回那个任务有哪些约束？", display="highly_related")
        event.remove(m.engine, "before_cursor_execute", count)
    assert resp.results and related.results
    # bind (dataset + HNSW settings) + recall (which also says whether anything was replaced,
    # revision 0004, and the dataset's graph revision, 0009) + the dataset's graph, loaded once
    # into the engine's cache (memflow.recall.graphcache); no per-node queries (issue 28).
    assert len(summary) == 3, summary
    assert "set_config" in summary[0]
    assert "memflow.episode_summary" in summary[1] and "memflow.edge_text" in summary[1]
    assert "superseded_by IS NOT NULL" in summary[1] and "graph_revision" in summary[1]
    assert "memflow.edge" in summary[2] and "restated_by" in summary[2]
    assert "d.metadata" in summary[2] and "node_source" in summary[2]
    # highly_related at the cached revision: the recall also sends every point's distance, and
    # the projection and the expansion (with times and documents) run on the cached graph.
    assert len(statements) == 2, statements
    assert "point_distances" in statements[1]
    # and one relationship index: the expansion's ranking builds it, the final one grows it
    assert "index_grow" in related.timings_ms and "index" not in related.timings_ms
    assert resp.results[0].path and all(step.recorded_at for step in resp.results[0].path
                                        if step.kind == "node")  # fmt: skip


def test_fifty_datasets_search_stays_inside_its_dataset(db_url: str) -> None:
    with Memory.open(db_url, embedder=HashEmbedder(384)) as m:
        for i in range(50):
            m.dataset(f"tenant-{i:02d}").add_episodes(
                [
                    {
                        "name": f"tenant {i} event {j}",
                        "summary": f"shared words about deploys and tenant {i} item {j}",
                        "facets": [
                            {
                                "search_text": f"deploy step {j}",
                                "anchor_text": f"deploy notes {j} for tenant {i}",
                                "points": [
                                    {"search_text": f"tenant {i} fact {j}: deploy at {j} pm"}
                                ],
                            }
                        ],
                    }
                    for j in range(12)
                ]
            )
        target = m.dataset("tenant-07")
        resp = target.search("deploy notes for tenant", top_k=10)
        assert len(resp.results) == 10
        assert all(r.name.startswith("tenant 7 ") for r in resp.results)
        # B's exact sentence searched in A finds nothing of B.
        other = target.search("tenant 42 fact 3: deploy at 3 pm", top_k=10, mode="vector")
        assert other.results and all("tenant 42" not in r.context for r in other.results)


def test_cli_search_json_and_explain(db_url: str) -> None:
    seed = REPO / "examples" / "seed_episodes.json"
    base = [sys.executable, "-m", "memflow.cli"]
    opts = ["--database-url", db_url, "--dataset", "seed", "--embedder", "hash"]
    subprocess.run(
        [*base, "add-episode", str(seed), *opts], check=True, capture_output=True, timeout=120
    )
    out = subprocess.run(
        [*base, "search", "鉴权中间件不能改", *opts, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    assert set(payload) >= {"query", "results", "timings_ms"}
    first = payload["results"][0]
    for key in (
        "rank",
        "episode_id",
        "name",
        "score",
        "best_path",
        "best_facet_id",
        "best_point_id",
        "best_entity_id",
        "path",
        "context",
    ):
        assert key in first
    assert first["name"] == "API 流式返回改造"
    explained = subprocess.run(
        [*base, "search", "鉴权中间件不能改", *opts, "--explain"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (
        "via" in explained.stdout
        and "has_facet" in explained.stdout
        and "timings (ms)" in explained.stdout
    )


def test_lexical_mode_uses_postgres_full_text_and_trigrams(db_url: str) -> None:
    with Memory.open(db_url, embedder=HashEmbedder(384)) as m:
        ds = m.dataset("lex")
        ds.memorize(
            "Alice: the deploy failed at 3pm\nBob: rollback is done\nAlice: thanks Bob\nBob: 鉴权中间件不能改\n",
            content_type="dialog",
        )
        resp = ds.search("who did the rollback?", mode="lexical")
        assert resp.results[0].context == "rollback is done"
        assert resp.context_units[0].sources  # provenance: the turn's chunk key
        cjk = ds.search("鉴权中间件", mode="lexical")
        assert cjk.results and "鉴权中间件不能改" in cjk.results[0].context
