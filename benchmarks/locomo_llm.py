"""The LLM-judged LoCoMo protocol (as in the published results): retrieve a context with the
shipped default search, let an answering LLM answer from it, let a judging LLM grade the answer
against the gold answer. Needs an OpenAI-compatible endpoint (``MEMFLOW_LLM_MODEL``, optional
``MEMFLOW_LLM_BASE_URL`` / ``MEMFLOW_LLM_API_KEY``); these machines have none, so it only runs
when one is configured: ``python -m benchmarks.locomo --llm``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from memflow.errors import ConfigurationError
from memflow.llm.client import LlmClient, LlmSettings

if TYPE_CHECKING:
    from benchmarks.locomo import Conversation
    from memflow.memory import Memory

ANSWER_SYSTEM = (
    "You answer questions about a long conversation between two people using only the memory "
    "excerpts given. Dates in brackets are when each session happened. Answer in a few words; "
    "resolve relative dates ('last week') against the session date."
)
JUDGE_SYSTEM = (
    "You grade an answer to a question against the gold answer. Be generous with wording and "
    "format (dates in any form, synonyms) but strict on facts. Reply CORRECT or WRONG."
)
BUDGET_TOKENS = 1000


class Answer(BaseModel):
    answer: str = Field(description="the short answer")


class Verdict(BaseModel):
    reasoning: str = Field(description="one sentence")
    label: str = Field(description="CORRECT or WRONG")


def gold_answers(data: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    """(sample_id, question) -> gold answer text."""
    out: dict[tuple[str, str], str] = {}
    for item in data:
        for qa in item["qa"]:
            if "answer" in qa:
                out[(str(item["sample_id"]), qa["question"])] = str(qa["answer"])
    return out


def judge_one(client: LlmClient, question: str, context: str, gold: str) -> tuple[str, bool]:
    answer, _ = client.complete_json(
        [
            {"role": "system", "content": ANSWER_SYSTEM},
            {"role": "user", "content": f"Memory:\n{context}\n\nQuestion: {question}"},
        ],
        Answer,
    )
    verdict, _ = client.complete_json(
        [
            {"role": "system", "content": JUDGE_SYSTEM},
            {
                "role": "user",
                "content": f"Question: {question}\nGold answer: {gold}\nAnswer: {answer.answer}",
            },
        ],
        Verdict,
    )
    return answer.answer, verdict.label.strip().upper().startswith("CORRECT")


def run_llm_protocol(
    mem: Memory, convs: Sequence[Conversation], max_questions: int | None = None
) -> dict[str, Any]:
    """LLM-judge accuracy of the shipped default (``highly_related`` at 1,000 tokens), overall
    and per category. Raises ConfigurationError when no endpoint is configured."""
    import json

    from benchmarks.locomo import CATEGORIES, DATA

    if not LlmSettings.configured():
        raise ConfigurationError(
            "the LLM-judged protocol needs MEMFLOW_LLM_MODEL (and MEMFLOW_LLM_BASE_URL for a "
            "non-OpenAI endpoint); none is configured"
        )
    gold = gold_answers(json.loads(DATA.read_text(encoding="utf-8")))
    hits: dict[str, list[bool]] = {"overall": []}
    with LlmClient() as client:
        for conv in convs:
            ds = mem.dataset(f"locomo-{conv.sample_id}", create=False)
            for q in conv.questions[:max_questions]:
                want = gold.get((conv.sample_id, q.text))
                if want is None:
                    continue
                ctx = ds.search(q.text, display="highly_related", budget_tokens=BUDGET_TOKENS)
                _, ok = judge_one(client, q.text, ctx.context, want)
                hits["overall"].append(ok)
                hits.setdefault(f"{q.category} {CATEGORIES[q.category]}", []).append(ok)
        model = client.settings.model
    return {
        "answer_and_judge_model": model,
        "budget_tokens": BUDGET_TOKENS,
        "accuracy": {k: round(sum(v) / len(v), 4) for k, v in hits.items() if v},
        "questions": len(hits["overall"]),
    }
