"""Small talk never outranks an answer in the packed context (issue 29): at a budget that holds
one or two lines, the line that answers is packed, not the greeting that names the topic.
Invented conversation; the hash embedder (a greeting naming the topic in a few words sits near
the question)."""

from __future__ import annotations

import json
from typing import Any

from memflow.recall.config import RecallConfig

CONVERSATION = {
    "title": "kestrel sync",
    "sessions": [
        {
            "started_at": "2031-02-10T09:00:00+00:00",
            "messages": [
                {"speaker": "Priya", "text": "Hi Tomas, quick update on Kestrel."},
                {"speaker": "Priya", "text": "The firmware vendor needs another week, so "
                 "the launch moved to March 4 and the press note waits until then."},
                {"speaker": "Tomas", "text": "Thanks Priya, good to know."},
                {"speaker": "Tomas", "text": "I will tell the warehouse to hold the pallets."},
            ],
        }
    ],
}  # fmt: skip
GREETING = "Hi Tomas, quick update on Kestrel."
ANSWER = "the launch moved to March 4"
QUERY = "Any update on Kestrel?"


def test_the_answer_is_packed_before_the_greeting(mem: Any) -> None:
    ds = mem.dataset("small-talk")
    ds.memorize(json.dumps(CONVERSATION), extractor="rules")
    before = RecallConfig(small_talk_last=False, fill_budget=False)
    old = ds.search(QUERY, display="highly_related", budget_tokens=60, config=before).context
    # Without the rule the greeting (it names the topic, in few words) is packed, the answer not
    # (nor with the rule's help: the answer is past the relevance cut-off, fill_budget off).
    assert GREETING in old and ANSWER not in old, old
    for budget in (30, 60, 500):
        ctx = ds.search(QUERY, display="highly_related", budget_tokens=budget).context
        assert ANSWER in ctx, (budget, ctx)
        assert GREETING not in ctx or ctx.index(ANSWER) < ctx.index(GREETING), (budget, ctx)
