"""``memflow search``: episodic search with an explain trace."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memflow.cli.base import command, default_dataset, emit, open_memory
from memflow.cli.filters import add_scope_option, add_where_option, json_object, scope_of
from memflow.recall.config import DISPLAY_MODES, SEARCH_MODES
from memflow.recall.options import HIGHLY_RELATED_BUDGET, SearchOptions
from memflow.recall.types import PathStep, SearchResponse, SearchResult
from memflow.text.tokens import TOKEN_COUNTERS


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: Any) -> None:
    p = sub.add_parser(
        "search",
        help="search a dataset: episodes with the cheapest chain of evidence",
        description="Embed the query once, run ANN over every embedded field in one SQL round trip, "
        "project the hits into the graph and rank episodes by bundle scoring. No LLM is called. "
        "A result's score is a cost: lower is better (--json: score_meaning says what it counts). "
        "Several --dataset flags search those datasets together: one ranked list, each result "
        "with its dataset (they must share one embedder).",
    )
    common(p, several=True)
    p.add_argument("query", help="the question or keywords")
    defaults = SearchOptions()  # the one source of search defaults
    p.add_argument(
        "--top-k", type=int, default=None, help=f"number of results (default {defaults.top_k})"
    )
    p.add_argument(
        "--mode",
        choices=SEARCH_MODES,
        default=None,
        help="episodic | vector baseline | lexical full-text | procedural: procedures with "
        f"their steps in order (default {defaults.mode})",
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
        f"it (default {HIGHLY_RELATED_BUDGET}); summary and detail keep the whole episode "
        "contexts that fit and list the other results without one (default: no limit); a note "
        "says when nothing fits",
    )
    p.add_argument(
        "--token-counter",
        choices=TOKEN_COUNTERS,
        default=None,
        help=f"how the budget counts tokens (default {defaults.token_counter})",
    )
    p.add_argument(
        "--timezone",
        default=None,
        help="the zone of relative dates in the query and of a --now without one (IANA name or "
        f"+HH:MM; default {defaults.timezone})",
    )
    p.add_argument(
        "--now",
        default=None,
        help="reference time for relative dates in the query (ISO 8601; default: now)",
    )
    p.add_argument(
        "--as-of",
        default=None,
        help="what was true at this time (ISO 8601 date or time), by the sources' own dates: a "
        "message's time, a note's heading, front matter, title or file name date",
    )
    p.add_argument(
        "--known-at",
        default=None,
        help="what memflow knew at this time (ISO 8601), by when each fact was written to the "
        "store; combines with --as-of",
    )
    p.add_argument(
        "--include-history",
        "--history",
        action="store_true",
        dest="include_history",
        help="show what each current fact replaced (its earlier versions, with their validity)",
    )
    add_scope_option(p, search=True)
    add_where_option(p)
    p.add_argument(
        "--explain", action="store_true", help="print the winning evidence path of each result"
    )
    p.set_defaults(handler="search")

    p = sub.add_parser(
        "procedures",
        help="list the dataset's procedures (runbooks, how-tos) with their steps in order",
        description="The procedures memorize found (numbered or bulleted steps under a heading, "
        "steps laid out in a dialog), current versions only unless --all. Search them with "
        "`memflow search QUERY --mode procedural`.",
    )
    common(p)
    p.add_argument(
        "--all", action="store_true", help="every version, superseded ones included (newest first)"
    )
    p.set_defaults(handler="procedures")


def _title(result: SearchResult) -> str:
    """``rank. name``, with ``[dataset]`` when the search covered several."""
    return f"{result.rank}. " + (f"[{result.dataset}] " if result.dataset else "") + result.name


def explain_lines(result: SearchResult) -> list[str]:
    lines = [f"{_title(result)}  score={result.score:.3f}  via {result.best_path}"]
    for step in result.path:
        if step.kind == "node":
            hit = (
                f"hit in {step.collection}, distance {step.distance:.3f}"
                if step.collection and step.distance is not None
                else "not hit directly"
            )
            shown = step.text[:100]
            if step.invalid_at is not None and "valid until" not in shown:
                shown += f" [superseded, valid until {step.invalid_at.date().isoformat()}]"
            lines.append(f"     {step.node_kind}: {shown}  ({hit}; cost {step.cost:.3f})")
        else:
            lines.append(f'       └─ {step_name(step)}: "{step.text[:100]}"  (+{step.cost:.3f})')
    return lines


def step_name(step: PathStep) -> str:
    """What an edge or corroboration step of the trace is: the edge's relationship, or
    ``support (<node kind>)`` for a corroborating piece of evidence (its text says which:
    "second point: …", "best window: …", "summary: …"); never ``None``."""
    if step.kind == "support":
        return f"support ({step.node_kind})" if step.node_kind else "support"
    return step.relationship or "edge"


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
        if not any(r.dataset for r in resp.results):
            return resp.context
        listed = [f"{_title(r)}  (score {r.score:.3f})" for r in resp.results]
        return "\n".join([resp.context, "", "results:", *listed])
    blocks = [
        f"{_title(r)}  (score {r.score:.3f}, via {r.best_path})"
        + (f"\n{r.context}" if r.context or budget is None else "  [context over the budget]")
        for r in resp.results
    ]
    return "\n\n".join([legend, *blocks])


def procedure_lines(proc: dict[str, Any]) -> list[str]:
    status = "" if proc["status"] == "current" else f", {proc['status']}"
    lines = [f"{proc['name']}  (version {proc['version']}{status})  {proc['id']}"]
    lines += [f"  {c}" for c in proc["context"] or []]
    lines += [f"  {i}. {s}" for i, s in enumerate(proc["steps"] or [], start=1)]
    return lines


@command("procedures")
def _procedures(args: argparse.Namespace) -> None:
    with open_memory(args) as mem:
        procs = mem.dataset(args.dataset, create=False).procedures(all_versions=args.all)
    text = "\n\n".join("\n".join(procedure_lines(p)) for p in procs) or "(no procedures)"
    emit(args, {"procedures": procs}, text)


@command("search")
def _search(args: argparse.Namespace) -> None:
    names = list(dict.fromkeys(args.dataset or [default_dataset()]))
    # The options are the flags of the same names (times as given: SearchOptions parses them).
    options = {k: getattr(args, k) for k in SearchOptions.model_fields if k in vars(args)}
    options["scope"], options["where"] = scope_of(args.scope), json_object(args.where, "--where")
    with open_memory(args) as mem:
        if len(names) == 1:  # one dataset: its own search, results without a dataset name
            resp = mem.dataset(names[0], create=False).search(args.query, **options)
        else:
            resp = mem.search(args.query, datasets=names, **options)
    payload = resp.model_dump(mode="json")
    emit(args, payload, human(resp, args.explain, args.budget_tokens))
    if not args.json and not args.explain:  # --explain and --json carry the notes themselves
        for note in resp.notes:
            print(f"memflow: note: {note}", file=sys.stderr)
