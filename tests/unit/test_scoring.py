"""Episode scoring on raw distances: every chain kind, entity specificity, corroboration, time
bonus, the explain trace and content-based ties (memflow.recall.scoring)."""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime

import pytest

from memflow.recall.config import RecallConfig
from memflow.recall.scoring import (
    Evidence,
    RelationshipIndex,
    content_key,
    score_bundles,
    specificity,
    time_bonus,
    time_overlap,
)
from memflow.recall.types import (
    Bundle,
    GraphEdge,
    GraphNode,
    Hit,
    NodeKind,
    Relationship,
    Subgraph,
)
from memflow.text.timeparse import TimeMatch

CFG = RecallConfig()
POINTS = "FacetPoint_search_text"
# Corroboration off: the score is the cheapest chain alone.
CHAIN = RecallConfig(second_point_weight=0, facet_support_weight=0, summary_support_weight=0)
COLLECTION: dict[str, str] = {
    "Episode": "Episode_summary",
    "Facet": "Facet_search_text",
    "FacetPoint": "FacetPoint_search_text",
    "Entity": "Entity_name",
}


def nid(name: str) -> uuid.UUID:
    return uuid.uuid5(uuid.NAMESPACE_URL, name)


class G:
    """A tiny graph builder: nodes by name, edges by name pair; ``ids`` maps names to UUIDs."""

    def __init__(self, ids: Mapping[str, uuid.UUID] | None = None) -> None:
        self.ids = dict(ids or {})
        self.nodes: dict[uuid.UUID, GraphNode] = {}
        self.edges: list[GraphEdge] = []

    def id(self, name: str) -> uuid.UUID:
        return self.ids.setdefault(name, nid(name))

    def node(self, name: str, kind: NodeKind, **kw: object) -> uuid.UUID:
        text = {"search_text": name} if kind in ("Facet", "FacetPoint") else {}
        node = GraphNode(id=self.id(name), kind=kind, name=name, **{**text, **kw})  # type: ignore[arg-type]
        self.nodes[node.id] = node
        return node.id

    def edge(self, a: str, rel: Relationship, b: str, text: str | None = None) -> str:
        t = text if text is not None else f"{a} -> {b}"
        self.edges.append(GraphEdge(src=self.id(a), relationship=rel, dst=self.id(b), edge_text=t))
        return t

    def sub(self, episode_count: int = 0) -> Subgraph:
        return Subgraph(nodes=self.nodes, edges=self.edges, episode_count=episode_count)

    def index(self, episode_count: int = 0) -> RelationshipIndex:
        return RelationshipIndex.build(self.sub(episode_count))

    def ev(
        self,
        best: Mapping[str, float],
        edges: Mapping[str, float] | None = None,
        *,
        by_collection: Mapping[str, Mapping[str, float]] | None = None,
        worst: Mapping[str, float] | None = None,
        adjust: Mapping[str, float] | None = None,
        distance: Mapping[str, float] | None = None,
    ) -> Evidence:
        """Evidence with a hit per scored node (raw distance = score unless ``distance`` says)."""
        raw = distance or {}
        hits = {
            self.id(n): Hit(
                collection=COLLECTION[self.nodes[self.id(n)].kind],
                node_id=self.id(n),
                text=n,
                distance=raw.get(n, s),
                score=s,
            )
            for n, s in best.items()
        }
        edge_hits = {
            t: Hit(collection="Edge_text", text=t, distance=s) for t, s in (edges or {}).items()
        }
        return Evidence(
            best={self.id(n): s for n, s in best.items()},
            edges=dict(edges or {}),
            by_collection={
                c: {self.id(n): s for n, s in scores.items()}
                for c, scores in (by_collection or {}).items()
            },
            worst=dict(worst or {}),
            unit_adjust={self.id(n): a for n, a in (adjust or {}).items()},
            node_hits=hits,
            edge_hits=edge_hits,
        )


