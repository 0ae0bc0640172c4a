"""Cross-language evidence, second round (issue 29): months written either way, the subject
words of a question, and the other script's facet titles when the question's own language has
no note for its words. A store of one script is left exactly as it was. Invented examples."""

from __future__ import annotations

import uuid

import pytest

from memflow.recall.bonus import apply_bonuses, language_shifts, uncovered_share
from memflow.recall.config import RecallConfig
from memflow.recall.preprocess import PreprocessedQuery, months, subject_terms
from memflow.recall.types import Hit

CFG = RecallConfig()
OFF = CFG.model_copy(update={"cross_title_bonus": 0.0})
POINTS, TITLES = "FacetPoint_search_text", "Facet_search_text"


def hit(text: str, distance: float, collection: str = POINTS) -> Hit:
    return Hit(collection, text, distance, uuid.uuid5(uuid.NAMESPACE_URL, collection + text))


def query(text: str) -> PreprocessedQuery:
    return PreprocessedQuery(
        original=text, vector_query=text, keywords=[], hybrid_reason=None, use_hybrid=False
    )


def scores(hits: list[Hit], q: str, cfg: RecallConfig) -> list[float]:
    return [round(h.score, 6) for h in apply_bonuses(hits, query(q), cfg)]


def test_months_are_read_in_either_language() -> None:
    assert months("When does the November pilot start?") == {11}
    assert months("Kick-off: 2031-11-05 · review Sept. 3, Oct 9") == {9, 10, 11}
    assert months("试点 11月5日 开始，复盘在十二月") == {11, 12}
    assert months("十月") == {10} and months("2031年3月") == {3}
    # a duration, "every month", the verb "may" and an impossible date are no month
    assert months("保留 3个月，每月复盘") == frozenset()
    assert months("you may leave; build 2031-13-02") == frozenset()


def test_the_subject_of_a_question_drops_its_question_words() -> None:
    assert subject_terms("How many lighthouses does the Orkney office run?") == {
        "light", "orkne", "offic", "run"}  # fmt: skip
    # no question word, no bigram straddling a function character ("的灯", "塔是")
    assert subject_terms("灯塔的负责人是谁？") == {"灯塔", "负责", "责人"}
    assert subject_terms("多少？") == frozenset()


def test_the_share_of_subject_words_the_own_language_has_no_note_for() -> None:
    hits = [hit("The Orkney office runs two lighthouses.", 0.1), hit("灯塔每周巡检", 0.2)]
    assert uncovered_share(hits, "How many lighthouses does the Orkney office run?") == 0.0
    # "keepe" is not a stem the English notes have; a stem that starts another counts
    assert uncovered_share(hits, "Who keeps the Orkney lighthouse?") == pytest.approx(1 / 3)
    assert uncovered_share(hits, "灯塔每周巡检吗？") == 0.0
    assert uncovered_share(hits, "奥克尼的灯塔归谁管？") == pytest.approx(4 / 5)


def test_other_script_titles_move_by_the_uncovered_share() -> None:
    hits = [hit("Ferry timetable — winter", 0.10, TITLES), hit("Dock fees 2031", 0.12, TITLES),
            hit("奥克尼灯塔值守安排", 0.16, TITLES), hit("渡轮冬季时刻表", 0.18, TITLES)]  # fmt: skip
    q = "Who keeps watch at the Orkney lighthouse?"  # keeps, watch, orkne, light: none in English
    shift = language_shifts(hits, q, CFG)[TITLES]
    assert shift == pytest.approx(0.06)  # the two scripts' means
    assert uncovered_share(hits, q) == 1.0
    assert scores(hits, q, OFF) == [0.10, 0.12, 0.10, 0.12]
    assert scores(hits, q, CFG) == [0.10, 0.12, 0.0, 0.02]  # 0.1 x 1.0 more
    # the English notes cover the question: titles move by the shift only
    covered = [*hits, hit("Who keeps watch at the lighthouse in Orkney", 0.11)]
    assert uncovered_share(covered, q) == 0.0
    assert scores(covered, q, CFG) == scores(covered, q, OFF)


def test_a_month_named_in_one_language_meets_a_date_in_the_other() -> None:
    cfg = CFG.model_copy(update={"language_shift": 0})
    hits = [hit("Pilot kick-off: 2031-09-14", 0.10), hit("试点启动：11月5日", 0.14),
            hit("试点启动：9月8日", 0.14)]  # fmt: skip
    assert scores(hits, "When does the November pilot start?", cfg) == [0.10, 0.08, 0.14]
    # within one language a month is left to the embedder and the time rules
    assert scores(hits, "试点十一月哪天启动？", cfg) == [0.10, 0.14, 0.14]


def test_a_store_of_one_script_ranks_exactly_as_without_the_rules() -> None:
    hits = [hit("Pilot kick-off moved to 2031-11-05", 0.10), hit("Ferry timetable", 0.14, TITLES),
            hit("Dock fees", 0.12, TITLES), hit("The November pilot budget", 0.2)]  # fmt: skip
    before = RecallConfig(cross_title_bonus=0, cross_term_bonus=0)
    for q in ("Who keeps the Orkney lighthouse in November?", "When does the pilot start?"):
        assert language_shifts(hits, q, CFG) == {}
        assert scores(hits, q, CFG) == scores(hits, q, before)
