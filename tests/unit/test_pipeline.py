"""The pure recall stages: score_hits, evidence with unit rules, entity seed pruning, projection
seeds, rank and respond end to end (memflow.recall.pipeline)."""

from __future__ import annotations

import json
import math
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from memflow.recall.config import RecallConfig
from memflow.recall.options import SearchOptions
from memflow.recall.pipeline import (
    FirstRanking,
    asked,
    entity_seed_bound,
    expansion_unscored,
    hit_ids_for_projection,
    rank,
    rank_scored,
    respond,
    score_hits,
)
from memflow.recall.scoring import RelationshipIndex
from memflow.recall.types import Hit, Subgraph

from .test_bonus import query as pq
from .test_scoring import G, nid, span

CFG = RecallConfig(relevance_cutoff=None)  # hand-computed units over a wide spread
DAY = span(datetime(2031, 5, 8, tzinfo=UTC), datetime(2031, 5, 9, tzinfo=UTC))
POINTS = "FacetPoint_search_text"
WINDOW = "Facet_anchor_text"
SUMMARY = "Episode_summary"


HARBOUR_DOC = uuid.UUID(int=7)


def hit(collection: str, name: str | None, distance: float, text: str | None = None) -> Hit:
    return Hit(
        collection=collection,
        node_id=nid(name) if name else None,
        text=text or name or "",
        distance=distance,
    )


# ------------------------------------------------------------------------------- score_hits


def test_score_hits_minima_per_node_and_collection_and_worst() -> None:
    hits = [
        hit(POINTS, "P1", 0.3),
        hit(POINTS, "P2", 0.5),
        hit("Facet_search_text", "F1", 0.4),
        hit(WINDOW, "F1", 0.2),
        hit(WINDOW, "F2", 0.6),
        Hit(collection="Edge_text", text="E1 -> F1", distance=0.25),
        Hit(collection="Edge_text", text="E1 -> F1", distance=0.15),
    ]
    # Scores preset by an earlier stage are recomputed from the raw distances.
    scored = score_hits([h.rescored(9.0) for h in hits], None, CFG)
    assert scored.best_by_id == {nid("P1"): 0.3, nid("P2"): 0.5, nid("F1"): 0.2, nid("F2"): 0.6}
    assert scored.node_hits[nid("F1")].collection == WINDOW
    assert scored.edge_hit_map == {"E1 -> F1": 0.15}
    assert scored.by_collection[WINDOW] == {nid("F1"): 0.2, nid("F2"): 0.6}
    assert scored.by_collection["Facet_search_text"] == {nid("F1"): 0.4}
    assert "Edge_text" not in scored.by_collection
    assert scored.worst == {POINTS: 0.5, "Facet_search_text": 0.4, WINDOW: 0.6, "Edge_text": 0.25}


# --------------------------------------------------------------------------- seed pruning


def seed_hits() -> list[Hit]:
    return [
        hit(SUMMARY, "e0", 0.0),
        hit(SUMMARY, "e1", 0.1),
        hit(SUMMARY, "e2", 0.2),
        hit(POINTS, "p0", 0.1),
        hit(POINTS, "p1", 0.4),
        hit(WINDOW, "w0", 0.3),
        hit(WINDOW, "w1", 0.5),
        hit("Entity_name", "Vela app", 0.3),
        hit("Entity_name", "Kiln", 0.4),
    ]


def test_entity_seed_bound() -> None:
    scored = score_hits(seed_hits(), None, CFG)
    # most corroboration: 0.1 * max(0.05, 0.4 - 0.1 + rules 0.11) + 0.6 * 0.5 + 0.1 * 0.2
    # = 0.361 (the unit rules can widen the point gap by 0.05 + 0.02 + 2 * 0.02);
    # direct upper bounds 0.461, 0.561, 0.661: the 2nd is the bound.
    assert entity_seed_bound(scored, CFG, 2) == pytest.approx(0.561)
    assert entity_seed_bound(scored, CFG, 1) == pytest.approx(0.461)
    assert entity_seed_bound(scored, CFG, 4) == math.inf  # fewer hit episodes than top_k