def chain_graph(ids: Mapping[str, uuid.UUID] | None = None) -> G:
    """E1 -> F1 -> {P1, P2}; entity Kiln on F1, entity Harbour on E1; E2 alone."""
    g = G(ids)
    g.node("E1", "Episode")
    g.node("E2", "Episode")
    g.node("F1", "Facet")
    g.node("P1", "FacetPoint")
    g.node("P2", "FacetPoint")
    g.node("Kiln", "Entity")
    g.node("Harbour", "Entity")
    g.edge("E1", "has_facet", "F1")
    g.edge("F1", "has_point", "P1")
    g.edge("F1", "has_point", "P2")
    g.edge("F1", "involves_entity", "Kiln")
    g.edge("E1", "involves_entity", "Harbour")
    return g


def top(g: G, ev: Evidence, config: RecallConfig = CHAIN, **kw: object) -> Bundle:
    return score_bundles(g.index(), ev, config, **kw)[0]  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------- chains


def test_point_chain_wins() -> None:
    g = chain_graph()
    b = top(g, g.ev({"P1": 0.2, "P2": 0.25, "F1": 0.3, "E1": 0.4}))
    # point 0.2 + 0 < facet 0.3 + 0.06 < direct 0.4 + 0.1
    assert b.episode_id == nid("E1") and b.best_path == "point"
    assert (b.best_facet_id, b.best_point_id, b.best_entity_id) == (nid("F1"), nid("P1"), None)
    assert b.score == pytest.approx(0.2)


def test_point_cost_is_paid_by_point_chains() -> None:
    g = chain_graph()
    cfg = CHAIN.model_copy(update={"point_cost": 0.2})
    b = top(g, g.ev({"P1": 0.2, "F1": 0.3}), cfg)
    assert b.best_path == "facet" and b.score == pytest.approx(0.36)  # 0.36 < 0.2 + 0.2


def test_facet_chain_wins() -> None:
    g = chain_graph()
    b = top(g, g.ev({"F1": 0.1, "P1": 0.2, "E1": 0.3}))
    assert b.best_path == "facet" and b.best_facet_id == nid("F1") and b.best_point_id is None
    assert b.score == pytest.approx(0.16)  # 0.1 + facet_cost 0.06


def test_facet_entity_chain_wins() -> None:
    g = chain_graph()
    b = top(g, g.ev({"Kiln": 0.05, "P1": 0.3, "F1": 0.4}))
    # entity(Kiln) = 0.05 + entity_cost 0.05 (specific: one episode) + facet_cost 0.06
    assert b.best_path == "facet_entity"
    assert (b.best_facet_id, b.best_entity_id) == (nid("F1"), nid("Kiln"))
    assert b.score == pytest.approx(0.16)


def test_entity_chain_wins() -> None:
    g = chain_graph()
    b = top(g, g.ev({"Harbour": 0.05, "P1": 0.3, "E1": 0.3}))
    assert b.best_path == "entity" and b.best_entity_id == nid("Harbour")
    assert b.best_facet_id is None and b.score == pytest.approx(0.10)


def test_edge_chain_wins_through_either_end() -> None:
    g = chain_graph()
    b = top(g, g.ev({"P1": 0.3}, {"E1 -> F1": 0.02}))
    assert b.best_path == "edge" and b.score == pytest.approx(0.12)  # 0.02 + edge_cost 0.1
    assert b.best_facet_id is None and b.best_point_id is None
    # A facet -> point edge text is evidence for the facet's episode.
    b = top(g, g.ev({"P1": 0.3}, {"F1 -> P1": 0.05, "E1 -> F1": 0.5}))
    assert b.episode_id == nid("E1") and b.best_path == "edge"
    assert b.score == pytest.approx(0.15)
    assert b.path[0].text == "F1 -> P1"  # the cheapest of the two edge texts decided


