"""Graph projection in SQL: 2 hops inside the dataset, capped, and hub-guarded."""

from __future__ import annotations

from typing import Any

from memflow import Memory
from memflow.db.engine import transaction
from memflow.embed.hash import HashEmbedder
from memflow.recall import sqlrecall
from memflow.recall.config import RecallConfig
from memflow.store.plan import entity_id


def _hub_dataset(m: Memory, n: int) -> Any:
    ds = m.dataset("hub")
    ds.add_episodes(
        [
            {
                "name": f"standup {i}",
                "summary": f"daily standup number {i}",
                "facets": [{"search_text": f"update {i}", "anchor_text": f"status update {i}"}],
                "entities": [{"name": "user", "role": "speaker"}],
            }
            for i in range(n)
        ]
    )
    return ds


def test_hub_entity_contributes_a_bounded_set_and_says_so(db_url: str) -> None:
    with Memory.open(db_url, embedder=HashEmbedder(384)) as m:
        ds = _hub_dataset(m, 120)
        hub = entity_id(ds.id, "user")
        cfg = RecallConfig(hub_fanout=20)
        with transaction(m.engine) as conn:
            sqlrecall.bind(conn, ds.id, 100)
            graph = sqlrecall.project(conn, ds.id, [hub], cfg)
    episodes = [n for n in graph.nodes.values() if n.kind == "Episode"]
    assert len(episodes) == 20  # not 120
    assert any("hub guard" in note and "'user'" in note for note in graph.notes)
    # Only the links scoring can use are walked (towards episodes); each joins kept nodes.
    assert {e.relationship for e in graph.edges} == {"involves_entity"}
    assert all(e.src in graph.nodes and e.dst in graph.nodes for e in graph.edges)


def test_two_hops_from_a_point_reach_its_episode(db_url: str) -> None:
    with Memory.open(db_url, embedder=HashEmbedder(384)) as m:
        ds = m.dataset("tree")
        ds.add_episode(
            {
                "name": "E",
                "summary": "episode",
                "facets": [
                    {"search_text": "F", "anchor_text": "facet", "points": [{"search_text": "P"}]}
                ],
            }
        )
        resp = ds.search("P", display="detail")
        point = resp.results[0].best_point_id or resp.results[0].best_facet_id
        with transaction(m.engine) as conn:
            sqlrecall.bind(conn, ds.id, 100)
            graph = sqlrecall.project(conn, ds.id, [point], RecallConfig())
    assert sorted(n.kind for n in graph.nodes.values()) in (
        ["Episode", "Facet", "FacetPoint"],
        ["Episode", "Facet"],
    )
    assert resp.results[0].name == "E" and "P" in resp.results[0].context


def test_hits_are_followed_first_through_a_hub(db_url: str) -> None:
    with Memory.open(db_url, embedder=HashEmbedder(384)) as m:
        ds = _hub_dataset(m, 60)
        resp = ds.search("daily standup number 37", top_k=3, config=RecallConfig(hub_fanout=5))
    assert resp.results[0].name == "standup 37"


def test_projection_is_capped_keeping_the_best_chains(db_url: str) -> None:
    with Memory.open(db_url, embedder=HashEmbedder(384)) as m:
        ds = _hub_dataset(m, 40)
        hub = entity_id(ds.id, "user")
        cfg = RecallConfig(hub_fanout=100, max_projection_nodes=30)
        with transaction(m.engine) as conn:
            sqlrecall.bind(conn, ds.id, 100)
            graph = sqlrecall.project(conn, ds.id, [hub], cfg)
    kinds = [n.kind for n in graph.nodes.values()]
    assert len(kinds) == 30
    assert "Entity" in kinds  # the seed itself is kept first, then the episodes it reaches


def test_projection_never_leaves_the_dataset(db_url: str) -> None:
    with Memory.open(db_url, embedder=HashEmbedder(384)) as m:
        a = _hub_dataset(m, 5)
        b = m.dataset("other")
        b.add_episode({"name": "secret", "summary": "b only", "entities": [{"name": "user"}]})
        with transaction(m.engine) as conn:
            sqlrecall.bind(conn, a.id, 100)
            # B's entity id and episode id asked for in A's projection: nothing comes back.
            graph = sqlrecall.project(conn, a.id, [entity_id(b.id, "user")], RecallConfig())
    assert graph.nodes == {}


def test_episode_leaves_and_sources_flag_change_only_the_work(db_url: str) -> None:
    """Episodes have no parents on the walked edges: marking Episode hits as leaves yields the same
    subgraph. Facets' provenance is read only when asked for (evidence units); FacetPoints and
    an Episode's first chunk always (results' citations)."""
    with Memory.open(db_url, embedder=HashEmbedder(384)) as m:
        ds = m.dataset("chat")
        ds.memorize(
            "Ana: I moved to Lisbon in May.\nBen: How is the new flat?\nAna: Small but bright.",
            content_type="dialog",
        )
        hits = ds.search("Where did Ana move?", display="highly_related")
        units = [u.node_id for u in hits.context_units]
        episodes = [r.episode_id for r in hits.results]
        seeds = [*episodes, *units]
        with transaction(m.engine) as conn:
            sqlrecall.bind(conn, ds.id, 100)
            full = sqlrecall.project(conn, ds.id, seeds, RecallConfig())
            pruned = sqlrecall.project(conn, ds.id, seeds, RecallConfig(), leaves=set(episodes))
            bare = sqlrecall.project(conn, ds.id, seeds, RecallConfig(), with_sources=False)
    assert units and episodes
    assert pruned.nodes == full.nodes
    assert sorted(map(repr, pruned.edges)) == sorted(map(repr, full.edges))
    assert any(n.sources for n in full.nodes.values() if n.kind == "FacetPoint")
    assert any(n.sources for n in full.nodes.values() if n.kind == "Facet")
    assert all(not n.sources for n in bare.nodes.values() if n.kind in ("Facet", "Entity"))
    for node_id, node in bare.nodes.items():
        if node.kind in ("FacetPoint", "Episode"):
            assert node.sources and node.sources == full.nodes[node_id].sources
            assert node.kind != "Episode" or len(node.sources) == 1  # its first chunk
    assert bare.nodes.keys() == full.nodes.keys()