def test_entity_seeds_that_cannot_reach_the_top_k_are_not_projected() -> None:
    scored = score_hits(seed_hits(), None, CFG)
    # slack: entity_cost 0.05 + least support 0.6 * 0.3 + 0.1 * 0.0 - time_bonus_max 0.04 = 0.19
    # Vela app 0.3 + 0.19 = 0.49 <= 0.561 kept; Kiln 0.4 + 0.19 = 0.59 > 0.561 pruned.
    undated = pq("Kestrel rollout", [])
    seeds = hit_ids_for_projection(scored, CFG, undated, top_k=2)
    assert nid("Vela app") in seeds and nid("Kiln") not in seeds
    assert len(seeds) == 8
    # A query that names a day may add time_bonus_day 0.08: Kiln 0.4 + 0.11 = 0.51 stays;
    # so does any query the caller does not pass (the bound must hold for every query).
    dated = undated.model_copy(update={"time": DAY})
    assert nid("Kiln") in hit_ids_for_projection(scored, CFG, dated, top_k=2)
    assert nid("Kiln") in hit_ids_for_projection(scored, CFG, top_k=2)
    assert nid("Kiln") in hit_ids_for_projection(scored, CFG, top_k=4)
    assert nid("Kiln") in hit_ids_for_projection(scored, CFG)  # no top_k: no pruning


def test_projection_seeds_order_by_score_then_distance_collection_text() -> None:
    hits = [
        hit(POINTS, "best", 0.2),
        hit(POINTS, "keyword", 0.25, text="the Kestrel rollout"),  # rel 0.125 - 0.15 -> 0.2
        hit(POINTS, "far", 0.6),
        hit("Facet_search_text", "facet b", 0.3, text="b"),
        hit("Facet_search_text", "facet a", 0.3, text="a"),
        hit("Facet_search_text", "facet far", 0.7),
        hit(SUMMARY, "summary", 0.3),
        hit(SUMMARY, "summary far", 0.9),
    ]
    scored = score_hits(hits, pq("Kestrel rollout", ["Kestrel"]), CFG)
    assert scored.node_hits[nid("keyword")].score == pytest.approx(0.2)
    ids = hit_ids_for_projection(scored, CFG)
    names = ["best", "keyword", "summary", "facet a", "facet b", "far", "facet far", "summary far"]
    assert ids == [nid(n) for n in names]
    capped = hit_ids_for_projection(scored, RecallConfig(max_relevant_ids=3))
    assert capped == ids[:3]
    # Raw hits are scored on the way (the same order).
    assert hit_ids_for_projection(hits, CFG, pq("Kestrel rollout", ["Kestrel"])) == ids


# --------------------------------------------------------------------------- end to end


def harbour_graph() -> tuple[G, list[Hit]]:
    g = G()
    g.node("Crane repair", "Episode", summary="Ada fixed the harbour crane.")
    g.node("Kayak", "Episode", summary="Tomas bought a kayak.")
    g.node("F1", "Facet", anchor_text="harbour work")
    g.node("F2", "Facet", anchor_text="shopping")
    texts = {
        "P1": ("Dr Ada Lin: I repaired the harbour crane.", "Dr Ada Lin"),
        "P2": ("Tomas Berg: Thanks Ada, the crane works.", "Tomas Berg"),
        "P3": ("Tomas Berg: I bought a kayak.", "Tomas Berg"),
    }
    for name, (text, speaker) in texts.items():
        # provenance rows as sql/recall.sql reads them: [key, document id, source, ts]
        row = [f"chunk-{name}", str(HARBOUR_DOC), "harbour.json", "2024-03-01T10:00:00+00:00"]
        g.node(name, "FacetPoint", search_text=text, speaker=speaker, sources=[row])
    g.edge("Crane repair", "has_facet", "F1")
    g.edge("Kayak", "has_facet", "F2")
    g.edge("F1", "has_point", "P1")
    g.edge("F1", "has_point", "P2")
    g.edge("F2", "has_point", "P3")
    hits = [
        hit(POINTS, "P1", 0.30, texts["P1"][0]),
        hit(POINTS, "P2", 0.25, texts["P2"][0]),
        hit(POINTS, "P3", 0.50, texts["P3"][0]),
        hit(WINDOW, "F1", 0.40),
        hit(WINDOW, "F2", 0.60),
        hit(SUMMARY, "Crane repair", 0.45),
        hit(SUMMARY, "Kayak", 0.55),
    ]
    return g, hits


