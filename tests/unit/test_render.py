"""Output assembly: token counting, time labels, summary / highly_related / detail contexts."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from memflow.recall.config import RecallConfig
from memflow.recall.render import (
    count_tokens,
    evidence_units,
    format_time,
    render,
)
from memflow.recall.scoring import Evidence, RelationshipIndex
from memflow.recall.types import (
    Bundle,
    ContextUnit,
    GraphEdge,
    GraphNode,
    Hit,
    NodeKind,
    Relationship,
    Subgraph,
)

# The packing tests below use facet texts as units with lambda 0.05 (the LoCoMo-chosen default) and
# "[time] [name]" headers; points-only units have their own test.
CFG = RecallConfig(
    relevance_cutoff=None,
    episode_prior_lambda=0.05,
    facet_prior_mu=0.0,
    highly_related_facets=True,
    highly_related_names=True,
)


def nid(name: str) -> uuid.UUID:
    return uuid.uuid5(uuid.NAMESPACE_URL, name)


def d(y: int, m: int, day: int) -> datetime:
    return datetime(y, m, day, tzinfo=UTC)


class G:
    def __init__(self) -> None:
        self.nodes: dict[uuid.UUID, GraphNode] = {}
        self.edges: list[GraphEdge] = []

    def node(self, name: str, kind: NodeKind, text: str | None = None, **kw: object) -> str:
        fields: dict[str, object] = {"name": name}
        if kind in ("Facet", "FacetPoint"):
            fields["search_text"] = text or name
        self.nodes[nid(name)] = GraphNode(id=nid(name), kind=kind, **fields, **kw)  # type: ignore[arg-type]
        return name

    def edge(self, a: str, rel: Relationship, b: str, text: str = "") -> None:
        self.edges.append(GraphEdge(src=nid(a), relationship=rel, dst=nid(b), edge_text=text))

    def sub(self) -> Subgraph:
        return Subgraph(nodes=self.nodes, edges=self.edges)


def ev(
    best: Mapping[uuid.UUID, float],
    edges: Mapping[str, float] | None = None,
    adjust: Mapping[uuid.UUID, float] | None = None,
) -> Evidence:
    """Evidence whose hits' raw distances are the given scores."""
    hits = {
        n: Hit(collection="FacetPoint_search_text", node_id=n, text=str(n), distance=d)
        for n, d in best.items()
    }
    return Evidence(
        best=dict(best), edges=dict(edges or {}), unit_adjust=dict(adjust or {}), node_hits=hits
    )


def bundle(name: str, score: float) -> Bundle:
    return Bundle(episode_id=nid(name), score=score, best_path="direct_episode")


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("hello world", 2),
        ("  hello   world \n again ", 3),
        ("你好世界", 2),
        ("你好世界。", 3),
        ("API 流式返回", 3),
        ("API流式", 2),
        ("三个字", 2),
        ("[2023-05-08] [Lunch with Ines]", 4),
    ],
)
def test_count_tokens(text: str, tokens: int) -> None:
    assert count_tokens(text) == tokens


def test_count_tokens_of_joined_parts_never_exceeds_the_sum() -> None:
    parts = ["一二三", "abc def", "四五六七八", "x", "九"]
    assert count_tokens("\n".join(parts)) <= sum(count_tokens(p) for p in parts)


@pytest.mark.parametrize(
    ("start", "end", "created", "label"),
    [
        (d(2023, 5, 8), d(2023, 5, 9), None, "2023-05-08"),
        (d(2023, 5, 1), d(2023, 6, 1), None, "2023-05"),
        (d(2023, 1, 1), d(2024, 1, 1), None, "2023"),
        (d(2023, 5, 3), d(2023, 5, 8), None, "2023-05-03 – 2023-05-07"),
        (d(2023, 5, 3), None, None, "2023-05-03"),
        (
            datetime(2023, 5, 8, 13, 56, tzinfo=UTC),
            datetime(2023, 5, 8, 15, 0, tzinfo=UTC),
            None,
            "2023-05-08",
        ),
        (None, None, d(2024, 1, 2), "2024-01-02"),
        (None, None, None, None),
    ],
)
def test_format_time(
    start: datetime | None, end: datetime | None, created: datetime | None, label: str | None
) -> None:
    node = GraphNode(
        id=nid("e"), kind="Episode", time_start=start, time_end=end, created_at=created
    )
    assert format_time(node) == label