def test_direct_chain_wins_and_unhit_episodes_are_dropped() -> None:
    g = chain_graph()
    bundles = score_bundles(g.index(), g.ev({"E1": 0.05, "P1": 0.3, "E2": 0.5}), CHAIN)
    assert [b.episode_id for b in bundles] == [nid("E1"), nid("E2")]
    assert bundles[0].best_path == "direct_episode" and bundles[0].score == pytest.approx(0.15)
    assert bundles[1].best_path == "direct_episode" and bundles[1].score == pytest.approx(0.6)
    assert score_bundles(g.index(), g.ev({"P1": 0.3}), CHAIN)[0].episode_id == nid("E1")
    assert [b.episode_id for b in score_bundles(g.index(), g.ev({"P1": 0.3}), CHAIN)] == [nid("E1")]


def test_chain_costs_come_from_config() -> None:
    g = chain_graph()
    ev = g.ev({"E1": 0.1, "F1": 0.1, "Harbour": 0.1, "P1": 0.5}, {"E1 -> F1": 0.1})
    costs = {"facet_cost": 0.3, "entity_cost": 0.3, "edge_cost": 0.3, "direct_cost": 0.3}
    for kind, key in (
        ("facet", "facet_cost"),
        ("entity", "entity_cost"),
        ("edge", "edge_cost"),
        ("direct_episode", "direct_cost"),
    ):
        cfg = CHAIN.model_copy(update={**costs, key: 0.01})
        b = top(g, ev, cfg)
        assert b.best_path == kind and b.score == pytest.approx(0.11)


def test_ties_prefer_the_more_specific_chain() -> None:
    g = chain_graph()
    # point 0.06 == facet 0.0 + 0.06 == direct -0.04 + 0.1: the point is more specific.
    assert top(g, g.ev({"P1": 0.06, "F1": 0.0})).best_path == "point"
    # facet_entity 0.0 + 0.05 + 0.06 == facet 0.05 + 0.06
    assert top(g, g.ev({"Kiln": 0.0, "F1": 0.05})).best_path == "facet_entity"
    # entity 0.05 + 0.05 == direct 0.0 + 0.1
    assert top(g, g.ev({"Harbour": 0.05, "E1": 0.0})).best_path == "entity"


def test_index_orients_by_node_kind() -> None:
    g = chain_graph()
    g.edges.append(GraphEdge(src=nid("Kiln"), relationship="involves_entity", dst=nid("E2")))
    idx = g.index()
    assert idx.facets_by_episode == {nid("E1"): [nid("F1")]}
    assert idx.episodes_by_facet == {nid("F1"): [nid("E1")]}
    assert set(idx.points_by_facet[nid("F1")]) == {nid("P1"), nid("P2")}
    assert idx.entities_by_facet == {nid("F1"): [nid("Kiln")]}
    assert idx.entities_by_episode == {nid("E1"): [nid("Harbour")], nid("E2"): [nid("Kiln")]}


# -------------------------------------------------------------------------------- specificity


def test_specificity_at_the_ends() -> None:
    assert specificity(1, 1) == 1.0 and specificity(5, 0) == 1.0  # nothing to choose between
    assert specificity(10, 10) == 0.0  # linked to every episode
    assert specificity(50, 10) == 0.0  # a degree over the count is clamped
    assert specificity(1, 10) == pytest.approx(math.log(11 / 2) / math.log(11))
    assert specificity(None, 10) == specificity(0, 10) == specificity(1, 10)
    assert specificity(2, 10) < specificity(1, 10)


def test_hub_entity_loses_to_a_specific_one_at_equal_distance() -> None:
    g = G()
    g.node("A", "Episode")
    g.node("B", "Episode")
    g.node("Vela app", "Entity", degree=4)  # the team's own product: in every episode
    g.node("Dr Ada Lin", "Entity", degree=1)
    g.edge("A", "involves_entity", "Vela app")
    g.edge("B", "involves_entity", "Dr Ada Lin")
    ev = g.ev({"Vela app": 0.1, "Dr Ada Lin": 0.1})
    bundles = score_bundles(g.index(episode_count=4), ev, CHAIN)
    assert [b.episode_id for b in bundles] == [nid("B"), nid("A")]
    spec = math.log(5 / 2) / math.log(5)
    assert bundles[0].score == pytest.approx(0.1 + 0.05 + 0.3 * (1 - spec))  # ~0.279
    assert bundles[1].score == pytest.approx(0.1 + 0.05 + 0.3)  # generic: full extra cost
    # Without a dataset size there is nothing to compare with: both cost 0.15, content decides.
    flat = score_bundles(g.index(), ev, CHAIN)
    assert [b.score for b in flat] == [pytest.approx(0.15)] * 2