QUERY = "What did Ada repair at the harbour?"


def test_rank_applies_the_unit_rules_of_the_query() -> None:
    g, hits = harbour_graph()
    bundles = rank(hits, g.sub(), pq(QUERY), CFG)
    first, second = bundles
    # u(P1) = 0.30 - 2 * 0.02 (repair, harbour) = 0.26; u(P2) = 0.25 + 0.05 (Tomas is not named)
    # Crane repair: 0.26 + 0.1 * (0.30 - 0.26) + 0.6 * 0.40 + 0.1 * 0.45 = 0.549
    assert (first.episode_id, first.best_path, first.best_point_id) == (
        nid("Crane repair"),
        "point",
        nid("P1"),
    )
    assert first.score == pytest.approx(0.549)
    # Kayak: u(P3) 0.55 + 0.1 * 0.05 (one point) + 0.6 * 0.60 + 0.1 * 0.55 = 0.97
    assert second.score == pytest.approx(0.97)
    # Without a query's rules, the vocative turn P2 (0.25) is the closest point.
    plain = rank(hits, g.sub(), pq(""), CFG)
    assert plain[0].best_point_id == nid("P2")
    assert plain[0].score == pytest.approx(0.25 + 0.005 + 0.24 + 0.045)


def test_respond_end_to_end_highly_related() -> None:
    g, hits = harbour_graph()
    resp = respond(
        hits,
        g.sub(),
        pq(QUERY),
        CFG,
        SearchOptions(display="highly_related"),
        timings_ms={"recall_sql": 1.5},
    )
    assert set(resp.timings_ms) == {"recall_sql", "bonus", "index", "score", "render"}
    assert [r.episode_id for r in resp.results] == [nid("Crane repair"), nid("Kayak")]
    assert [r.rank for r in resp.results] == [1, 2]
    # rank(unit) = d + rules + 0.2 * EpisodeScore + 0.1 * best recalled point of its facet:
    # P1 0.26 + 0.1098 + 0.025 = 0.3948; P2 0.30 + 0.1098 + 0.025 = 0.4348; P3 0.55 + 0.194 + 0.05
    assert resp.context == (
        "[Crane repair]\n"
        "Dr Ada Lin: I repaired the harbour crane.\n"
        "Tomas Berg: Thanks Ada, the crane works.\n\n"
        "[Kayak]\n"
        "Tomas Berg: I bought a kayak."
    )
    assert [u.node_id for u in resp.context_units] == [nid("P1"), nid("P2"), nid("P3")]
    assert resp.context_units[0].sources == ["chunk-P1"]
    cite = resp.context_units[0].citations[0]
    assert (cite.document_id, cite.source, cite.key) == (HARBOUR_DOC, "harbour.json", "chunk-P1")
    assert cite.ts is not None and cite.ts.hour == 10
    assert resp.results[0].citations == [cite]  # its best point
    dumped = resp.model_dump(mode="json")
    assert dumped["results"][0]["best_path"] == "point"
    assert dumped["preprocessed"]["original"] == QUERY
    path = resp.results[0].path
    assert sum(s.cost for s in path) == pytest.approx(resp.results[0].score)