def two_episodes() -> G:
    g = G()
    g.node(
        "Lunch with Ines",
        "Episode",
        summary="Ines and Bob had lunch.",
        time_start=d(2023, 5, 8),
        time_end=d(2023, 5, 9),
    )
    g.node("API 流式返回改造", "Episode", summary="流式返回改造，鉴权中间件不变。")
    return g


def test_summary_mode() -> None:
    g = two_episodes()
    bundles = [bundle("Lunch with Ines", 0.2), bundle("API 流式返回改造", 0.3)]
    results, context = render(bundles, g.sub(), "summary", CFG, evidence=ev({}))
    assert results[0].context == "[2023-05-08] [Lunch with Ines]\nInes and Bob had lunch."
    assert results[1].context == "[API 流式返回改造]\n流式返回改造，鉴权中间件不变。"
    assert context == results[0].context + "\n\n---\n\n" + results[1].context
    assert [r.rank for r in results] == [1, 2]
    assert results[0].time == "2023-05-08" and results[1].time is None
    assert results[0].name == "Lunch with Ines"


def test_summary_budget_keeps_the_whole_blocks_that_fit() -> None:
    g = two_episodes()
    bundles = [bundle("Lunch with Ines", 0.2), bundle("API 流式返回改造", 0.3)]
    results, full = render(bundles, g.sub(), "summary", CFG, evidence=ev({}))
    first = count_tokens(results[0].context)
    second = count_tokens(results[1].context)
    assert first < second
    # Room for one block: the first fits, the second does not.
    _, context = render(bundles, g.sub(), "summary", CFG, evidence=ev({}), budget_tokens=second)
    assert context == results[0].context
    # Below the packing ladder's first point (50 tokens) a block that does not fit ends the
    # context (pack_indexes: the rank-order prefix that fits); tests/unit/test_packing.py covers
    # the skipping at the ladder's points.
    assert first + second < RecallConfig().pack_ladder_floor
    _, context = render(
        list(reversed(bundles)), g.sub(), "summary", CFG, evidence=ev({}), budget_tokens=first
    )
    assert context == ""
    _, context = render(
        bundles, g.sub(), "summary", CFG, evidence=ev({}), budget_tokens=first + second
    )
    assert context == full
    _, context = render(bundles, g.sub(), "summary", CFG, evidence=ev({}), budget_tokens=1)
    assert context == ""


def evidence_graph() -> tuple[G, dict[uuid.UUID, float]]:
    g = two_episodes()
    g.node("Other", "Episode", summary="not a result")
    g.node("lunch", "Facet", anchor_text="They met at noon in Rome")
    g.node("api", "Facet")
    g.node("p_rome", "FacetPoint", "Ines picked the restaurant in Rome")
    g.node("p_bob", "FacetPoint", "Bob paid the bill")
    g.node("p_unhit", "FacetPoint", "nobody hit this point")
    g.node("p_auth", "FacetPoint", "鉴权中间件不能改")
    g.node("p_other", "FacetPoint", "a point of a non-result episode")
    g.node("f_other", "Facet")
    g.edge("Lunch with Ines", "has_facet", "lunch")
    g.edge("API 流式返回改造", "has_facet", "api")
    g.edge("Other", "has_facet", "f_other")
    for p in ("p_rome", "p_bob", "p_unhit"):
        g.edge("lunch", "has_point", p)
    g.edge("api", "has_point", "p_auth")
    g.edge("f_other", "has_point", "p_other")
    best = {
        nid("p_rome"): 0.10,
        nid("p_bob"): 0.30,
        nid("lunch"): 0.20,
        nid("p_auth"): 0.12,
        nid("p_other"): 0.0,
    }
    return g, best


def test_points_only_evidence_units_with_a_stronger_prior() -> None:
    g, best = evidence_graph()
    bundles = [bundle("Lunch with Ines", 0.2), bundle("API 流式返回改造", 1.0)]
    index = RelationshipIndex.build(g.sub())
    cfg = RecallConfig(
        relevance_cutoff=None,
        highly_related_facets=False,
        episode_prior_lambda=0.3,
        facet_prior_mu=0.0,
    )
    units = evidence_units(bundles, index, ev(best), cfg)
    # p_rome 0.10 + 0.3*0.2 = 0.16; p_bob 0.30 + 0.06 = 0.36; p_auth 0.12 + 0.3 = 0.42;
    # the facet "lunch" has points, so its text is not a unit of its own
    assert [u.node_id for u in units] == [nid("p_rome"), nid("p_bob"), nid("p_auth")]
    assert [round(u.rank_score, 6) for u in units] == [0.16, 0.36, 0.42]


