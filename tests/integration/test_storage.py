"""Structured memory in, datasets, stats, views — against a real PostgreSQL with pgvector."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import psycopg
import pytest

from memflow import EmbeddingDimensionMismatch, InvalidInput, Memory, NotFound, SchemaOutOfDate
from memflow.config import libpq_url
from memflow.embed.hash import HashEmbedder

TABLES = (
    "dataset",
    "document",
    "chunk",
    "node",
    "edge",
    "node_source",
    "edge_source",
    "node_chunk",
    "episode_summary",
    "facet_search_text",
    "facet_anchor_text",
    "facetpoint_search_text",
    "entity_name",
    "edge_text",
)


def snapshot(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every memflow table (embeddings as text), for exact before/after comparisons."""
    out = {}
    with psycopg.connect(libpq_url(url)) as conn:
        for t in TABLES:
            rows = conn.execute(f"SELECT * FROM memflow.{t}").fetchall()
            out[t] = sorted(tuple(str(v) for v in r) for r in rows)
    return out


def test_seed_example_stores_exactly_the_drafted_nodes(
    mem: Memory, seed_drafts: list[dict[str, Any]]
) -> None:
    ds = mem.dataset("seed")
    res = ds.add_episodes(seed_drafts)
    assert res.status == "written"
    assert ds.stats() | {} == {
        "episodes": 2,
        "facets": 3,
        "facet_points": 1,
        "entities": 2,
        "edges": 3 + 1 + 2,
        "documents": 1,
        "chunks": 0,
        # 2 summaries + 3 facets x 2 fields + 1 point + 2 entity names + 6 distinct edge texts
        "embeddings": 2 + 6 + 1 + 2 + 6,
    }
    names = {e["name"] for e in ds.episodes()}
    assert names == {"API 流式返回改造", "首页文案交付"}
    api = next(e for e in ds.episodes() if e["name"] == "API 流式返回改造")
    tree = ds.episode_tree(api["id"])
    texts = [(r["kind"], r["tree"].split(": ", 1)[1], r["edge_text"]) for r in tree]
    assert ("Facet", "变更边界", "变更边界: 鉴权中间件保持不变，只改响应层和测试。") in texts
    assert (
        "FacetPoint",
        "鉴权中间件不能改",
        "变更边界 -> 鉴权中间件不能改: 改造期间鉴权逻辑保持原样",
    ) in texts
    assert ("Entity", "/chat/completions", "/chat/completions | 要改为流式返回的接口") in texts
    assert ("Entity", "API", "API | 改造对象") in texts
    # The tree is ordered: the episode first, each point right after its facet.
    assert tree[0]["kind"] == "Episode"
    kinds = [r["kind"] for r in tree]
    assert (
        kinds.index("FacetPoint") == kinds.index("Facet") + 1
        or texts[kinds.index("FacetPoint") - 1][1] == "变更边界"
    )


def test_adding_the_same_drafts_again_changes_nothing(
    mem: Memory, db_url: str, seed_drafts: list[dict[str, Any]]
) -> None:
    ds = mem.dataset("seed")
    first = ds.add_episodes(seed_drafts)
    before = snapshot(db_url)
    again = ds.add_episodes(copy.deepcopy(seed_drafts))
    assert again.status == "skipped"
    assert again.document_id == first.document_id
    assert snapshot(db_url) == before


def test_ids_are_deterministic_across_stores(
    db_url: str, seed_drafts: list[dict[str, Any]]
) -> None:
    with Memory.open(db_url, embedder=HashEmbedder(384)) as m:
        a = m.dataset("one").add_episodes(seed_drafts)
        b = m.dataset("one").add_episodes(list(reversed(seed_drafts)))
    # Same dataset, different document (order changed), same episode ids.
    assert b.status == "written"
    assert set(a.episode_ids) == set(b.episode_ids)


def test_shared_entity_is_one_node_per_dataset(mem: Memory) -> None:
    ds = mem.dataset("people")
    ds.add_episode(
        {
            "name": "Mon",
            "summary": "Ines argued about the DB",
            "entities": [{"name": "Ines", "role": "argued"}],
        }
    )
    ds.add_episode(
        {
            "name": "Tue",
            "summary": "Ines shipped it",
            "entities": [{"name": " ines ", "role": "shipped"}],
        }
    )
    assert ds.stats()["entities"] == 1
    assert ds.stats()["edges"] == 2


def test_a_second_dataset_never_appears_in_the_first(
    mem: Memory, db_url: str, seed_drafts: list[dict[str, Any]]
) -> None:
    a = mem.dataset("a")
    b = mem.dataset("b")
    a.add_episodes(seed_drafts)
    b.add_episode(
        {"name": "Only in B", "summary": "something only B knows", "entities": [{"name": "API"}]}
    )
    assert a.stats()["episodes"] == 2
    assert b.stats()["episodes"] == 1
    assert b.stats()["entities"] == 1
    assert {e["name"] for e in a.episodes()} == {"API 流式返回改造", "首页文案交付"}
    with psycopg.connect(libpq_url(db_url)) as conn:
        rows = conn.execute(
            "SELECT DISTINCT episode_id FROM memflow.episode_tree WHERE dataset = 'a'"
        ).fetchall()
        assert {r[0] for r in rows} == {e["id"] for e in a.episodes()}
    datasets = {d.name: d for d in mem.datasets()}
    assert datasets["a"].episodes == 2 and datasets["b"].episodes == 1


