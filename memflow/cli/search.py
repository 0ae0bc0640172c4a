"""``memflow search``: episodic search with an explain trace."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from typing import Any

from memflow.cli.base import command, emit, open_memory
from memflow.errors import InvalidInput
from memflow.recall.config import DISPLAY_MODES, SEARCH_MODES, RecallConfig
from memflow.recall.types import SearchResponse, SearchResult


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: Any) -> None:
    p = sub.add_parser(
        "search",
        help="search a dataset: episodes with the cheapest chain of evidence",
        description="Embed the query once, run ANN over every embedded field in one SQL round trip, "
        "project the hits into the graph and rank episodes by bundle scoring. No LLM is called. "
        "A result's score is a cost: lower is better (--json: score_meaning says what it counts).",
    )
    common(p)
    p.add_argument("query", help="the question or keywords")
    defaults = RecallConfig()  # the one source of search defaults
    p.add_argument(
        "--top-k", type=int, default=None, help=f"number of results (default {defaults.top_k})"
    )
    p.add_argument(
        "--mode",
        choices=SEARCH_MODES,
        default=None,
        help=f"episodic | vector baseline | lexical full-text (default {defaults.mode})",
    )
    p.add_argument(
        "--display",
        choices=DISPLAY_MODES,
        default=None,
        help=f"what the context holds (default {defaults.display})",
    )
    p.add_argument(
        "--budget-tokens",
        type=int,
        default=None,
        help="token budget of the context, in text and --json: highly_related packs units into "
        f"it (default {defaults.budget_tokens}); summary and detail keep the whole episode "
        "contexts that fit and list the other results without one (default: no limit); a note "
        "says when nothing fits",
    )
    p.add_argument(
        "--now",
        default=None,
        help="reference time for relative dates in the query (ISO 8601; default: now)",
    )
    p.add_argument(
        "--explain", action="store_true", help="print the winning evidence path of each result"
    )
    p.set_defaults(handler="search")


def explain_lines(result: SearchResult) -> list[str]:
    lines = [f"{result.rank}. {result.name}  score={result.score:.3f}  via {result.best_path}"]
    for step in result.path:
        if step.kind == "node":
            hit = (
                f"hit in {step.collection}, distance {step.distance:.3f}"
                if step.collection and step.distance is not None
                else "not hit directly"
            )
            lines.append(f"     {step.node_kind}: {step.text[:100]}  ({hit}; cost {step.cost:.3f})")
        else:
            lines.append(f'       └─ {step.relationship}: "{step.text[:100]}"  (+{step.cost:.3f})')
    return lines


def human(resp: SearchResponse, explain: bool, budget: int | None = None) -> str:
    if not resp.results:
        return "(no results)"
    legend = f"score = {resp.score_meaning}"
    if explain:
        out: list[str] = [legend, ""]
        for r in resp.results:
            out += explain_lines(r)
            out.append("")
        out += resp.notes
        timing = ", ".join(f"{k} {v:.1f}" for k, v in resp.timings_ms.items())
        out.append(f"timings (ms): {timing}")
        return "\n".join(out)
    if resp.display == "highly_related":
        return resp.context
    blocks = [
        f"{r.rank}. {r.name}  (score {r.score:.3f}, via {r.best_path})"
        + (f"\n{r.context}" if r.context or budget is None else "  [context over the budget]")
        for r in resp.results
    ]
    return "\n\n".join([legend, *blocks])


@command("search")
def _search(args: argparse.Namespace) -> None:
    now = None
    if args.now:
        try:
            now = datetime.fromisoformat(args.now)
        except ValueError:
            raise InvalidInput(
                f"--now {args.now!r} is not an ISO 8601 time (e.g. 2024-05-07T12:00:00+00:00)"
            ) from None
    with open_memory(args) as mem:
        ds = mem.dataset(args.dataset, create=False)
        resp = ds.search(
            args.query,
            top_k=args.top_k,
            mode=args.mode,
            display=args.display,
            budget_tokens=args.budget_tokens,
            now=now,
        )
    payload = resp.model_dump(mode="json")
    emit(args, payload, human(resp, args.explain, args.budget_tokens))
    if not args.json and not args.explain:  # --explain and --json carry the notes themselves
        for note in resp.notes:
            print(f"memflow: note: {note}", file=sys.stderr)
