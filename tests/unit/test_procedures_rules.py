"""The rules extractor's procedures: runbooks and how-to sections in documents, steps laid out in
a dialog; lists of facts and ordinary chat give none."""

from __future__ import annotations

from memflow.ingest.parse import parse_input
from memflow.ingest.procedures import dialog_procedures, is_imperative, text_procedures
from memflow.ingest.rules import RulesExtractor
from tests.support.runbooks import RUNBOOK_EN as RUNBOOK
from tests.support.runbooks import RUNBOOK_ZH, STEPS_EN, STEPS_ZH

FACTS = """# Office notes

## Facts
1. The cafe on Elm street closes at 3pm.
2. Nadia prefers the noodle place.
3. We spent 40 dollars last Friday.

- Parking is free after six.
- The printer on floor two is broken.
- Three people joined this month.
"""


def _doc(text: str, name: str = "doc.md"):  # type: ignore[no-untyped-def]
    return parse_input(text, source=name, filename=name)[0]


def test_a_runbook_gives_one_procedure_with_steps_in_order_and_context() -> None:
    [proc] = text_procedures(_doc(RUNBOOK))
    assert proc.name == "Rolling back a release"  # "Steps" names nothing: the parent heading
    assert [s.text for s in proc.steps] == STEPS_EN
    assert {c.aspect for c in proc.context} == {"when", "precondition"}
    assert all(s.sources for s in proc.steps), "every step cites its chunk"
    assert len({k for s in proc.steps for k in s.sources}) == 5


def test_a_chinese_runbook_is_read_under_its_heading() -> None:
    [proc] = text_procedures(_doc(RUNBOOK_ZH, "zh.md"))
    assert proc.name == "发布回滚流程"
    assert [s.text for s in proc.steps] == STEPS_ZH
    assert [c.aspect for c in proc.context] == ["when", "why"]


def test_lists_of_facts_are_not_procedures() -> None:
    assert text_procedures(_doc(FACTS)) == []


def test_imperative_steps_without_a_cue_need_three_items() -> None:
    two = "# Backups\n\n- Rotate the keys.\n- Check the logs.\n"
    three = two + "- Restart the agent.\n"
    assert text_procedures(_doc(two)) == []
    assert len(text_procedures(_doc(three))) == 1


def test_how_to_heading_names_the_procedure() -> None:
    text = "# Ops\n\n## How to restart the worker\n\n1. Stop the consumer.\n2. Restart the pod.\n"
    [proc] = text_procedures(_doc(text))
    assert proc.name == "How to restart the worker"


def test_is_imperative() -> None:
    assert is_imperative("Run the job") and is_imperative("Then restart it")
    assert is_imperative("运行回滚任务")
    assert not is_imperative("The cafe closes at 3pm") and not is_imperative("Nadia prefers tea")


def test_dialog_steps_after_a_how_question() -> None:
    doc = _doc(
        "Ann: how do we restart the ingest worker?\n"
        "Bo: 1. stop the queue consumer 2. restart the worker pod 3. start the consumer again\n"
        "Ann: thanks!\n",
        "chat.txt",
    )
    [(proc, first)] = dialog_procedures(doc.chunks)
    assert proc.name == "restart the ingest worker"
    assert [s.text for s in proc.steps] == [
        "stop the queue consumer",
        "restart the worker pod",
        "start the consumer again",
    ]
    assert first == 1 and proc.steps[0].sources == [doc.chunks[1].key]


def test_chat_without_steps_gives_no_procedure() -> None:
    doc = _doc(
        "Ann: I went hiking with 2 friends yesterday\n"
        "Bo: nice! I ran 5 km. 1. it was cold 2. it rained 3. I was late\n"
        "Ann: how do you stay so motivated?\n"
        "Bo: I just love it, and my dog comes along\n",
        "chat.txt",
    )
    assert dialog_procedures(doc.chunks) == []
    assert all(not ep.procedures for ep in RulesExtractor().extract(doc))


def test_the_rules_extractor_attaches_the_procedure_to_its_episode() -> None:
    episodes = RulesExtractor().extract(_doc(RUNBOOK + "\n# Unrelated\n\nThe cafe is open.\n"))
    assert sum(len(ep.procedures) for ep in episodes) == 1
    assert episodes[0].procedures[0].name == "Rolling back a release"
