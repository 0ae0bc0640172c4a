"""Names across scripts (issue 29): a capitalised Latin word that is the pinyin of 2-4 Chinese
characters in a hit of the other script ("Guilin" / "桂林") counts as a word that crossed
scripts; a store of one script is left as it is and never loads pypinyin. Invented names."""

from __future__ import annotations

import subprocess
import sys
import uuid

from memflow.recall.bonus import apply_bonuses
from memflow.recall.config import RecallConfig
from memflow.recall.preprocess import PreprocessedQuery, latin_names, pinyin_names
from memflow.recall.types import Hit

from ..conftest import REPO
from .test_cli_startup import CONSOLE_SCRIPT, loaded

# The name rule alone on distances: no language shift, no title share.
CFG = RecallConfig(language_shift=0, cross_title_bonus=0, cross_name_words=1)
OFF = CFG.model_copy(update={"cross_name_words": 0})
POINTS = "FacetPoint_search_text"


def hit(text: str, distance: float) -> Hit:
    return Hit(
        collection=POINTS, node_id=uuid.uuid5(uuid.NAMESPACE_URL, text), text=text,
        distance=distance,
    )  # fmt: skip


def query(text: str) -> PreprocessedQuery:
    return PreprocessedQuery(
        original=text, vector_query=text, keywords=[], hybrid_reason=None, use_hybrid=False
    )


def scores(hits: list[Hit], q: str, cfg: RecallConfig = CFG) -> list[float]:
    return [round(h.score, 6) for h in apply_bonuses(hits, query(q), cfg)]


def test_latin_names_are_capitalised_words_without_question_or_stop_words() -> None:
    assert latin_names("Who runs the Guilin rota? What about Xi'an and luoyang?") == {
        "guilin",
        "xian",
    }


def test_a_latin_name_is_the_joined_toneless_pinyin_of_two_to_four_characters() -> None:
    assert pinyin_names(frozenset({"guilin"}), "# 桂林团队值班表") == 1
    assert pinyin_names(frozenset({"luoyang", "changsha"}), "洛阳和长沙的办公室") == 2
    # a character with several readings, "ü" written "u": 绿岛 is "lüdao"
    assert pinyin_names(frozenset({"ludao"}), "绿岛机房") == 1
    # a span of five characters is not a name
    assert pinyin_names(frozenset({"guilinluoyangc"}), "桂林洛阳长沙") == 0


def test_common_syllables_do_not_make_a_name() -> None:
    # English words spelled by Chinese function words ("我们", "你呢", "吗的")
    assert pinyin_names(frozenset({"women", "nine", "made"}), "我们问你呢，吗的") == 0
    # one syllable is not enough ("Lin" / 林), nor a word that only starts as the span's pinyin
    assert pinyin_names(frozenset({"lin", "guilinx", "guili"}), "桂林的林先生") == 0
    assert latin_names("guilin in lower case") == frozenset()


def test_a_latin_name_reaches_its_chinese_spelling_and_back() -> None:
    hits = [hit("The Oslo team rotates weekly.", 0.10), hit("桂林团队每周轮换值班", 0.15),
            hit("洛阳团队每周轮换值班", 0.15)]  # fmt: skip
    assert scores(hits, "How often does the Guilin team rotate?") == [0.10, 0.09, 0.15]
    assert scores(hits, "How often does the Guilin team rotate?", OFF) == [0.10, 0.15, 0.15]
    back = [hit("洛阳团队每周轮换", 0.10), hit("The Guilin team rotates weekly.", 0.15),
            hit("The Oslo team rotates weekly.", 0.15)]  # fmt: skip
    assert scores(back, "桂林团队多久轮换一次？") == [0.10, 0.09, 0.15]
    # a name weighs cross_name_words crossed words, within cross_term_max
    heavy = CFG.model_copy(update={"cross_name_words": 1.5})
    assert scores(hits, "How often does the Guilin team rotate?", heavy) == [0.10, 0.06, 0.15]
    capped = CFG.model_copy(update={"cross_name_words": 4})
    assert scores(hits, "How often does the Guilin team rotate?", capped) == [0.10, 0.03, 0.15]


def test_a_store_of_one_script_is_left_as_it_is() -> None:
    english = [hit("The Guilin team rotates weekly.", 0.10), hit("Oslo rotates daily.", 0.12)]
    chinese = [hit("桂林团队每周轮换", 0.10), hit("洛阳团队每天轮换", 0.12)]
    for hits, q in [(english, "桂林团队多久轮换？"), (chinese, "How often does Guilin rotate?"),
                    (english, "How often does Guilin rotate?"), (chinese, "桂林多久轮换？")]:  # fmt: skip
        assert scores(hits, q) == scores(hits, q, OFF) == [0.10, 0.12]


def test_pypinyin_is_loaded_only_for_a_store_of_two_scripts() -> None:
    code = (
        "import sys, uuid; from memflow.recall.bonus import apply_bonuses\n"
        "from memflow.recall.config import RecallConfig\n"
        "from memflow.recall.preprocess import PreprocessedQuery\n"
        "from memflow.recall.types import Hit\n"
        "def h(t): return Hit(collection='FacetPoint_search_text', "
        "node_id=uuid.uuid5(uuid.NAMESPACE_URL, t), text=t, distance=0.1)\n"
        "q = 'How often does the Guilin team rotate?'\n"
        "pq = PreprocessedQuery(original=q, vector_query=q, keywords=[], hybrid_reason=None, "
        "use_hybrid=False)\n"
        "apply_bonuses([h('The Guilin team rotates.'), h('Oslo rotates.')], pq, RecallConfig())\n"
        "print('pypinyin' in sys.modules)\n"
        "apply_bonuses([h('The Oslo team rotates.'), h('桂林团队每周轮换')], pq, RecallConfig())\n"
        "print('pypinyin' in sys.modules)\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split() == ["False", "True"]


def test_the_cli_starts_without_pypinyin() -> None:
    for args in (("-c", CONSOLE_SCRIPT, "--version"), ("-m", "memflow", "--version")):
        res, packages = loaded(*args)
        assert res.returncode == 0, res.stderr[-2000:]
        assert "memflow" in packages and "pypinyin" not in packages
    # the same check sees it once a name is spelled
    code = "from memflow.recall.preprocess import pinyin_names as p; p(frozenset({'ab'}), '桂林')"
    res, packages = loaded("-c", code)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "pypinyin" in packages