def test_drop_dataset_removes_everything(
    mem: Memory, db_url: str, seed_drafts: list[dict[str, Any]]
) -> None:
    mem.dataset("gone").add_episodes(seed_drafts)
    assert mem.drop_dataset("gone") is True
    assert mem.drop_dataset("gone") is False
    assert all(rows == [] for rows in snapshot(db_url).values())


def test_views_read_well_in_psql(
    mem: Memory, db_url: str, seed_drafts: list[dict[str, Any]]
) -> None:
    mem.dataset("seed").add_episodes(seed_drafts)
    with psycopg.connect(libpq_url(db_url)) as conn:
        tree = [r[0] for r in conn.execute("SELECT tree FROM memflow.episode_tree").fetchall()]
        assert "Episode: API 流式返回改造" in tree
        assert "        └─ FacetPoint: 鉴权中间件不能改" in tree
        assert conn.execute("SELECT count(*) FROM memflow.facet_points").fetchone() == (1,)
        assert conn.execute(
            "SELECT name, degree FROM memflow.entities ORDER BY name"
        ).fetchall() == [("/chat/completions", 1), ("API", 1)]
        comment = conn.execute(
            "SELECT obj_description('memflow.episode_tree'::regclass)"
        ).fetchone()
        assert comment is not None and "tree" in comment[0]


def test_invalid_drafts_are_rejected_and_nothing_written(mem: Memory, db_url: str) -> None:
    ds = mem.dataset("bad")
    before = snapshot(db_url)
    with pytest.raises(InvalidInput, match=r"facets\.0\.search_text"):
        ds.add_episodes(
            [
                {"name": "ok", "summary": "fine"},
                {"name": "x", "summary": "y", "facets": [{"search_text": "  "}]},
            ]
        )
    with pytest.raises(InvalidInput):
        ds.add_episodes([])
    assert snapshot(db_url) == before


def test_unknown_dataset_and_episode(mem: Memory) -> None:
    with pytest.raises(NotFound):
        mem.dataset("missing", create=False)
    ds = mem.dataset("present")
    with pytest.raises(NotFound):
        ds.episode_tree(uuid.uuid4())
    with pytest.raises(InvalidInput):
        ds.episode_tree("not-a-uuid")


def test_opening_with_another_dimension_names_both(db_url: str) -> None:
    with pytest.raises(EmbeddingDimensionMismatch, match=r"384-dim.*256-dim"):
        Memory.open(db_url, embedder=HashEmbedder(256))


def test_external_database_behind_raises_schema_out_of_date(fresh_db: str) -> None:
    with pytest.raises(SchemaOutOfDate, match="memflow db upgrade"):
        Memory.open(fresh_db, embedder=HashEmbedder(384))
    # The same database opened with auto_upgrade is brought to head and then opens normally.
    Memory.open(fresh_db, embedder=HashEmbedder(384), auto_upgrade=True).close()
    Memory.open(fresh_db, embedder=HashEmbedder(384)).close()


def test_dimension_is_fixed_at_init_from_the_embedder(fresh_db: str) -> None:
    with Memory.open(fresh_db, embedder=HashEmbedder(64), auto_upgrade=True) as m:
        m.dataset("x").add_episode({"name": "n", "summary": "s"})
    with psycopg.connect(libpq_url(fresh_db)) as conn:
        assert conn.execute(
            "SELECT value FROM memflow.store_meta WHERE key = 'embedding_dim'"
        ).fetchone() == ("64",)
        typ = conn.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = 'memflow.episode_summary'::regclass AND attname = 'embedding'"
        ).fetchone()
        assert typ == ("vector(64)",)


def test_a_dataset_keeps_its_embedder(db_url: str) -> None:
    from memflow import EmbedderMismatch

    with Memory.open(db_url, embedder=HashEmbedder(384)) as m:
        m.dataset("h").add_episode({"name": "n", "summary": "s"})
    with Memory.open(db_url, embedder=_Renamed()) as m:
        ds = m.dataset("h")
        assert ds.stats()["episodes"] == 1  # reading needs no embedder
        with pytest.raises(EmbedderMismatch, match="hash-384"):
            ds.search("s")
        with pytest.raises(EmbedderMismatch):
            ds.add_episode({"name": "x", "summary": "y"})
        m.dataset("fresh").add_episode({"name": "x", "summary": "y"})  # another dataset is fine


class _Renamed(HashEmbedder):
    def __init__(self) -> None:
        super().__init__(384)
        self.name = "other-model-384"


def test_connections_register_pgvector_types_only_where_the_extension_is(
    fresh_db: str, db_url: str
) -> None:
    from sqlalchemy import text

    from memflow.db import engine as dbe

    # A database the migrations have not reached yet has no vector type: connecting still works.
    bare = dbe.make_engine(fresh_db)
    try:
        with dbe.transaction(bare) as conn:
            assert conn.execute(text("SELECT 1")).scalar_one() == 1
    finally:
        bare.dispose()
    # Where the extension is, vectors come back as pgvector values, not text (types registered).
    migrated = dbe.make_engine(db_url)
    try:
        with dbe.transaction(migrated) as conn:
            vec = conn.execute(text("SELECT CAST('[1,2,3]' AS vector)")).scalar_one()
    finally:
        migrated.dispose()
    assert not isinstance(vec, str)
    assert vec.to_list() == [1.0, 2.0, 3.0]
