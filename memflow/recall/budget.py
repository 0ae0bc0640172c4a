"""The token budget, honoured by every display mode in every output.

``highly_related`` packs units into the budget itself. For ``summary`` and ``detail`` a budget
keeps the whole episode contexts that fit (greedily, in rank order, as the context is packed):
each result whose context did not fit is still listed, with its context left empty, so the JSON
results and the CLI's text carry no more than the budget. The response notes what was left out,
and says so when nothing fits.
"""

from __future__ import annotations

from memflow.recall.options import HIGHLY_RELATED_BUDGET
from memflow.recall.render import count_tokens
from memflow.recall.types import SearchResponse


def honour_budget(resp: SearchResponse, budget_tokens: int | None) -> SearchResponse:
    """``resp`` with every result context within ``budget_tokens`` and a note on what did not
    fit (``highly_related`` defaults to HIGHLY_RELATED_BUDGET; the others have no default)."""
    if resp.display == "highly_related":
        budget = budget_tokens or HIGHLY_RELATED_BUDGET
        if resp.results and not resp.context.strip():
            note = f"no evidence fits in the budget of {budget} tokens: raise --budget-tokens"
            return resp.model_copy(update={"notes": [*resp.notes, note]})
        return resp
    if budget_tokens is None or not resp.results:
        return resp
    used, results, kept, dropped = 0, [], [], []
    for result in resp.results:
        cost = count_tokens(result.context)
        if used + cost > budget_tokens:
            dropped.append(cost)
            results.append(result.model_copy(update={"context": ""}))
            continue
        used += cost
        kept.append(result.context)
        results.append(result)
    if not dropped:
        return resp
    if not kept:
        note = (
            f"no episode context fits in the budget of {budget_tokens} tokens (the smallest needs "
            f"{min(dropped)}): raise --budget-tokens, or use --display highly_related"
        )
    else:
        note = (
            f"{len(kept)} of {len(resp.results)} episode contexts fit in the budget of "
            f"{budget_tokens} tokens; the others are listed without context"
        )
    update: dict[str, object] = {"results": results, "notes": [*resp.notes, note]}
    if resp.mode != "episodic":  # baselines join the result contexts (episodic packed its own)
        update["context"] = "\n".join(kept)
    return resp.model_copy(update=update)


__all__ = ["honour_budget"]