def test_evidence_units_rank_with_episode_prior() -> None:
    g, best = evidence_graph()
    bundles = [bundle("Lunch with Ines", 0.2), bundle("API 流式返回改造", 1.0)]
    index = RelationshipIndex.build(g.sub())
    units = evidence_units(bundles, index, ev(best), CFG)
    # p_rome 0.10 + 0.05*0.2 = 0.11; p_auth 0.12 + 0.05 = 0.17; lunch 0.21; p_bob 0.31
    assert [u.node_id for u in units] == [nid("p_rome"), nid("p_auth"), nid("lunch"), nid("p_bob")]
    assert [round(u.rank_score, 6) for u in units] == [0.11, 0.17, 0.21, 0.31]
    assert units[2].text == "lunch: They met at noon in Rome"
    prior_heavy = evidence_units(
        bundles,
        index,
        ev(best),
        RecallConfig(relevance_cutoff=None, episode_prior_lambda=1.0, highly_related_facets=True),
    )
    assert prior_heavy[-1].node_id == nid("p_auth")  # 0.12 + 1.0 now ranks last


def test_highly_related_groups_under_headers() -> None:
    g, best = evidence_graph()
    bundles = [bundle("Lunch with Ines", 0.2), bundle("API 流式返回改造", 1.0)]
    results, context = render(bundles, g.sub(), "highly_related", CFG, evidence=ev(best))
    assert results[0].context == (
        "[2023-05-08] [Lunch with Ines]\n"
        "Ines picked the restaurant in Rome\n"
        "lunch: They met at noon in Rome\n"
        "Bob paid the bill"
    )
    assert results[1].context == "[API 流式返回改造]\n鉴权中间件不能改"
    assert context == results[0].context + "\n\n" + results[1].context
    assert "nobody hit" not in context and "non-result" not in context


@pytest.mark.parametrize("budget", [1, 8, 12, 15, 20, 30, 200])
def test_highly_related_respects_the_budget(budget: int) -> None:
    g, best = evidence_graph()
    bundles = [bundle("Lunch with Ines", 0.2), bundle("API 流式返回改造", 1.0)]
    results, context = render(
        bundles, g.sub(), "highly_related", CFG, evidence=ev(best), budget_tokens=budget
    )
    assert count_tokens(context) <= budget
    for r in results:
        assert count_tokens(r.context) <= budget
    assert len(results) == 2  # results are kept even when their evidence did not fit


def test_highly_related_budget_keeps_at_larger_budgets_what_it_packed() -> None:
    g, best = evidence_graph()
    bundles = [bundle("Lunch with Ines", 0.2), bundle("API 流式返回改造", 1.0)]

    def packed(budget: int) -> str:
        ctx = render(
            bundles, g.sub(), "highly_related", CFG, evidence=ev(best), budget_tokens=budget
        )
        return ctx[1]

    # token costs: lunch header 4, p_rome 6, API header 5 + p_auth 4, facet text 7, p_bob 4.
    # Greedy skipping packed p_bob at 14 (p_auth's group did not fit) and lost it at 19 (it
    # did). Under the ladder's first point the rule packs the rank-order prefix that fits.
    lunch = "[2023-05-08] [Lunch with Ines]\nInes picked the restaurant in Rome"
    assert packed(12) == lunch
    assert packed(14) == lunch
    assert packed(19) == lunch + "\n\n[API 流式返回改造]\n鉴权中间件不能改"
    assert packed(3) == ""
    # At the ladder's first point (50) everything fits.
    assert packed(50) == (
        lunch
        + "\nlunch: They met at noon in Rome\nBob paid the bill\n\n[API 流式返回改造]\n鉴权中间件不能改"
    )


def test_highly_related_is_deterministic() -> None:
    g, best = evidence_graph()
    bundles = [bundle("Lunch with Ines", 0.2), bundle("API 流式返回改造", 1.0)]
    first = render(bundles, g.sub(), "highly_related", CFG, evidence=ev(best))
    again = render(bundles, g.sub(), "highly_related", CFG, evidence=ev(best))
    assert first == again


