"""Cross-language evidence (issue 29): the language shift of a store in two scripts, literals
(ids, versions, amounts) in any language, Latin words that crossed into the other script, and
shared terms that stop counting when the units are in two languages. Invented examples."""

from __future__ import annotations

import uuid

import pytest

from memflow.recall.bonus import apply_bonuses, language_shifts, literal_bonus
from memflow.recall.config import RecallConfig
from memflow.recall.preprocess import PreprocessedQuery, extract_literals, is_cjk_text
from memflow.recall.types import Hit
from memflow.recall.unitrules import QueryRules

CFG = RecallConfig()
# The shift alone (no literal or word bonus), or nothing at all.
SHIFT_ONLY = RecallConfig(literal_bonus=0, cross_term_bonus=0, english_term_bonus=0)
NONE = SHIFT_ONLY.model_copy(update={"language_shift": 0})
POINTS = "FacetPoint_search_text"


def hit(text: str, distance: float, collection: str = POINTS) -> Hit:
    node = None if collection == "Edge_text" else uuid.uuid5(uuid.NAMESPACE_URL, text)
    return Hit(collection=collection, node_id=node, text=text, distance=distance)


def query(text: str) -> PreprocessedQuery:
    return PreprocessedQuery(
        original=text, vector_query=text, keywords=[], hybrid_reason=None, use_hybrid=False
    )


def forms(text: str) -> set[tuple[str, str]]:
    return {(x.form, x.value) for x in extract_literals(text)}


def test_literals_have_a_written_form_and_a_value() -> None:
    assert forms("What broke in INC-7731?") == {("inc-7731", "inc7731")}
    assert forms("预算 60 万元") == {("60万", "600000")}
    assert forms("Total: €600,000.") == {("€600,000", "600000")}
    assert forms("Kestrel 2.7.0 ships") == {("2.7.0", "2.7")}
    assert forms("retention fell 6.5% in Q3") == {("6.5%", "6.5%")}
    assert forms("lantern app 5.2 版本") == {("5.2", "5.2")}
    # full-width forms are the same literals
    assert forms("ＩＮＣ－７７３１ 预算 ６０万") == {("inc-7731", "inc7731"), ("60万", "600000")}
    # dates, years, times and small counts are not literals
    assert forms("Date: 2031-06-04 · 38 minutes (14:02–14:40) in 2031, 3 people") == set()
    assert forms("2031 年的预算，2031年5月") == set()


def test_a_count_with_a_measure_word_is_no_year() -> None:
    # "1980 个" is 1980 of something: the literal "1,980" of a note in any language
    assert forms("大约 1980 个包裹滞留") == {("1980", "1980")}
    assert forms("共 2050 条短信") == {("2050", "2050")}
    assert forms("Some 1,980 parcels were held") == {("1,980", "1980")}
    assert forms("19.5 个") == {("19.5", "19.5")}


def test_a_text_is_cjk_when_its_ideographs_outweigh_its_latin_words() -> None:
    assert is_cjk_text("Grafana 只保留七天的数据")
    assert is_cjk_text("INC-7731 的根因是什么？")
    assert not is_cjk_text("What does the 60万 budget cover?")
    assert not is_cjk_text("retention fell in Q3")


def test_a_store_in_two_scripts_moves_the_other_script_by_the_gap() -> None:
    hits = [hit("the harbour crane failed", 0.10), hit("the ferry schedule", 0.14),
            hit("港口吊车故障", 0.20), hit("渡轮时刻表", 0.26)]  # fmt: skip
    cfg = SHIFT_ONLY.model_copy(update={"language_shift_top": 2})
    shifts = language_shifts(hits, "Why did the crane fail?", cfg)
    assert shifts == {POINTS: pytest.approx(0.11)}  # (0.20 + 0.26) / 2 - (0.10 + 0.14) / 2
    out = apply_bonuses(hits, query("Why did the crane fail?"), cfg)
    assert [round(h.score, 6) for h in out] == [0.10, 0.14, 0.09, 0.15]
    assert [h.distance for h in out] == [0.10, 0.14, 0.20, 0.26]  # raw distances kept
    # the query's own language is never moved; a store of one script is left as it is
    assert language_shifts(hits, "吊车为什么坏了？", cfg) == {}
    one = [hit("the harbour crane failed", 0.1), hit("the ferry schedule", 0.3)]
    assert language_shifts(one, "港口吊车为什么坏了？", cfg) == {}
    assert [h.score for h in apply_bonuses(hits, query("Why?"), NONE)] == [0.10, 0.14, 0.20, 0.26]