# ------------------------------------------------------------------------------ corroboration


WINDOW = "Facet_anchor_text"
SUMMARY = "Episode_summary"


def test_corroboration_terms_add_up() -> None:
    g = chain_graph()
    ev = g.ev(
        {"P1": 0.2, "P2": 0.3, "E1": 0.5},
        by_collection={WINDOW: {"F1": 0.4}, SUMMARY: {"E1": 0.5}},
        worst={WINDOW: 0.7, SUMMARY: 0.9},
    )
    b = top(g, ev, CFG)
    # point 0.2 + 0.1 * (0.3 - 0.2) + 0.6 * 0.4 + 0.1 * 0.5
    assert b.best_path == "point" and b.score == pytest.approx(0.2 + 0.01 + 0.24 + 0.05)


def test_a_missing_second_point_costs_the_assumed_gap() -> None:
    g = chain_graph()
    ev = g.ev({"P1": 0.2}, by_collection={WINDOW: {"F1": 0.4}, SUMMARY: {"E1": 0.5}})
    assert top(g, ev, CFG).score == pytest.approx(0.2 + 0.1 * 0.05 + 0.24 + 0.05)
    # Two close points beat one point that is a little closer.
    g.node("E3", "Episode")
    g.node("F3", "Facet")
    g.node("P3", "FacetPoint")
    g.edge("E3", "has_facet", "F3")
    g.edge("F3", "has_point", "P3")
    ev = g.ev({"P1": 0.2, "P2": 0.2, "P3": 0.199})
    ranked = score_bundles(g.index(), ev, CFG.model_copy(update={"facet_support_weight": 0}))
    assert [b.episode_id for b in ranked] == [nid("E1"), nid("E3")]


def test_missing_window_and_summary_count_as_the_worst_recalled() -> None:
    g = chain_graph()
    ev = g.ev({"P1": 0.2, "P2": 0.3}, worst={WINDOW: 0.7, SUMMARY: 0.9})
    assert top(g, ev, CFG).score == pytest.approx(0.2 + 0.01 + 0.6 * 0.7 + 0.1 * 0.9)
    # Nothing recalled in a collection at all: the bound is the largest distance, 1.
    ev = g.ev({"P1": 0.2, "P2": 0.3})
    assert top(g, ev, CFG).score == pytest.approx(0.2 + 0.01 + 0.6 + 0.1)


def test_best_window_of_several_facets_is_used() -> None:
    g = chain_graph()
    g.node("F9", "Facet")
    g.edge("E1", "has_facet", "F9")
    ev = g.ev({"P1": 0.2, "P2": 0.3}, by_collection={WINDOW: {"F1": 0.5, "F9": 0.3}})
    b = top(g, ev, CFG)
    assert b.score == pytest.approx(0.2 + 0.01 + 0.6 * 0.3 + 0.1)
    window = [s for s in b.path if s.kind == "support" and s.node_kind == "Facet"]
    assert window[0].id == nid("F9")


def test_unit_rules_move_the_point_chain() -> None:
    g = chain_graph()
    ev = g.ev({"P1": 0.2, "P2": 0.3}, adjust={"P1": 0.15})  # u(P1) = 0.35 > u(P2) = 0.3
    b = top(g, ev, CFG.model_copy(update={"facet_support_weight": 0, "summary_support_weight": 0}))
    assert b.best_point_id == nid("P2")
    assert b.score == pytest.approx(0.3 + 0.1 * (0.35 - 0.3))


# ---------------------------------------------------------------------------------- time bonus


def span(start: datetime, end: datetime, confidence: float = 0.95) -> TimeMatch:
    return TimeMatch(start=start, end=end, confidence=confidence, text="x", pos=(0, 1))


MAY = span(datetime(2031, 5, 1, tzinfo=UTC), datetime(2031, 6, 1, tzinfo=UTC))