def detail_graph() -> tuple[G, dict[uuid.UUID, float], dict[str, float]]:
    g = G()
    g.node("Trip", "Episode", summary="A trip to Rome.", created_at=d(2023, 7, 1))
    best: dict[uuid.UUID, float] = {}
    for i in range(6):
        f = g.node(f"facet{i}", "Facet")
        g.edge("Trip", "has_facet", f, text=f"trip -> facet{i}")
        best[nid(f)] = 0.1 * (6 - i)  # facet5 best, facet0 worst
    for j in range(10):
        p = g.node(f"point{j}", "FacetPoint")
        g.edge("facet5", "has_point", p)
        if j % 2:
            best[nid(p)] = 0.01 * j
    for name, role in (("Ines", "guide"), ("Bob", "driver"), ("Eve", "tourist")):
        g.node(name, "Entity")
        g.edge("Trip", "involves_entity", name, text=f"{name} | {role}")
    best[nid("Eve")] = 0.05
    best[nid("Bob")] = 0.2
    return g, best, {"Ines | guide": 0.0}


def test_detail_mode() -> None:
    g, best, edges = detail_graph()
    results, context = render(
        [bundle("Trip", 0.3)], g.sub(), "detail", CFG, evidence=ev(best, edges)
    )
    lines = context.splitlines()
    assert lines[:2] == ["[2023-07-01] [Trip]", "A trip to Rome."]
    facets = [line for line in lines if line.startswith("## ")]
    assert facets == ["## facet5", "## facet4", "## facet3", "## facet2"]
    points = lines[lines.index("## facet5") + 1 : lines.index("## facet4")]
    # hit points first by distance (1, 3, 5, 7, 9), then unhit ones by text
    assert points == [f"- point{j}" for j in (1, 3, 5, 7, 9, 0, 2, 4)]
    entities = lines[lines.index("Entities:") + 1 :]
    # Eve 0.05 + entity_cost 0.05, Bob 0.2 + 0.05, Ines (no hit) inf: an edge hit does not rank it
    assert entities == ["- Eve | tourist", "- Bob | driver"]
    assert results[0].context == context


def test_detail_entities_pay_for_being_generic() -> None:
    g, best, edges = detail_graph()
    g.nodes[nid("Eve")] = GraphNode(id=nid("Eve"), kind="Entity", name="Eve", degree=10)
    sub = Subgraph(nodes=g.nodes, edges=g.edges, episode_count=10)
    # Eve is in every episode: 0.05 + 0.05 + 0.3 * (1 - 0) = 0.4 > Bob 0.2 + 0.05 + 0.3 * (1 - s)
    _, context = render([bundle("Trip", 0.3)], sub, "detail", CFG, evidence=ev(best, edges))
    assert context.splitlines()[-2:] == ["- Bob | driver", "- Eve | tourist"]


def test_highly_related_shows_expanded_points_of_the_subgraph() -> None:
    g, best = evidence_graph()
    sub = g.sub()
    sub.unit_distances[nid("p_unhit")] = 0.01
    bundles = [bundle("Lunch with Ines", 0.2)]
    units: list[ContextUnit] = []
    _, context = render(
        bundles,
        sub,
        "highly_related",
        RecallConfig(relevance_cutoff=None),
        evidence=ev(best),
        units_out=units,
    )
    assert context.splitlines()[:2] == ["[2023-05-08]", "nobody hit this point"]
    assert units[0].node_id == nid("p_unhit") and units[0].kind == "FacetPoint"
    assert units[0].header_tokens == count_tokens("[2023-05-08]")


def test_detail_limits_come_from_config() -> None:
    g, best, _ = detail_graph()
    cfg = RecallConfig(
        relevance_cutoff=None, detail_max_facets=1, detail_max_points=2, detail_max_entities=0
    )
    _, context = render([bundle("Trip", 0.3)], g.sub(), "detail", cfg, evidence=ev(best))
    assert context.splitlines()[2:] == ["## facet5", "- point1", "- point3"]


DEFAULT = RecallConfig(
    relevance_cutoff=None, episode_prior_lambda=0.2
)  # mu 0.1, points only (hand-computed ranks)


# The hand-computed ranks below use lambda = 0.2 (the shipped value is RecallConfig's).
LAMBDA_02 = RecallConfig(relevance_cutoff=None, episode_prior_lambda=0.2)


