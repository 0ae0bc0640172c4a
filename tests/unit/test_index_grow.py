"""A search builds its relationship index once: the expansion's ranking builds it, and the final
ranking takes it grown by the points the expansion added (issue 28). Grown, it is the index a
build of the expanded graph makes."""

from __future__ import annotations

import uuid
from dataclasses import fields, replace

from memflow.recall.scoring import RelationshipIndex
from memflow.recall.types import GraphEdge, GraphNode, Subgraph


def _id(name: str) -> uuid.UUID:
    return uuid.uuid5(uuid.NAMESPACE_URL, name)


def _graph() -> Subgraph:
    g = Subgraph(episode_count=2)
    for name, kind in (("e1", "Episode"), ("e2", "Episode"), ("f1", "Facet"), ("f2", "Facet"),
                       ("p1", "FacetPoint"), ("n1", "Entity")):  # fmt: skip
        g.nodes[_id(name)] = GraphNode(id=_id(name), kind=kind, name=name, search_text=f"{name} t")  # type: ignore[arg-type]
    for src, rel, dst in (("e1", "has_facet", "f1"), ("e2", "has_facet", "f2"),
                          ("f1", "has_point", "p1"), ("n1", "involves_entity", "f1")):  # fmt: skip
        g.edges.append(GraphEdge(_id(src), rel, _id(dst), f"{src} {dst}"))  # type: ignore[arg-type]
    return g


def _expand(g: Subgraph) -> None:
    """As ``sqlrecall.expand_points`` does: new points and their links, in place, at the end."""
    for name, facet, text in (("p0", "f1", "a first"), ("p9", "f2", "z last"), ("p5", "f3", "m")):
        g.nodes[_id(name)] = GraphNode(id=_id(name), kind="FacetPoint", search_text=text)
        g.edges.append(GraphEdge(_id("e2"), "has_facet", _id(facet), "again"))
        g.edges.append(GraphEdge(_id(facet), "has_point", _id(name), text))


def _state(index: RelationshipIndex) -> dict[str, object]:
    return {f.name: getattr(index, f.name) for f in fields(index) if f.name != "nodes"}


def test_a_grown_index_is_the_index_of_the_expanded_graph() -> None:
    g = _graph()
    index = RelationshipIndex.build(g)
    before = {k: repr(v) for k, v in _state(index).items()}
    known = len(g.edges)
    _expand(g)
    grown = index.grow(g, known)
    fresh = RelationshipIndex.build(g)
    assert _state(grown) == _state(fresh)
    # the expansion changed the index: sorted points of f1 and f2, new edges
    assert {k: repr(v) for k, v in _state(grown).items()} != before
    assert grown.points_by_facet[_id("f1")] == fresh.points_by_facet[_id("f1")]
    assert len(grown.points_by_facet[_id("f1")]) == 2


def test_a_new_graph_or_a_new_episode_gets_a_new_build() -> None:
    g = _graph()
    index = RelationshipIndex.build(g)
    known = len(g.edges)
    g.nodes[_id("e3")] = GraphNode(id=_id("e3"), kind="Episode", name="a")
    g.edges.append(GraphEdge(_id("e3"), "has_facet", _id("f2"), "x"))
    assert _state(index.grow(g, known)) == _state(RelationshipIndex.build(g))
    other = replace(g, nodes=dict(g.nodes))
    assert index.grow(other, known).nodes is other.nodes


def test_stored_content_keys_order_the_nodes_they_hold() -> None:
    """A cache's content keys (graphcache.CachedGraph.content_key) order the nodes of the
    subgraph at the build; nodes an expansion adds get theirs made; an id without a node, none."""
    g = _graph()
    order = {_id("e1"): "b", _id("e2"): "a"}  # (e2 first, as its content would not put it)
    asked: list[int] = []

    def stored(i: int) -> str | None:
        asked.append(i)
        return order.get(uuid.UUID(int=i))

    index = RelationshipIndex.build(g, stored)
    assert index.episodes == [_id("e2"), _id("e1")]
    known = len(g.edges)
    _expand(g)
    asked.clear()
    grown = index.grow(g, known)
    assert grown.keys[_id("p0")] == RelationshipIndex.build(g).keys[_id("p0")] != ""
    assert _id("p0").int not in asked and grown.keys[_id("nowhere")] == ""