def timed_graph() -> G:
    g = G()
    g.node(
        "in_may",
        "Episode",
        time_start=datetime(2031, 5, 8, tzinfo=UTC),
        time_end=datetime(2031, 5, 9, tzinfo=UTC),
    )
    g.node("in_june", "Episode", created_at=datetime(2031, 6, 8, tzinfo=UTC))
    return g


def test_time_bonus_breaks_a_tie() -> None:
    g = timed_graph()
    ev = g.ev({"in_may": 0.2, "in_june": 0.2})
    plain = score_bundles(g.index(), ev, CHAIN, top_k=2)
    assert [b.score for b in plain] == [pytest.approx(0.3)] * 2
    timed = score_bundles(g.index(), ev, CHAIN, query_time=MAY, top_k=2)
    assert timed[0].episode_id == nid("in_may") and timed[0].score == pytest.approx(0.26)
    assert timed[1].score == pytest.approx(0.3)


def test_time_bonus_floor() -> None:
    g = timed_graph()
    # 0.1 - 0.04 would be 0.06: floored at 0.08.
    assert top(g, g.ev({"in_may": 0.0}), query_time=MAY).score == pytest.approx(0.08)
    # A score already under the floor is untouched.
    g.node("F", "Facet")
    g.edge("in_may", "has_facet", "F")
    assert top(g, g.ev({"F": 0.01}), query_time=MAY).score == pytest.approx(0.07)


def test_low_confidence_time_gives_no_bonus() -> None:
    g = timed_graph()
    vague = span(MAY.start, MAY.end, confidence=0.3)
    assert top(g, g.ev({"in_may": 0.2}), query_time=vague).score == pytest.approx(0.3)
    assert time_bonus(g.nodes[nid("in_may")], vague, CFG) == 0.0
    assert time_bonus(g.nodes[nid("in_may")], MAY, CFG) == pytest.approx(0.04)
    assert time_bonus(None, MAY, CFG) == 0.0 and time_bonus(g.nodes[nid("in_may")], None, CFG) == 0


def test_time_overlap() -> None:
    def ep(start: datetime | None, end: datetime | None, created: datetime | None) -> GraphNode:
        return GraphNode(
            id=nid("x"), kind="Episode", time_start=start, time_end=end, created_at=created
        )

    def d(day: int, month: int = 5) -> datetime:
        return datetime(2031, month, day, tzinfo=UTC)

    assert time_overlap(ep(d(3), d(4), None), MAY) == 1.0
    assert time_overlap(ep(None, None, d(3, 7)), MAY) == 0.0
    assert time_overlap(ep(d(3), None, None), MAY) == 1.0
    assert time_overlap(ep(None, None, None), MAY) == 0.0
    half = ep(datetime(2031, 4, 20, tzinfo=UTC), datetime(2031, 5, 10, tzinfo=UTC), None)
    assert time_overlap(half, MAY) == pytest.approx(9 / 20)
    naive = ep(datetime(2031, 5, 3), datetime(2031, 5, 4), None)
    assert time_overlap(naive, MAY) == 1.0


# ---------------------------------------------------------------------------------- explain


def steps(b: Bundle) -> list[tuple[str, str | None]]:
    return [(s.kind, s.node_kind or s.relationship) for s in b.path]


SUPPORT = [("support", "FacetPoint"), ("support", "Facet"), ("support", "Episode")]