def test_respond_summary_and_notes() -> None:
    g, hits = harbour_graph()
    sub = g.sub()
    sub.notes.append("hub guard: none")
    resp = respond(hits, sub, pq(QUERY), CFG, SearchOptions(top_k=1))
    assert resp.display == "summary" and len(resp.results) == 1
    assert resp.context == "[Crane repair]\nAda fixed the harbour crane."
    assert resp.notes == ["hub guard: none"]


def test_respond_is_the_same_for_the_same_content_under_other_ids() -> None:
    g, hits = harbour_graph()
    other = G({n: uuid.uuid4() for n in g.ids})
    for n in g.nodes.values():
        kw = {
            k: getattr(n, k)
            for k in ("search_text", "anchor_text", "summary", "speaker", "sources")
        }
        other.node(n.name, n.kind, **kw)
    other.edges = [
        e.__class__(
            src=other.ids[g.nodes[e.src].name],
            relationship=e.relationship,
            dst=other.ids[g.nodes[e.dst].name],
            edge_text=e.edge_text,
        )
        for e in g.edges
    ]
    names = {v: k for k, v in g.ids.items()}
    moved = [
        h.__class__(h.collection, h.text, h.distance, other.ids[names[h.node_id]])
        for h in hits
        if h.node_id
    ]
    a = respond(hits, g.sub(), pq(QUERY), CFG, SearchOptions(display="highly_related"))
    b = respond(moved, other.sub(), pq(QUERY), CFG, SearchOptions(display="highly_related"))
    assert a.context == b.context
    assert [r.score for r in a.results] == [r.score for r in b.results]
    assert [r.name for r in a.results] == [r.name for r in b.results]


def test_respond_with_an_empty_subgraph() -> None:
    resp = respond([], Subgraph(), pq(QUERY), CFG)
    assert resp.results == [] and resp.context == ""


def test_entity_seed_bound_allows_for_the_unit_rules_widening_the_point_gap() -> None:
    """An entity that can still win (here with a time bonus) is never pruned from the
    projection, although the unit rules widen the directly hit episode's point gap."""
    from datetime import UTC, datetime

    from memflow.recall.pipeline import hit_ids_for_projection, rank, score_hits
    from memflow.recall.preprocess import PreprocessedQuery
    from memflow.text.timeparse import TimeMatch

    from .test_scoring import G, nid

    cfg = RecallConfig()
    g = G()
    g.node("Ed", "Episode", created_at=datetime(2031, 9, 1, tzinfo=UTC))
    g.node("Ex", "Episode", created_at=datetime(2031, 5, 8, tzinfo=UTC))
    g.node("Fd", "Facet")
    g.node(
        "P1", "FacetPoint", search_text="Dr Ada Lin: I painted the harbour.", speaker="Dr Ada Lin"
    )
    g.node("P2", "FacetPoint", search_text="Tomas Berg: Are you free?", speaker="Tomas Berg")
    g.node("Kiln", "Entity")
    g.edge("Ed", "has_facet", "Fd")
    g.edge("Fd", "has_point", "P1")
    g.edge("Fd", "has_point", "P2")
    g.edge("Ex", "involves_entity", "Kiln")
    hits = [
        Hit("Episode_summary", "Ed", 0.2, nid("Ed")),
        Hit("Facet_anchor_text", "Fd", 0.3, nid("Fd")),
        Hit("FacetPoint_search_text", "P1", 0.5, nid("P1")),
        Hit("FacetPoint_search_text", "P2", 0.7, nid("P2")),
        Hit("Entity_name", "Kiln", 0.311, nid("Kiln")),
    ]
    may = TimeMatch(
        start=datetime(2031, 5, 1, tzinfo=UTC),
        end=datetime(2031, 6, 1, tzinfo=UTC),
        confidence=0.95,
        text="in May",
        pos=(0, 1),
    )
    q = "What did Ada paint at the harbour in May?"
    pq = PreprocessedQuery(
        original=q, vector_query=q, keywords=[], hybrid_reason=None, use_hybrid=False, time=may
    )
    top = rank(hits, g.sub(), pq, cfg, top_k=1)[0]
    assert top.episode_id == nid("Ex")  # the entity chain wins with the full graph
    assert nid("Kiln") in hit_ids_for_projection(score_hits(hits, pq, cfg), cfg, pq, top_k=1)