def default_units(
    extra: Mapping[uuid.UUID, float] | None = None,
    adjust: Mapping[uuid.UUID, float] | None = None,
    config: RecallConfig = LAMBDA_02,
) -> list[tuple[str, float]]:
    g, best = evidence_graph()
    g.node("menu", "Facet")  # a facet without points is a unit of its own
    g.edge("Lunch with Ines", "has_facet", "menu")
    best[nid("menu")] = 0.05
    bundles = [bundle("Lunch with Ines", 0.2), bundle("API 流式返回改造", 1.0)]
    index = RelationshipIndex.build(g.sub())
    names = {node.id: node.name for node in g.nodes.values()}
    units = evidence_units(bundles, index, ev(best, adjust=adjust), config, extra)
    return [(names[u.node_id], round(u.rank_score, 6)) for u in units]


def test_default_units_rank_raw_distance_prior_and_facet_window() -> None:
    # rank = d + 0.2 * EpisodeScore + 0.1 * best recalled point of the unit's facet:
    # menu 0.05 + 0.04 + 0.1 * 0.05 (no points: its own distance) = 0.095;
    # p_rome 0.10 + 0.04 + 0.01 = 0.15; p_auth 0.12 + 0.2 + 0.012 = 0.332; p_bob 0.30 + 0.05
    assert default_units() == [
        ("menu", 0.095),
        ("p_rome", 0.15),
        ("p_auth", 0.332),
        ("p_bob", 0.35),
    ]


def test_expanded_points_join_with_their_exact_distance() -> None:
    # p_unhit was not recalled but fetched for the best episodes: 0.01 + 0.04 + 0.1 * 0.10
    # (the window is the facet's best *recalled* point); a recalled point keeps its hit.
    units = default_units(extra={nid("p_unhit"): 0.01, nid("p_bob"): 0.0})
    assert units[0] == ("p_unhit", 0.06)
    assert ("p_bob", 0.35) in units


def test_unit_rules_apply_to_points_only() -> None:
    units = default_units(adjust={nid("p_bob"): -0.25, nid("menu"): -1.0})
    assert units[:2] == [("menu", 0.095), ("p_bob", 0.1)]
    facets = RecallConfig(
        relevance_cutoff=None, highly_related_facets=True, episode_prior_lambda=0.2
    )
    # lunch 0.20 + 0.04 + 0.01: a facet text is not a turn, the rules leave it alone
    assert ("lunch", 0.25) in default_units(adjust={nid("lunch"): -1.0}, config=facets)


def test_units_use_raw_distances_not_bonused_scores() -> None:
    g, best = evidence_graph()
    index = RelationshipIndex.build(g.sub())
    near = Hit(collection="FacetPoint_search_text", node_id=nid("p_bob"), text="b", distance=0.05)
    evidence = Evidence(best=best, node_hits={**ev(best).node_hits, nid("p_bob"): near})
    units = evidence_units([bundle("Lunch with Ines", 0.2)], index, evidence, DEFAULT)
    # p_bob: 0.05 + 0.04 + 0.1 * 0.05 (now its facet's best point itself)
    assert (units[0].node_id, round(units[0].rank_score, 6)) == (nid("p_bob"), 0.095)


def test_unit_ties_go_by_text_and_equal_texts_show_once() -> None:
    def ranked(ids: dict[str, str]) -> list[str]:
        g = G()
        g.node("Ep", "Episode")
        g.node("f", "Facet")
        g.edge("Ep", "has_facet", "f")
        for name, text in ids.items():
            g.node(name, "FacetPoint", text)
            g.edge("f", "has_point", name)
        best = dict.fromkeys((nid(n) for n in ids), 0.2)
        index = RelationshipIndex.build(g.sub())
        return [u.text for u in evidence_units([bundle("Ep", 0.1)], index, ev(best), DEFAULT)]

    texts = ["Oskar fixed the kiln.", "Ines bought clay.", "王芳买了陶土。", "Ines bought clay."]
    one = ranked({f"a{i}": t for i, t in enumerate(texts)})
    two = ranked({f"z{9 - i}": t for i, t in enumerate(reversed(texts))})
    assert one == two == sorted(set(texts))


