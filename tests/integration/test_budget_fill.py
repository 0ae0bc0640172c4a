"""A budget the best units do not fill gets further evidence (issue 29): the highly_related
units past the relevance cut-off follow the others, packed only into the room they leave, so a
large budget holds the second session's answer while what comes first is unchanged. Invented
conversation; the hash embedder."""

from __future__ import annotations

import json
from typing import Any

from memflow.recall.config import RecallConfig

CONVERSATION = {
    "title": "orchard trip",
    "sessions": [
        {
            "started_at": "2031-03-02T09:00:00+00:00",
            "messages": [
                {"speaker": "user", "text": "How long is the train ride to the cider orchard?"},
                {"speaker": "assistant", "text": "The train ride to the cider orchard takes "
                 "about forty minutes from the central station."},
                {"speaker": "user", "text": "Is the cider orchard train ride scenic?"},
                {"speaker": "assistant", "text": "Yes, the orchard train ride follows the river."},
            ],
        },
        {
            "started_at": "2031-03-20T18:00:00+00:00",
            "messages": [
                {"speaker": "user", "text": "My sister booked our tickets yesterday."},
                {"speaker": "assistant", "text": "Great, enjoy the weekend together."},
                {"speaker": "user", "text": "We leave on Saturday at eight, so pack snacks."},
                {"speaker": "assistant", "text": "Bring a jacket, mornings are cold."},
            ],
        },
    ],
}  # fmt: skip
QUERY = "How long is the train ride to the cider orchard?"


ANSWER = "takes about forty minutes"


def test_a_budget_left_empty_gets_the_units_past_the_cut_off(mem: Any) -> None:
    ds = mem.dataset("budget-fill")
    ds.memorize(json.dumps(CONVERSATION), extractor="rules")
    off = RecallConfig(fill_budget=False)
    old = ds.search(QUERY, display="highly_related", budget_tokens=2000, config=off)
    new = ds.search(QUERY, display="highly_related", budget_tokens=2000)
    # Without the fill the context stops at the question's own turn (the answer is past the
    # cut-off) and most of the 2,000 tokens stay empty.
    assert ANSWER not in old.context and sum(u.tokens for u in old.context_units) < 50
    assert ANSWER in new.context, new.context
    # What came first is unchanged; the rest follows it, marked, in groups of its own.
    assert new.context.startswith(old.context + "\n\n"), new.context
    flags = [u.fill for u in new.context_units]
    assert flags == sorted(flags) and flags.count(False) == len(old.context_units)
    assert {u.node_id for u in old.context_units} < {u.node_id for u in new.context_units}
    # A budget the first units fill gets nothing more.
    headers = {u.episode_id: u.header_tokens for u in old.context_units}
    tight = sum(u.tokens for u in old.context_units) + sum(headers.values())
    small = ds.search(QUERY, display="highly_related", budget_tokens=tight)
    assert small.context == old.context
    # The default budget (none given) is a cap, not a request: it keeps to the cut-off.
    assert ds.search(QUERY, display="highly_related").context == old.context
