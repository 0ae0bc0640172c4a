"""Which time a question asks about (memflow.text.tense)."""

from __future__ import annotations

import pytest

from memflow.text.tense import asks_about_the_past, asks_about_the_present


@pytest.mark.parametrize(
    "query",
    ["Where do I live now?", "What is Ana currently reading?", "Which gym do we use these days?",
     "我现在住在哪里？", "他们目前用什么工具？", "如今团队有几个人？"],
)  # fmt: skip
def test_present(query: str) -> None:
    assert asks_about_the_present(query)
    assert not asks_about_the_past(query)


@pytest.mark.parametrize(
    "query",
    ["Where did I live before the move?", "What did we use before, and what now?",
     "我以前住在哪里？", "之前和现在分别用什么？"],
)  # fmt: skip
def test_past_wins(query: str) -> None:
    assert asks_about_the_past(query)
    assert not asks_about_the_present(query)


@pytest.mark.parametrize(
    "query",
    ["Where does Mia live?", "How long has she had her current job?", "Knowledge is power.",
     "上线日期是哪天？", "当前版本号是多少？"],
)  # fmt: skip
def test_neither(query: str) -> None:
    assert not asks_about_the_present(query)


@pytest.mark.parametrize(
    "query", ["Where do I currently keep my old sneakers?", "Which old laptop do I use now?"]
)
def test_old_describes_a_thing_when_the_question_names_the_present(query: str) -> None:
    assert asks_about_the_present(query)
    assert not asks_about_the_past(query)


def test_old_alone_still_names_the_past() -> None:
    assert asks_about_the_past("What is my old address?")