@pytest.mark.parametrize(
    ("best", "edges", "kind", "chain"),
    [
        (
            {"P1": 0.2, "P2": 0.3},
            {"F1 -> P1": 0.9},
            "point",
            [
                ("node", "FacetPoint"),
                ("edge", "has_point"),
                ("node", "Facet"),
                ("edge", "has_facet"),
            ],
        ),
        ({"F1": 0.1, "P1": 0.4}, {}, "facet", [("node", "Facet"), ("edge", "has_facet")]),
        (
            {"Kiln": 0.0, "P1": 0.4},
            {},
            "facet_entity",
            [
                ("node", "Entity"),
                ("edge", "involves_entity"),
                ("node", "Facet"),
                ("edge", "has_facet"),
            ],
        ),
        (
            {"Harbour": 0.0, "P1": 0.4},
            {},
            "entity",
            [("node", "Entity"), ("edge", "involves_entity")],
        ),
        ({"P1": 0.4}, {"E1 -> F1": 0.0}, "edge", [("edge", "has_facet")]),
        ({"E1": 0.0, "P1": 0.4}, {}, "direct_episode", []),
    ],
)
@pytest.mark.parametrize("when", [None, MAY])
def test_explain_trace_per_chain_kind_sums_to_the_score(
    best: dict[str, float],
    edges: dict[str, float],
    kind: str,
    chain: list[tuple[str, str]],
    when: TimeMatch | None,
) -> None:
    g = chain_graph()
    g.nodes[nid("E1")] = GraphNode(
        id=nid("E1"), kind="Episode", name="E1", created_at=datetime(2031, 5, 2, tzinfo=UTC)
    )
    ev = g.ev(
        best,
        edges,
        by_collection={WINDOW: {"F1": 0.3}, SUMMARY: {"E1": 0.4}},
        worst={WINDOW: 0.5, SUMMARY: 0.6},
    )
    b = top(g, ev, CFG, query_time=when)
    assert b.best_path == kind
    assert steps(b) == [*chain, *SUPPORT, ("node", "Episode")]
    assert sum(s.cost for s in b.path) == pytest.approx(b.score)
    episode = b.path[-1]
    assert episode.id == nid("E1")
    # The episode node carries the direct chain's cost and the (negative) time bonus.
    own = 0.1 if kind == "direct_episode" else 0.0
    assert b.score > CFG.time_bonus_floor + 0.04
    assert episode.cost == pytest.approx(own - (0.04 if when else 0.0))


def test_explain_steps_carry_hits_and_support_texts() -> None:
    g = chain_graph()
    ev = g.ev(
        {"P1": 0.1, "P2": 0.3},
        {"F1 -> P1": 0.2},
        by_collection={WINDOW: {"F1": 0.3}},
        worst={SUMMARY: 0.6},
        distance={"P1": 0.35},
    )
    b = top(g, ev, CFG)
    point, has_point, _facet, has_facet, second, window, summary, episode = b.path
    assert (point.collection, point.distance, point.cost) == (POINTS, 0.35, 0.1)
    assert _facet.cost == 0.0
    assert (has_point.text, has_point.collection, has_point.distance) == (
        "F1 -> P1",
        "Edge_text",
        0.2,
    )
    assert has_facet.text == "E1 -> F1" and has_facet.collection is None  # no Edge_text hit
    assert (second.id, second.text) == (nid("P2"), "second point: P2")
    assert second.cost == pytest.approx(0.1 * 0.2)
    assert (window.id, window.text) == (nid("F1"), "best window: F1")
    assert window.cost == pytest.approx(0.6 * 0.3)
    assert summary.text == "summary: E1" and summary.cost == pytest.approx(0.1 * 0.6)
    assert episode.cost == pytest.approx(0.0)
    # With one point only the second-point step has no node, just the assumed gap.
    lone = top(g, g.ev({"P1": 0.1}), CFG).path[4]
    assert lone.id is None and lone.text == "second point"
    assert lone.cost == pytest.approx(0.1 * 0.05)


# ------------------------------------------------------------------------------------ ties


def five_episodes(ids: Mapping[str, uuid.UUID] | None = None) -> G:
    g = G(ids)
    for name in ("Kayak repair", "Bakery visit", "Quarterly review", "Chess night", "Move"):
        g.node(name, "Episode", summary=f"About {name.lower()}.")
    return g


