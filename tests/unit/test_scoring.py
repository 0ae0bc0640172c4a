"""Bundle scoring: the seed example, every path type, ties, direct hits, time bonus, pipeline."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from memflow.recall.config import RecallConfig
from memflow.recall.pipeline import hit_ids_for_projection, rank, respond
from memflow.recall.preprocess import PreprocessedQuery
from memflow.recall.scoring import RelationshipIndex, score_bundles, time_overlap
from memflow.recall.types import GraphEdge, GraphNode, Hit, NodeKind, Relationship, Subgraph
from memflow.text.timeparse import TimeMatch

OFF = RecallConfig(facet_discount=False)
ON = RecallConfig(facet_discount=True)


def nid(name: str) -> uuid.UUID:
    return uuid.uuid5(uuid.NAMESPACE_URL, name)


class G:
    """A tiny graph builder: nodes by name, edges by name pair."""

    def __init__(self) -> None:
        self.nodes: dict[uuid.UUID, GraphNode] = {}
        self.edges: list[GraphEdge] = []

    def node(self, name: str, kind: NodeKind, **kw: object) -> uuid.UUID:
        text = {"search_text": name} if kind in ("Facet", "FacetPoint") else {}
        self.nodes[nid(name)] = GraphNode(id=nid(name), kind=kind, name=name, **{**text, **kw})  # type: ignore[arg-type]
        return nid(name)

    def edge(self, a: str, rel: Relationship, b: str, text: str | None = None) -> str:
        t = text if text is not None else f"{a} -> {b}"
        self.edges.append(GraphEdge(src=nid(a), relationship=rel, dst=nid(b), edge_text=t))
        return t

    def index(self) -> RelationshipIndex:
        return RelationshipIndex.build(Subgraph(nodes=self.nodes, edges=self.edges))


def seed_graph() -> G:
    g = G()
    g.node("E1", "Episode")
    g.node("E2", "Episode")
    g.node("F2", "Facet")
    g.node("P1", "FacetPoint")
    g.edge("E1", "has_facet", "F2")
    g.edge("F2", "has_point", "P1")
    return g


SEED_BEST = {nid("P1"): 0.08, nid("F2"): 0.12, nid("E1"): 0.36, nid("E2"): 0.62}
SEED_EDGES = {"F2 -> P1": 0.04, "E1 -> F2": 0.05}


def test_seed_example_without_discount() -> None:
    bundles = score_bundles(seed_graph().index(), SEED_BEST, SEED_EDGES, OFF)
    assert [b.episode_id for b in bundles] == [nid("E1"), nid("E2")]
    e1, e2 = bundles
    assert e1.score == pytest.approx(0.22)
    assert e1.best_path == "facet"  # the formula's minimum, not the article's "point"
    assert e1.best_facet_id == nid("F2") and e1.best_point_id is None
    assert e2.score == pytest.approx(0.92) and e2.best_path == "direct_episode"


def test_seed_example_with_facet_discount() -> None:
    bundles = score_bundles(seed_graph().index(), SEED_BEST, SEED_EDGES, ON)
    assert bundles[0].score == pytest.approx(0.15)  # 0.12 + 0.3 * (0.05 + 0.05)


def test_strong_facet_discount_is_flat_step_and_never_raises() -> None:
    best = {nid("F2"): 0.05}
    missed = score_bundles(seed_graph().index(), best, {}, ON)[0]
    assert missed.score == pytest.approx(0.05 + 0.15)  # edge missed: 0.95 step -> flat 0.15
    cheap = score_bundles(seed_graph().index(), best, {"E1 -> F2": 0.0}, ON)[0]
    assert cheap.score == pytest.approx(0.05 + 0.05)  # the normal step is cheaper: kept
    plain = score_bundles(seed_graph().index(), best, {}, OFF)[0]
    assert plain.score == pytest.approx(0.05 + 0.95)


def test_point_path_wins() -> None:
    best = {nid("P1"): 0.0, nid("F2"): 0.5}
    b = score_bundles(seed_graph().index(), best, SEED_EDGES, OFF)[0]
    assert b.best_path == "point"
    assert (b.best_facet_id, b.best_point_id) == (nid("F2"), nid("P1"))
    assert b.score == pytest.approx(0.0 + 0.04 + 0.05 + 0.05 + 0.05)


def entity_graph() -> G:
    g = seed_graph()
    g.node("Maria", "Entity")
    g.node("Bob", "Entity")
    g.edge("F2", "involves_entity", "Maria")
    g.edge("E1", "involves_entity", "Bob")
    return g


def test_facet_entity_path_wins() -> None:
    best = {nid("Maria"): 0.01, nid("Bob"): 0.5}
    edges = {"F2 -> Maria": 0.02, "E1 -> F2": 0.03}
    b = score_bundles(entity_graph().index(), best, edges, OFF)[0]
    assert b.best_path == "facet_entity"
    assert (b.best_facet_id, b.best_entity_id) == (nid("F2"), nid("Maria"))
    assert b.score == pytest.approx(0.01 + 0.02 + 0.05 + 0.03 + 0.05)


def test_entity_path_wins() -> None:
    best = {nid("Bob"): 0.02, nid("E1"): 0.1, nid("F2"): 0.3}
    b = score_bundles(entity_graph().index(), best, {"E1 -> Bob": 0.01}, OFF)[0]
    assert b.best_path == "entity" and b.best_entity_id == nid("Bob")
    assert b.score == pytest.approx(0.08)


def test_direct_episode_wins_when_chains_are_weak() -> None:
    best = {nid("E1"): 0.1, nid("F2"): 0.6}
    b = score_bundles(seed_graph().index(), best, {}, OFF)[0]
    assert b.best_path == "direct_episode" and b.score == pytest.approx(0.4)


def test_edge_miss_cost_applies_without_edge_hit() -> None:
    b = score_bundles(seed_graph().index(), {nid("F2"): 0.1}, {}, OFF)[0]
    assert b.score == pytest.approx(0.1 + 0.9 + 0.05)


def test_ties_prefer_specific_paths() -> None:
    # point chain == facet direct: 0.0 + 0.05 + 0.05 == 0.1
    best = {nid("P1"): 0.0, nid("F2"): 0.1}
    b = score_bundles(seed_graph().index(), best, {"F2 -> P1": 0.05}, OFF)[0]
    assert b.best_path == "point"
    # entity chain == direct episode: 0.25 + 0.0 + 0.05 == 0.0 + 0.3
    best = {nid("Bob"): 0.25, nid("E1"): 0.0}
    b = score_bundles(entity_graph().index(), best, {"E1 -> Bob": 0.0}, OFF)[0]
    assert b.best_path == "entity"


def test_equal_episode_scores_order_by_id() -> None:
    g = G()
    names = [f"ep{i}" for i in range(6)]
    for n in names:
        g.node(n, "Episode")
    best = {nid(n): 0.2 for n in names}
    bundles = score_bundles(g.index(), best, {}, OFF, top_k=6)
    ids = [b.episode_id for b in bundles]
    assert ids == sorted(ids, key=lambda u: u.int)
    assert score_bundles(g.index(), best, {}, OFF, top_k=6) == bundles


def test_direct_hit_episode_without_edges_is_a_candidate() -> None:
    g = G()
    g.node("lonely", "Episode")
    g.node("unhit", "Episode")
    bundles = score_bundles(g.index(), {nid("lonely"): 0.4}, {}, OFF)
    assert [b.episode_id for b in bundles] == [nid("lonely")]
    assert bundles[0].best_path == "direct_episode" and bundles[0].score == pytest.approx(0.7)


def test_top_k_smallest() -> None:
    g = G()
    for i in range(20):
        g.node(f"e{i}", "Episode")
    best = {nid(f"e{i}"): i / 100 for i in range(20)}
    bundles = score_bundles(g.index(), best, {}, OFF, top_k=3)
    assert [b.episode_id for b in bundles] == [nid("e0"), nid("e1"), nid("e2")]


def test_cheapest_of_parallel_edges_is_used() -> None:
    g = seed_graph()
    g.edge("E1", "has_facet", "F2", text="another text")
    b = score_bundles(g.index(), {nid("F2"): 0.1}, {"another text": 0.02}, OFF)[0]
    assert b.score == pytest.approx(0.17)


def test_index_orients_by_node_kind() -> None:
    g = seed_graph()
    g.node("Maria", "Entity")
    g.edges.append(GraphEdge(src=nid("Maria"), relationship="involves_entity", dst=nid("E1")))
    idx = g.index()
    assert idx.facets_by_episode == {nid("E1"): [nid("F2")]}
    assert idx.points_by_facet == {nid("F2"): [nid("P1")]}
    assert idx.entities_by_episode == {nid("E1"): [nid("Maria")]}
    assert idx.episodes_by_facet == {nid("F2"): [nid("E1")]}


def span(start: datetime, end: datetime) -> TimeMatch:
    return TimeMatch(start=start, end=end, confidence=0.95, text="x", pos=(0, 1))


MAY = span(datetime(2023, 5, 1, tzinfo=UTC), datetime(2023, 6, 1, tzinfo=UTC))


def test_time_bonus_breaks_a_tie_and_respects_the_floor() -> None:
    g = G()
    g.node(
        "in_may",
        "Episode",
        time_start=datetime(2023, 5, 8, tzinfo=UTC),
        time_end=datetime(2023, 5, 9, tzinfo=UTC),
    )
    g.node("in_june", "Episode", created_at=datetime(2023, 6, 8, tzinfo=UTC))
    best = {nid("in_may"): 0.2, nid("in_june"): 0.2}
    plain = score_bundles(g.index(), best, {}, OFF, top_k=2)
    timed = score_bundles(g.index(), best, {}, OFF, query_time=MAY, top_k=2)
    assert [b.score for b in plain] == [pytest.approx(0.5)] * 2
    assert timed[0].episode_id == nid("in_may") and timed[0].score == pytest.approx(0.46)
    assert timed[1].score == pytest.approx(0.5)
    # floor: 0.09 -> 0.08, never below; a score already under the floor is untouched
    g2 = G()
    g2.node("a", "Episode", created_at=datetime(2023, 5, 3, tzinfo=UTC))
    g2.node("b", "Episode", created_at=datetime(2023, 5, 4, tzinfo=UTC))
    g2.node("Fa", "Facet")
    g2.node("Fb", "Facet")
    g2.edge("a", "has_facet", "Fa")
    g2.edge("b", "has_facet", "Fb")
    best = {nid("Fa"): 0.0, nid("Fb"): 0.0}
    edges = {"a -> Fa": 0.04, "b -> Fb": 0.0}
    out = {b.episode_id: b.score for b in score_bundles(g2.index(), best, edges, OFF, MAY)}
    assert out[nid("a")] == pytest.approx(0.08)
    assert out[nid("b")] == pytest.approx(0.05)


def test_low_confidence_time_gives_no_bonus() -> None:
    g = G()
    g.node("in_may", "Episode", created_at=datetime(2023, 5, 8, tzinfo=UTC))
    vague = MAY.model_copy(update={"confidence": 0.3})
    b = score_bundles(g.index(), {nid("in_may"): 0.2}, {}, OFF, query_time=vague)[0]
    assert b.score == pytest.approx(0.5)


def test_time_overlap() -> None:
    def ep(start: datetime | None, end: datetime | None, created: datetime | None) -> GraphNode:
        return GraphNode(
            id=nid("x"), kind="Episode", time_start=start, time_end=end, created_at=created
        )

    def d(day: int, month: int = 5) -> datetime:
        return datetime(2023, month, day, tzinfo=UTC)

    assert time_overlap(ep(d(3), d(4), None), MAY) == 1.0
    assert time_overlap(ep(None, None, d(3, 7)), MAY) == 0.0
    assert time_overlap(ep(d(3), None, None), MAY) == 1.0
    assert time_overlap(ep(None, None, None), MAY) == 0.0
    half = ep(datetime(2023, 4, 20, tzinfo=UTC), datetime(2023, 5, 10, tzinfo=UTC), None)
    assert time_overlap(half, MAY) == pytest.approx(9 / 20)
    naive = ep(datetime(2023, 5, 3), datetime(2023, 5, 4), None)
    assert time_overlap(naive, MAY) == 1.0


def test_path_trace_lists_the_chain_and_sums_to_the_score() -> None:
    g = entity_graph()
    hits = {
        nid("P1"): Hit(
            collection="FacetPoint_search_text",
            node_id=nid("P1"),
            text="P1",
            distance=0.31,
            score=0.0,
        ),
    }
    edge_hits = {"F2 -> P1": Hit(collection="Edge_text", text="F2 -> P1", distance=0.4, score=0.04)}
    best = {nid("P1"): 0.0, nid("F2"): 0.5}
    b = score_bundles(g.index(), best, SEED_EDGES, OFF, node_hits=hits, edge_hits=edge_hits)[0]
    assert [(s.kind, s.node_kind or s.relationship) for s in b.path] == [
        ("node", "FacetPoint"),
        ("edge", "has_point"),
        ("node", "Facet"),
        ("edge", "has_facet"),
        ("node", "Episode"),
    ]
    assert b.path[0].collection == "FacetPoint_search_text" and b.path[0].distance == 0.31
    assert b.path[1].text == "F2 -> P1" and b.path[1].collection == "Edge_text"
    assert b.path[3].collection is None  # "E1 -> F2" has a score but no hit given for the trace
    assert sum(s.cost for s in b.path) == pytest.approx(b.score)
    direct = score_bundles(g.index(), {nid("E2"): 0.1}, {}, OFF, query_time=None)[0]
    assert [s.node_kind for s in direct.path] == ["Episode"]
    assert direct.path[0].cost == pytest.approx(0.4)


def _hits_for_seed() -> list[Hit]:
    def h(coll: str, name: str | None, text: str, dist: float) -> Hit:
        return Hit(collection=coll, node_id=nid(name) if name else None, text=text, distance=dist)

    return [
        h("FacetPoint_search_text", "P1", "鉴权中间件不能改", 0.30),
        h("FacetPoint_search_text", "Pz", "其它", 0.50),
        h("Facet_search_text", "F2", "变更边界", 0.35),
        h("Facet_search_text", "Fz", "其它", 0.45),
        h("Episode_summary", "E1", "API 流式返回改造", 0.40),
        h("Episode_summary", "E2", "首页文案交付", 0.60),
        h("Edge_text", None, "E1 -> F2", 0.2),
        h("Edge_text", None, "F2 -> P1", 0.3),
        h("Edge_text", None, "zz", 0.9),
    ]


def _pq(text: str = "流式返回有哪些约束") -> PreprocessedQuery:
    return PreprocessedQuery(
        original=text, vector_query=text, keywords=[], hybrid_reason=None, use_hybrid=False
    )


def test_rank_pipeline_end_to_end() -> None:
    g = seed_graph()
    bundles = rank(_hits_for_seed(), Subgraph(nodes=g.nodes, edges=g.edges), _pq(), OFF, top_k=5)
    # minmax: P1 0, F2 0, E1 0, E2 1; edges E1->F2 0, F2->P1 1/7
    assert [b.episode_id for b in bundles] == [nid("E1"), nid("E2")]
    assert bundles[0].score == pytest.approx(0.05)
    assert bundles[0].best_path == "facet"
    assert bundles[1].score == pytest.approx(1.3)


def test_hit_ids_for_projection_sorted_and_capped() -> None:
    ids = hit_ids_for_projection(_hits_for_seed(), RecallConfig(max_relevant_ids=4))
    # normalised: P1 0, F2 0, E1 0, Fz 1, Pz 1, E2 1; ties go by raw distance
    assert ids == [nid("P1"), nid("F2"), nid("E1"), nid("Fz")]
    assert len(hit_ids_for_projection(_hits_for_seed(), OFF)) == 6


def test_respond_times_every_stage() -> None:
    g = seed_graph()
    sub = Subgraph(nodes=g.nodes, edges=g.edges, notes=["hub guard: none"])
    resp = respond(_hits_for_seed(), sub, _pq(), OFF, timings_ms={"recall_sql": 1.5})
    assert set(resp.timings_ms) == {"recall_sql", "bonus", "index", "score", "render"}
    assert resp.results[0].rank == 1 and resp.results[0].episode_id == nid("E1")
    assert resp.notes == ["hub guard: none"]
    dumped = resp.model_dump(mode="json")
    assert dumped["results"][0]["best_path"] == "facet"
    assert dumped["preprocessed"]["original"] == "流式返回有哪些约束"


def test_entity_seeds_that_cannot_reach_the_top_k_are_not_projected() -> None:
    import uuid as _uuid

    from memflow.recall.config import RecallConfig as _Cfg
    from memflow.recall.pipeline import entity_seed_bound, hit_ids_for_projection, score_hits
    from memflow.recall.types import Hit as _Hit

    cfg = _Cfg(normalize="raw")
    eps = [
        _Hit(collection="Episode_summary", node_id=_uuid.uuid4(), text=f"e{i}", distance=0.1 * i)
        for i in range(3)
    ]
    near = _Hit(collection="Entity_name", node_id=_uuid.uuid4(), text="near", distance=0.2)
    far = _Hit(collection="Entity_name", node_id=_uuid.uuid4(), text="far", distance=0.9)
    scored = score_hits([*eps, near, far], None, cfg)
    # 2nd best direct episode: 0.1 + 0.3 = 0.4. far: 0.9 + 0.05 - 0.04 > 0.4 -> pruned.
    assert entity_seed_bound(scored, cfg, 2) == 0.1 + 0.3
    seeds = hit_ids_for_projection(scored, cfg, top_k=2)
    assert near.node_id in seeds and far.node_id not in seeds
    # Without enough hit episodes there is no bound and every entity is kept.
    assert far.node_id in hit_ids_for_projection(scored, cfg, top_k=5)
