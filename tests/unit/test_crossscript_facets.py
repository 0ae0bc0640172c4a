"""A word that crossed scripts, or a literal, in a facet's title counts for its window and every
statement of that facet (issue 29): a note titled with a city's name or an id in one language is
about that city or id in each of its sentences, though they do not repeat it. Only hits of the
other script than the query's, as for every cross-script word; a store of one script is left as
it is. Invented notes."""

from __future__ import annotations

import uuid

from memflow.recall.bonus import apply_bonuses
from memflow.recall.config import RecallConfig
from memflow.recall.preprocess import PreprocessedQuery
from memflow.recall.types import Hit

# The crossed-word rules alone on distances: no language shift, no title share, no number
# bonus within a collection's spread.
CFG = RecallConfig(
    language_shift=0, cross_title_bonus=0, cross_name_words=1, number_same_unit=0,
    number_other_unit=0,
)  # fmt: skip
OFF = CFG.model_copy(update={"cross_term_bonus": 0})
POINTS, TITLES, WINDOWS = "FacetPoint_search_text", "Facet_search_text", "Facet_anchor_text"
GUILIN, LUOYANG = uuid.uuid4(), uuid.uuid4()


def hit(text: str, distance: float, collection: str = POINTS, node: uuid.UUID | None = None) -> Hit:
    node = node or uuid.uuid5(uuid.NAMESPACE_URL, collection + text)
    return Hit(collection=collection, node_id=node, text=text, distance=distance)


def query(text: str) -> PreprocessedQuery:
    return PreprocessedQuery(
        original=text, vector_query=text, keywords=[], hybrid_reason=None, use_hybrid=False
    )


def scores(hits: list[Hit], q: str, cfg: RecallConfig = CFG) -> list[float]:
    return [round(h.score, 6) for h in apply_bonuses(hits, query(q), cfg)]


def twin_notes() -> list[Hit]:
    """Two Chinese notes alike but for the city in their titles, and an English one."""
    return [
        hit("The Oslo desk: four guides, two drivers.", 0.10),
        hit("桂林办事处人员", 0.20, TITLES, GUILIN),
        hit("导游 4 人，司机 2 人。值班每周轮换。", 0.16, WINDOWS, GUILIN),
        hit("导游 4 人，司机 2 人。", 0.15),
        hit("洛阳办事处人员", 0.20, TITLES, LUOYANG),
        hit("导游 6 人，司机 1 人。值班每月轮换。", 0.16, WINDOWS, LUOYANG),
        hit("导游 6 人，司机 1 人。", 0.15),
    ]


def test_a_name_in_a_facet_title_counts_for_its_window_and_statements() -> None:
    q = "How many guides work at the Guilin desk?"
    # the name crossed into the Guilin title: its window and its statement get it too
    assert scores(twin_notes(), q) == [0.10, 0.14, 0.10, 0.09, 0.20, 0.16, 0.15]
    assert scores(twin_notes(), q, OFF) == [0.10, 0.20, 0.16, 0.15, 0.20, 0.16, 0.15]


def test_a_statement_outside_every_window_that_crossed_gets_nothing_from_them() -> None:
    hits = [*twin_notes(), hit("司机每周轮换一次", 0.15)]
    assert scores(hits, "How many guides work at the Guilin desk?")[-1] == 0.15


def test_a_name_in_a_window_alone_counts_for_the_window_not_its_statements() -> None:
    desk = uuid.uuid4()
    hits = [hit("The Oslo desk: four guides.", 0.10), hit("办事处人员", 0.20, TITLES, desk),
            hit("桂林：导游 4 人。洛阳：导游 6 人。", 0.16, WINDOWS, desk),
            hit("洛阳：导游 6 人。", 0.15)]  # fmt: skip
    assert scores(hits, "How many guides work at the Guilin desk?") == [0.10, 0.20, 0.10, 0.15]


def test_hits_in_the_query_s_own_script_get_nothing_from_a_facet() -> None:
    # a Chinese question: the Chinese facets are its own script, nothing crossed into them
    hits = twin_notes()
    assert scores(hits, "桂林办事处有几个导游？") == scores(hits, "桂林办事处有几个导游？", OFF)


def test_a_store_of_one_script_is_left_as_it_is() -> None:
    oslo = uuid.uuid4()
    hits = [
        hit("The Oslo desk", 0.20, TITLES, oslo),
        hit("Four guides, two drivers. Rota weekly.", 0.16, WINDOWS, oslo),
        hit("Four guides, two drivers, for 9 days.", 0.15),
    ]
    q = "Do the Oslo desk's guides work 9 days in October?"
    assert scores(hits, q) == [0.20, 0.16, 0.15]
    assert scores(hits, q) == scores(hits, q, OFF)


def test_a_literal_in_a_facet_title_counts_for_its_statements() -> None:
    first, second = uuid.uuid4(), uuid.uuid4()
    hits = [
        hit("渡轮 App 宕机复盘", 0.10, TITLES),
        hit("Incident FRY-204 — ferry app down", 0.20, TITLES, first),
        hit("Root cause: an expired certificate. Owner: Ada Lind.", 0.16, WINDOWS, first),
        hit("Root cause: an expired certificate.", 0.15),
        hit("Incident FRY-311 — ferry app slow", 0.20, TITLES, second),
        hit("Root cause: a full disk. Owner: Ada Lind.", 0.16, WINDOWS, second),
        hit("Root cause: a full disk.", 0.15),
    ]
    q = "FRY-204 的根因是什么？"
    # the literal bonus alone (the id is a Latin word too: that rule off here)
    cfg = CFG.model_copy(update={"cross_term_bonus": 0, "english_term_bonus": 0})
    # the id is in the first incident's title: its window and its statement hold it too
    assert scores(hits, q, cfg) == [0.10, 0.10, 0.06, 0.05, 0.20, 0.16, 0.15]
    without = cfg.model_copy(update={"literal_bonus": 0})
    assert scores(hits, q, without) == [0.10, 0.20, 0.16, 0.15, 0.20, 0.16, 0.15]


def test_in_a_store_of_two_scripts_a_title_s_literal_counts_in_the_query_s_script_too() -> None:
    plan, other = uuid.uuid4(), uuid.uuid4()
    hits = [
        hit("Lantern 7.2.0 — plan", 0.20, TITLES, plan),
        hit("Code freeze: 2031-03-02. Scope: offline maps.", 0.16, WINDOWS, plan),
        hit("Code freeze: 2031-03-02.", 0.15),
        hit("Lantern 7.3.0 — plan", 0.20, TITLES, other),
        hit("Code freeze: 2031-05-11. Offline maps slip from 7.2.0.", 0.16, WINDOWS, other),
        hit("Code freeze: 2031-05-11.", 0.15),
        hit("灯笼 7.3.0 发布计划", 0.22, TITLES),
    ]
    q = "When is the code freeze for Lantern 7.2.0?"
    cfg = CFG.model_copy(update={"cross_term_bonus": 0})
    # the plan titled 7.2.0 is about it in each statement; the other only mentions it
    assert scores(hits, q, cfg) == [0.10, 0.06, 0.05, 0.20, 0.06, 0.15, 0.22]
    # one script: the title's literal stays with the title (the rule needs both scripts)
    assert scores(hits[:-1], q, cfg) == [0.10, 0.16, 0.15, 0.20, 0.06, 0.15]