def test_detail_says_each_fact_once() -> None:
    """A rules-extracted document: the summary repeats each section as "【title】text", and
    each facet's text is the very points below it. Detail shows each sentence once."""
    g = G()
    sections = {
        "约束": ["鉴权中间件不能改。", "网关超时是 60 秒。"],
        "计划": ["3月18日 完成原型。"],
        "背景": ["首字等待时间达到 8 秒。"],
    }
    summary = "\n".join(f"【{t}】{' '.join(ps)}" for t, ps in sections.items())
    g.node("Ep", "Episode", summary=summary, created_at=d(2024, 3, 4))
    best: dict[uuid.UUID, float] = {}
    for i, (title, points) in enumerate(sections.items()):
        g.node(title, "Facet", anchor_text="\n".join(points))
        g.edge("Ep", "has_facet", title)
        best[nid(title)] = 0.1 * (i + 1)
        for text in points:
            g.node(text, "FacetPoint")
            g.edge(title, "has_point", text)
    cfg = RecallConfig(relevance_cutoff=None, detail_max_facets=2)  # 背景 is not shown as a facet
    _, context = render([bundle("Ep", 0.3)], g.sub(), "detail", cfg, evidence=ev(best))
    assert context.splitlines() == [
        "[2024-03-04] [Ep]",
        "【背景】首字等待时间达到 8 秒。",  # said nowhere below: kept
        "## 约束",
        "- 网关超时是 60 秒。",  # no point was hit: by text
        "- 鉴权中间件不能改。",
        "## 计划",
        "- 3月18日 完成原型。",
    ]
    for sentence in ("鉴权中间件不能改", "3月18日 完成原型"):
        assert context.count(sentence) == 1
    # A facet text that says more than its shown points is kept after its title.
    g.node("计划", "Facet", anchor_text="3月18日 完成原型。 3月25日 灰度。")
    _, context = render([bundle("Ep", 0.3)], g.sub(), "detail", cfg, evidence=ev(best))
    assert "## 计划: 3月18日 完成原型。 3月25日 灰度。" in context.splitlines()


def test_the_relevance_cutoff_leaves_out_units_far_behind_the_best() -> None:
    g, best = evidence_graph()
    bundles = [bundle("Lunch with Ines", 0.2), bundle("API 流式返回改造", 1.0)]
    index = RelationshipIndex.build(g.sub())
    every = evidence_units(bundles, index, ev(best), RecallConfig(relevance_cutoff=None))
    top = every[0].rank_score
    for cutoff in (0.0, 0.15, 0.5):
        cut = RecallConfig(relevance_cutoff=cutoff, fill_budget=False)
        kept = evidence_units(bundles, index, ev(best), cut)
        assert kept == [u for u in every if u.rank_score <= top + cutoff]
        # With fill_budget (the default) the others follow them, in rank order, marked.
        filled = evidence_units(bundles, index, ev(best), RecallConfig(relevance_cutoff=cutoff))
        assert filled[: len(kept)] == kept
        assert filled[len(kept) :] == [
            replace(u, fill=True) for u in every if u.rank_score > top + cutoff
        ]
    cut = RecallConfig(relevance_cutoff=0.0, fill_budget=False)
    assert len(evidence_units(bundles, index, ev(best), cut)) < len(every)


def test_the_relevance_cut_off_spares_a_replaced_fact_by_its_validity_not_its_text() -> None:
    g, best = evidence_graph()
    # p_bob was replaced (validity on the node); p_auth merely quotes the mark in its text.
    g.node("p_bob", "FacetPoint", "Bob paid the bill", replaced_at=d(2023, 6, 1))
    g.node("p_auth", "FacetPoint", "鉴权中间件不能改 [superseded, valid until 2020-01-01]")
    bundles = [bundle("Lunch with Ines", 0.2), bundle("API 流式返回改造", 1.0)]
    cfg = RecallConfig(
        relevance_cutoff=0.05, highly_related_facets=False, episode_prior_lambda=0.3,
        facet_prior_mu=0.0, fill_budget=False,
    )  # fmt: skip
    units = evidence_units(bundles, RelationshipIndex.build(g.sub()), ev(best), cfg)
    # p_rome 0.16 is best; p_bob 0.36 and p_auth 0.42 are both beyond 0.16 + 0.05.
    assert [u.node_id for u in units] == [nid("p_rome"), nid("p_bob")]
    assert units[1].replaced and not units[0].replaced