def test_recalled_points_that_arrive_with_the_expansion_get_the_unit_rules() -> None:
    """A search scores its hits once, ranks on the projected subgraph, expands the best episodes
    and ranks again: a recalled point that the projection had left out but the expansion brings
    in gets the query's unit rules too (as a fresh scoring of the final subgraph gives it)."""
    from .test_scoring import G

    cfg = RecallConfig()
    g = G()
    g.node("E", "Episode")
    g.node("F", "Facet")
    g.node("P1", "FacetPoint", search_text="Ines Moreau: the kiln is fixed.", speaker="Ines Moreau")
    g.edge("E", "has_facet", "F")
    g.edge("F", "has_point", "P1")
    hits = [
        hit(POINTS, "P1", 0.3),
        hit(POINTS, "P2", 0.35),  # recalled, but not projected at first
    ]
    q = "What did Ines Moreau say about the kiln?"
    scored = score_hits(hits, pq(q), cfg)
    first = scored.evidence(g.sub(), q, cfg)  # the projected subgraph
    assert nid("P2") not in first.unit_adjust
    g.node("P2", "FacetPoint", search_text="Rui Okafor: the kiln is cold.", speaker="Rui Okafor")
    g.edge("F", "has_point", "P2")  # the expansion adds it
    again = scored.evidence(g.sub(), q, cfg)
    fresh = score_hits(hits, pq(q), cfg).evidence(g.sub(), q, cfg)
    assert again.unit_adjust == fresh.unit_adjust
    assert again.unit_adjust[nid("P2")] >= cfg.speaker_penalty - cfg.term_overlap_bonus * 2


# ------------------------------------------------------------------ the first ranking reused


def _first(g: G, hits: list[Hit], q: str, k: int = 10) -> tuple[FirstRanking, Any]:
    """What retrieve_body keeps before its expansion, and a function that, after ``g`` grew,
    makes the FirstRanking the final ranking may reuse."""
    cfg, sub, query = CFG, g.sub(), pq(q)
    scored = score_hits(hits, query, cfg)
    index = RelationshipIndex.build(sub)
    evidence = scored.evidence(sub, q, cfg, **asked(query, cfg))
    top = max(cfg.expand_episodes, k, cfg.highly_related_episodes or max(k, len(index.episodes)))
    chains: dict[uuid.UUID, float] = {}
    ranked = rank_scored(scored, sub, query, cfg, top, index, evidence, k, chains)
    before, known = len(sub.nodes), len(sub.edges)

    def grown() -> FirstRanking:
        grew = index.grow(sub, known)
        same = expansion_unscored(scored, sub, grew, before, known, chains, cfg)
        return FirstRanking(ranked, evidence, grew, top, k, same)

    return grown(), (scored, sub, grown)


def _dump(resp: Any) -> Any:
    out = resp.model_dump(mode="json")
    out.pop("timings_ms")
    return out


def test_the_first_ranking_is_the_final_one_when_the_expansion_adds_unrecalled_points() -> None:
    g, hits = harbour_graph()
    _, (scored, sub, grown) = _first(g, hits, QUERY)
    g.node("P4", "FacetPoint", search_text="Tomas Berg: the kayak is red.", speaker="Tomas Berg")
    g.edge("F2", "has_point", "P4")
    sub.unit_distances[nid("P4")] = 0.7
    first = grown()
    assert first.unchanged
    opts = SearchOptions(display="highly_related")
    reused = respond(hits, sub, pq(QUERY), CFG, opts, scored=scored, index=first.index, first=first)
    fresh = respond(hits, sub, pq(QUERY), CFG, opts)
    assert _dump(reused) == _dump(fresh)