def test_equal_scores_are_ordered_by_content_not_by_id() -> None:
    a = five_episodes()
    shuffled = {n: uuid.UUID(int=(i * 7919) % 101) for i, n in enumerate(a.ids)}
    b = five_episodes(dict(reversed(list(shuffled.items()))))
    names = list(a.ids)
    ranked: list[list[str]] = []
    for g in (a, b):
        out = score_bundles(g.index(), g.ev(dict.fromkeys(names, 0.2)), CFG, top_k=5)
        by_id = {v: k for k, v in g.ids.items()}
        ranked.append([by_id[x.episode_id] for x in out])
        assert len({x.score for x in out}) == 1
    assert ranked[0] == ranked[1]
    expected = sorted(names, key=lambda n: content_key(a.nodes[a.ids[n]]))
    assert ranked[0] == expected


def test_same_content_under_other_ids_ranks_identically() -> None:
    a = chain_graph()
    b = chain_graph({n: uuid.uuid4() for n in a.ids})
    for g in (a, b):
        g.node("E2F", "Facet")
        g.node("E2P", "FacetPoint")
        g.edge("E2", "has_facet", "E2F")
        g.edge("E2F", "has_point", "E2P")
    best = {"P1": 0.2, "P2": 0.25, "E2P": 0.2, "Harbour": 0.3, "E1": 0.4, "E2": 0.4}
    out = []
    for g in (a, b):
        by_id = {v: k for k, v in g.ids.items()}
        out.append(
            [
                (by_id[x.episode_id], round(x.score, 9), x.best_path, [s.text for s in x.path])
                for x in score_bundles(g.index(), g.ev(best), CFG)
            ]
        )
    assert out[0] == out[1]
    assert content_key(a.nodes[nid("E1")]) == content_key(b.nodes[b.ids["E1"]])
    assert content_key(None) == ""


def test_equal_scores_prefer_the_more_specific_chain_then_the_closer_hit() -> None:
    g = chain_graph()
    # E1 by a point (0.1), E2 by its summary (0.0 + 0.1): same score, the point wins.
    out = score_bundles(g.index(), g.ev({"P1": 0.1, "E2": 0.0}), CHAIN)
    assert [(b.episode_id, b.best_path) for b in out] == [
        (nid("E1"), "point"),
        (nid("E2"), "direct_episode"),
    ]
    # Two point chains with the same score (after bonuses): the lower raw distance first.
    g.node("E2F", "Facet")
    g.node("E2P", "FacetPoint")
    g.edge("E2", "has_facet", "E2F")
    g.edge("E2F", "has_point", "E2P")
    for near, far in (("P1", "E2P"), ("E2P", "P1")):
        ev = g.ev({"P1": 0.2, "E2P": 0.2}, distance={near: 0.25, far: 0.35})
        out = score_bundles(g.index(), ev, CHAIN)
        episode = {"P1": nid("E1"), "E2P": nid("E2")}
        assert [b.episode_id for b in out] == [episode[near], episode[far]]


def test_top_k_smallest() -> None:
    g = G()
    for i in range(20):
        g.node(f"e{i}", "Episode")
    ev = g.ev({f"e{i}": i / 100 for i in range(20)})
    bundles = score_bundles(g.index(), ev, CHAIN, top_k=3)
    assert [b.episode_id for b in bundles] == [nid("e0"), nid("e1"), nid("e2")]


def test_a_query_that_names_a_day_adds_the_day_bonus() -> None:
    g = timed_graph()
    day = span(datetime(2031, 5, 8, tzinfo=UTC), datetime(2031, 5, 9, tzinfo=UTC))
    cfg = CHAIN.model_copy(update={"time_bonus_day": 0.1})
    node = g.nodes[nid("in_may")]
    assert time_bonus(node, day, cfg) == pytest.approx(0.14)
    assert time_bonus(node, MAY, cfg) == pytest.approx(0.04)  # a month is not a day
    assert time_bonus(node, span(MAY.start, datetime(2031, 5, 2, tzinfo=UTC)), cfg) == 0.0
    # The dated episode overtakes a closer one of another day.
    ev = g.ev({"in_may": 0.3, "in_june": 0.2})
    assert top(g, ev, cfg, query_time=day).episode_id == nid("in_may")
    assert top(
        g, ev, CHAIN.model_copy(update={"time_bonus_day": 0.0}), query_time=day
    ).episode_id == nid("in_june")
