"""The reads ``memflow ui`` adds (sql/inspect.sql): an episode as a tree with its edge texts,
citations and validity, scoped to its dataset."""

from __future__ import annotations

from typing import Any

import pytest

from memflow.db import engine as dbe
from memflow.errors import NotFound
from memflow.memory import Dataset, Memory
from memflow.store import reads
from memflow.ui.pages import episode_tree

NOTE = """# Orders migration

On 12 March 2024 the team agreed to move the orders database to PostgreSQL 16.
Priya owns the migration. Tom reviews every schema change.
"""


def graph(ds: Dataset, episode_id: Any, max_citations: int = 20) -> list[dict[str, Any]]:
    with dbe.transaction(ds.memory.engine, ds.id) as conn:
        return reads.episode_graph(conn, ds.id, ds.name, episode_id, max_citations=max_citations)


def test_a_drafted_episode_reads_back_as_its_tree(
    mem: Memory, seed_drafts: list[dict[str, Any]]
) -> None:
    ds = mem.dataset("a")
    episode_id = ds.add_episode(seed_drafts[0]).episode_ids[0]
    tree = episode_tree(graph(ds, episode_id))
    assert (tree.kind, tree.text, tree.relationship) == ("Episode", "API 流式返回改造", None)
    facets = [c for c in tree.children if c.kind == "Facet"]
    entities = [c for c in tree.children if c.kind == "Entity"]
    assert sorted(f.text for f in facets) == sorted(["实施方案", "变更边界"])
    assert sorted(e.text for e in entities) == sorted(["/chat/completions", "API"])
    assert tree.children == facets + entities  # facets first
    boundary = next(f for f in facets if f.text == "变更边界")
    assert boundary.detail == "鉴权中间件保持不变，只改响应层和测试。"
    points = [c for c in boundary.children if c.kind == "FacetPoint"]
    assert [p.text for p in points] == ["鉴权中间件不能改"]
    edges = [*tree.children, *boundary.children]
    assert all(n.relationship and n.edge_text for n in edges)
    assert {n.relationship for n in edges} == {"has_facet", "involves_entity", "has_point"}
    assert not points[0].closed and points[0].superseded_by is None and points[0].recorded_at
    assert points[0].created_at  # when memflow wrote it, beside the source's date


def test_points_cite_their_messages_and_show_what_replaced_them(mem: Memory) -> None:
    ds = mem.dataset("a")
    doc = ds.memorize(NOTE.encode()).documents[0]
    episode_id = doc.episode_ids[0]
    tree = episode_tree(graph(ds, episode_id))
    points = [p for f in tree.children for p in f.children if p.kind == "FacetPoint"]
    tom = next(p for p in points if "Tom reviews" in p.text)
    assert tom.citations and {c.document_id for c in tom.citations} == {str(doc.id)}
    assert all(c.key and c.source for c in tom.citations)
    assert len(tree.citations) > 1
    capped = episode_tree(graph(ds, episode_id, max_citations=1))
    assert len(capped.citations) == 1

    new_id = ds.correct(tom.id, "Dana reviews every schema change.")
    after = episode_tree(graph(ds, episode_id))
    versions = {p.id: p for f in after.children for p in f.children if p.kind == "FacetPoint"}
    old, new = versions[tom.id], versions[new_id]
    assert old.closed and old.superseded_by == new_id
    assert old.superseded_by_text == "Dana reviews every schema change."
    assert new.supersedes and not new.closed


def test_an_episode_is_read_only_through_its_own_dataset(
    mem: Memory, seed_drafts: list[dict[str, Any]]
) -> None:
    episode_id = mem.dataset("a").add_episode(seed_drafts[0]).episode_ids[0]
    other = mem.dataset("b")
    other.add_episode(seed_drafts[1])
    with pytest.raises(NotFound, match="no episode"):
        graph(other, episode_id)