def test_a_literal_is_evidence_in_any_language_past_the_collections_best() -> None:
    lits = extract_literals("What does the 60万 budget cover?")
    assert literal_bonus(lits, "市场部预算总额 60万，负责人：小周。", CFG) == pytest.approx(0.1)
    assert literal_bonus(lits, "Total: €600,000 (owner: Bo).", CFG) == pytest.approx(0.05)
    assert literal_bonus(lits, "Total: €500,000 (owner: Bo).", CFG) == 0.0
    both = extract_literals("INC-7731 and INC-7790 and 2.7.0")
    assert literal_bonus(both, "INC-7731, INC-7790, 2.7.0", CFG) == pytest.approx(0.2)  # capped
    hits = [hit("The budget covers travel.", 0.10), hit("市场部预算 60万", 0.18)]
    cfg = CFG.model_copy(update={"language_shift": 0})
    out = apply_bonuses(hits, query("What does the 60万 budget cover?"), cfg)
    # the number bonus (0.12 of the 0.08 spread), then the literal: past the best
    assert [round(h.score, 6) for h in out] == [0.10, 0.0704]


def test_a_latin_word_that_crossed_scripts_counts_a_generic_shared_one_does_not() -> None:
    cfg = CFG.model_copy(update={"language_shift": 0})
    hits = [hit("The root cause was a full disk.", 0.10),
            hit("根因：Grafana 的磁盘写满了", 0.15),
            hit("root cause analysis template", 0.12)]  # fmt: skip
    out = apply_bonuses(hits, query("What was the root cause of the Grafana outage?"), cfg)
    # "Grafana" in the Chinese note: -0.06; "root cause" shared within English: nothing
    assert [round(h.score, 6) for h in out] == [0.10, 0.09, 0.12]


def test_shared_terms_count_for_nothing_over_units_in_two_scripts() -> None:
    one = QueryRules.build("Who fixed the crane?", [None], ["the crane was fixed"])
    assert one.terms
    assert one.adjustment("Ada fixed the crane", None, CFG) < 0
    two = QueryRules.build("Who fixed the crane?", [None], ["the crane was fixed", "吊车修好了"])
    assert not two.terms
    assert two.adjustment("Ada fixed the crane", None, CFG) == 0


def test_a_currency_named_in_one_language_meets_its_symbol_in_the_other() -> None:
    cfg = CFG.model_copy(update={"language_shift": 0})
    hits = [hit("运维薪资 28–40K", 0.10), hit("Ops salary band: €62–78k", 0.14),
            hit("测试薪资 22–30K", 0.12)]  # fmt: skip
    out = apply_bonuses(hits, query("运维岗位的薪资范围是多少欧元？"), cfg)
    assert [round(h.score, 6) for h in out] == [0.10, 0.08, 0.12]


def test_a_name_keeps_its_case_across_scripts() -> None:
    cfg = CFG.model_copy(update={"language_shift": 0, "english_term_bonus": 0})
    hits = [hit("冷启动降到 1.6 秒", 0.10), hit("dark mode in the web app", 0.12),
            hit("the Lantern App release", 0.12)]  # fmt: skip
    out = apply_bonuses(hits, query("App 冷启动优化到多少秒？"), cfg)
    assert [round(h.score, 6) for h in out] == [0.10, 0.12, 0.06]


def test_a_figure_with_its_unit_crosses_scripts() -> None:
    # (the number bonus within the collection's spread off: this rule alone)
    cfg = CFG.model_copy(
        update={"language_shift": 0, "number_same_unit": 0, "number_other_unit": 0}
    )
    hits = [hit("扫描件保留 9 天后删除", 0.10), hit("Scans are kept for 9 days.", 0.14),
            hit("Invoices are kept for 9 years.", 0.14), hit("Scans: 12 days", 0.14)]  # fmt: skip
    out = apply_bonuses(hits, query("扫描件保留 9 天吗？"), cfg)
    # the same value in the same unit (天 / days): a word that crossed; 9 years is not it
    assert [round(h.score, 6) for h in out] == [0.10, 0.08, 0.14, 0.14]
    # a figure that is a literal already counts once, as the literal
    long = [hit("扫描件保留 900 天", 0.10), hit("Scans are kept for 900 days.", 0.14)]
    out = apply_bonuses(long, query("扫描件保留 900 天吗？"), cfg)
    assert [round(h.score, 6) for h in out] == [0.0, 0.04]
    # a share, a multiplier or a month is no measure: "9月" is September, not nine months
    dated = [hit("复盘在 9月", 0.10), hit("Review in 9 months", 0.14)]
    assert [round(h.score, 6) for h in apply_bonuses(dated, query("9月 复盘吗？"), cfg)] == [
        0.10, 0.14]  # fmt: skip
