"""Cross-language recall on a real store (issue 29), notes invented here: a question in one
language names a month that a note in the other writes in a date; a question answered in its
own language keeps its answer first; a store of one script ranks exactly as without the
cross-language rules; a later note's owner line does not outdate a budget's (its figure asked in
the other language)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memflow.recall.config import RecallConfig

pytestmark = pytest.mark.slow

ENGLISH = {
    "lisbon-desks.md": "# Tartu office — desk booking\n\nDesks are booked in Deskly by 17:00 the "
    "day before.\nEleven desks and two phone booths. Contact: Rui Matos.\n",
    "robot-pilot.md": "# Warehouse robots — pilot review\n\nThe picking robots ran for six weeks "
    "in Tilburg.\nPicks per hour rose from 90 to 140.\nNext step: a second aisle, starting "
    "2031-11-03.\n",
    "coffee-rota.md": "# Coffee machine rota\n\nEvery Friday someone descales the machine.\nBeans "
    "are ordered from a local roaster each month. Owner: Ana Sousa.\n",
    "bike-rules.md": "# Bike parking rules\n\nBikes go in the basement racks; e-bikes charge on "
    "the left wall only.\nLost keys: ask reception.\n",
}
CHINESE = {
    "洛阳-工位.md": "# 洛阳办公室工位预订\n\n工位通过飞书预订，前一天 18 点前。\n共 14 个工位，一间电话间。"
    "联系人：李雪。\n",
    "机器人-复盘.md": "# 仓库机器人试点复盘\n\n拣货机器人在嘉兴跑了八周。\n每小时拣货量从 80 提到 120。\n"
    "下一步：9月 再加一条巷道。\n",
    "咖啡机-值日.md": "# 咖啡机值日\n\n每周五有人给咖啡机除垢。\n咖啡豆每月从本地烘焙店订。负责人：陈晨。\n",
    "自行车-停放.md": "# 自行车停放规定\n\n自行车停地下室，电动车只能在左侧墙充电。\n钥匙丢了找前台。\n",
}
# The cross-language rules of this round off (months count as no word; titles do not move).
WITHOUT = RecallConfig(cross_title_bonus=0, cross_term_bonus=0)


def _store(mem: Any, name: str, notes: dict[str, str], tmp: Path) -> Any:
    folder = tmp / name
    folder.mkdir()
    for file, text in notes.items():
        (folder / file).write_text(text, encoding="utf-8")
    ds = mem.dataset(name)
    ds.memorize(str(folder), extractor="rules")
    return ds


def _notes(resp: Any) -> list[str]:
    return [Path(r.citations[0].source).name for r in resp.results]


def test_a_month_named_in_english_finds_the_chinese_note_that_dates_it(
    local_mem: Any, tmp_path: Path
) -> None:
    ds = _store(local_mem, "bilingual-month", {**ENGLISH, **CHINESE}, tmp_path)
    q = "When does the robot pilot add its second aisle in September?"
    assert _notes(ds.search(q, top_k=3))[0] == "机器人-复盘.md"
    # without the month the English pilot review, whose aisle starts in November, comes first
    assert _notes(ds.search(q, top_k=3, config=WITHOUT))[0] == "robot-pilot.md"
    # a question its own language answers keeps that answer first
    for question, note in (
        ("地下室的电动车在哪儿充电？", "自行车-停放.md"),
        ("Who descales the coffee machine?", "coffee-rota.md"),
    ):
        assert _notes(ds.search(question, top_k=3))[0] == note


def test_a_city_named_in_latin_letters_finds_the_chinese_note_that_writes_it(
    local_mem: Any, tmp_path: Path
) -> None:
    """The name's pinyin ("Luoyang" / "洛阳") counts as a word that crossed scripts (lingo3)."""
    ds = _store(local_mem, "bilingual-name", {**ENGLISH, **CHINESE}, tmp_path)
    q = "How many desks can be booked in the Luoyang office?"
    assert _notes(ds.search(q, top_k=3))[0] == "洛阳-工位.md"
    no_names = RecallConfig(cross_name_words=0)
    assert _notes(ds.search(q, top_k=3, config=no_names))[0] == "lisbon-desks.md"


def test_a_store_of_one_script_ranks_as_without_the_cross_language_rules(
    local_mem: Any, tmp_path: Path
) -> None:
    ds = _store(local_mem, "english-only", ENGLISH, tmp_path)
    for q in (
        "When does the second aisle start in November?",
        "Who is the Tartu contact for desks in Chengdu?",
        "How many picks per hour in October?",
        "Where do e-bikes charge?",
    ):
        with_rules, without = ds.search(q, top_k=4), ds.search(q, top_k=4, config=WITHOUT)
        assert [(r.episode_id, r.score) for r in with_rules.results] == [
            (r.episode_id, r.score) for r in without.results
        ]


def test_an_owner_line_of_a_later_note_does_not_outdate_a_budget_asked_by_its_figure(
    local_mem: Any, tmp_path: Path
) -> None:
    """The write path links "总额 8万，负责人：X" with a later note's "负责人：Y" (an owner line,
    values masked, reads the same); the two notes are about two things, so the later owner
    line takes nothing's place and the budget asked by its figure stays first."""
    budget = {
        "团建-预算.md": "# 研发部团建预算\n\n总额 8万，负责人：欧阳澜。\n\n- 千岛湖两天：6万\n- 大巴：2万\n",
    }
    later = {
        "备份-演练.md": "# 数据库备份演练\n\n每季度一次，从冷备份恢复到预发环境。\n\n负责人：田野。\n",
    }
    ds = _store(local_mem, "bilingual-owner", {**ENGLISH, **budget}, tmp_path)
    folder = tmp_path / "later"
    folder.mkdir()
    for file, text in later.items():
        (folder / file).write_text(text, encoding="utf-8")
    ds.memorize(str(folder), extractor="rules")
    resp = ds.search("What does the 8万 offsite budget pay for?", top_k=3)
    assert _notes(resp)[0] == "团建-预算.md"