def test_the_first_ranking_is_not_reused_when_the_expansion_can_change_a_score() -> None:
    # A recalled point the projection had left out.
    g, hits = harbour_graph()
    hits.append(hit(POINTS, "P5", 0.2, "Tomas Berg: I paddled to the harbour."))
    _, (_, _, grown) = _first(g, hits, QUERY)
    g.node("P5", "FacetPoint", search_text="Tomas Berg: I paddled to the harbour.")
    g.edge("F2", "has_point", "P5")
    assert not grown().unchanged
    # A link whose text was recalled, cheaper than the chain of its episode.
    g, hits = harbour_graph()
    hits.append(Hit(collection="Edge_text", text="F2 -> P6", distance=0.01))
    _, (_, _, grown) = _first(g, hits, QUERY)
    g.node("P6", "FacetPoint", search_text="Tomas Berg: it floats.")
    g.edge("F2", "has_point", "P6")
    assert not grown().unchanged
    # ... but not when it costs more than that chain.
    g, hits = harbour_graph()
    hits.append(Hit(collection="Edge_text", text="F2 -> P6", distance=1.5))
    _, (_, _, grown) = _first(g, hits, QUERY)
    g.node("P6", "FacetPoint", search_text="Tomas Berg: it floats.")
    g.edge("F2", "has_point", "P6")
    assert grown().unchanged
    # A new link to a facet the ranking knew.
    g, hits = harbour_graph()
    _, (_, _, grown) = _first(g, hits, QUERY)
    g.edge("Kayak", "has_facet", "F1")
    assert not grown().unchanged


def test_provenance_text_is_parsed_on_first_read_and_equals_its_rows() -> None:
    import pickle

    from memflow.recall.types import GraphNode, Provenance

    rows = [["chunk-1", str(HARBOUR_DOC), "harbour.json", "2024-03-01T10:00:00+00:00"]]
    node = GraphNode(id=nid("P"), kind="FacetPoint", sources=json.dumps(rows))
    assert isinstance(node.sources, Provenance)
    assert node.sources == rows and rows == node.sources and len(node.sources) == 1
    assert node.sources[0][0] == "chunk-1" and [r[0] for r in node.sources] == ["chunk-1"]
    assert not GraphNode(id=nid("Q"), kind="Facet", sources="[]").sources
    assert pickle.loads(pickle.dumps(node)).sources == rows


def test_edges_between_either_way_round_in_the_order_added() -> None:
    g = G()
    g.node("E", "Episode")
    g.node("F", "Facet")
    g.node("N", "Entity")
    g.edge("E", "has_facet", "F", "one")
    g.edge("F", "involves_entity", "N")
    g.edge("E", "has_facet", "F", "two")
    index = g.index()
    assert [e.edge_text for e in index.edges_between(nid("F"), nid("E"))] == ["one", "two"]
    assert [e.edge_text for e in index.edges_between(nid("N"), nid("F"))] == ["F -> N"]
    assert index.edges_between(nid("E"), nid("N")) == []
    # edges an expansion adds after a first ask (RelationshipIndex.grow) are paired too
    sub, known = g.sub(), len(g.edges)
    g.edge("N", "involves_entity", "F", "three")
    assert index.grow(sub, known) is index
    assert [e.edge_text for e in index.edges_between(nid("F"), nid("N"))] == ["F -> N", "three"]


def test_edges_with_texts_by_text_in_the_order_added() -> None:
    g = G()
    g.node("E", "Episode")
    g.node("F", "Facet")
    g.edge("E", "has_facet", "F", "one")
    g.edge("F", "has_point", "P", "two")
    g.edge("E", "has_facet", "F", "one")
    index = g.index()
    found = index.edges_with_texts({"one", "three"})
    assert list(found) == ["one"] and [e.relationship for e in found["one"]] == ["has_facet"] * 2
