"""``memflow correct``, ``memflow reopen``, ``memflow history`` and ``memflow documents``: facts
that change."""

from __future__ import annotations

import argparse
from typing import Any

from memflow.cli.base import command, emit, open_memory
from memflow.cli.search import iso_time
from memflow.store.history import HistoryEntry


def _point_command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    common: Any,
    name: str,
    help_text: str,
    description: str,
    *,
    point_help: str,
    actor_verb: str,
) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help=help_text, description=description)
    common(p)
    p.add_argument("point_id", help=point_help)
    p.add_argument(
        "--actor",
        default=None,
        help=f"who {actor_verb} it, for the audit (default: the database role)",
    )
    p.set_defaults(handler=name)
    return p


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: Any) -> None:
    p = _point_command(
        sub,
        common,
        "correct",
        "write a new version of a fact (a FacetPoint) and close the old one",
        "Write TEXT as the new version of the FacetPoint POINT_ID (from a search's --json: "
        "context_units[].node_id or best_point_id); the old version stays in its history with "
        "reason 'correction'. A closed fact is corrected through its current version, or "
        "reopened first (memflow reopen).",
        point_help="the FacetPoint to correct",
        actor_verb="corrects",
    )
    p.add_argument("text", help="what the fact says now")
    _point_command(
        sub,
        common,
        "reopen",
        "undo a wrong closure: a replaced fact holds again (logged in its history)",
        "POINT_ID (a closed fact: a search's --json context_units[].node_id, or memflow "
        "history) holds again; what replaced it stays current too. The reopening is logged in "
        "the fact's history with reason 'correction'.",
        point_help="the closed fact to reopen",
        actor_verb="reopens",
    )

    p = sub.add_parser(
        "history",
        help="every version of a fact, with its times, what replaced it and why",
    )
    common(p)
    p.add_argument("node_id", help="any version of the fact (a node id)")
    p.add_argument(
        "--as-of", default=None, help="the versions as they stood at this time, by source dates"
    )
    p.add_argument(
        "--known-at", default=None, help="the versions memflow knew at this time (write clock)"
    )
    p.set_defaults(handler="history")

    p = sub.add_parser(
        "documents",
        help="the documents of a dataset: id, source, version, status (current | replaced), time",
    )
    common(p)
    p.set_defaults(handler="documents")


def _day(entry: HistoryEntry, field: str) -> str:
    value = getattr(entry, field)
    return value.isoformat(timespec="minutes") if value is not None else "-"


def _why(entry: HistoryEntry) -> str:
    why = dict(entry.why or {})
    by = str(why.pop("by", entry.reason or "replaced"))
    score = why.pop("score", None)
    change = why.get("change") or why.get("why") or why.get("decision")
    parts = [by] + ([f"score {score}"] if score is not None else [])
    parts += [str(change)] if change else []
    return ", ".join(parts) + (f", by {entry.actor}" if entry.actor else "")


def history_lines(entries: list[HistoryEntry]) -> list[str]:
    lines = []
    for i, e in enumerate(entries, start=1):
        state = "current" if e.current else f"until {_day(e, 'invalid_at')} ({_why(e)})"
        lines.append(f"{i}. {e.text}")
        lines.append(
            f"   id {e.node_id}  valid from {_day(e, 'valid_at')}  recorded "
            f"{_day(e, 'recorded_at')}  written {_day(e, 'created_at')}  {state}"
        )
        for c in e.changes:
            if c.action == "reopen":
                who = f" by {c.actor}" if c.actor else ""
                lines.append(f"   reopened {c.at.isoformat(timespec='minutes')}{who}")
    return lines


@command("correct")
def _correct(args: argparse.Namespace) -> None:
    with open_memory(args) as mem:
        ds = mem.dataset(args.dataset, create=False)
        new_id = ds.correct(args.point_id, args.text, actor=args.actor)
    emit(
        args,
        {"point_id": str(new_id), "replaces": args.point_id},
        f"corrected: {new_id} replaces {args.point_id}",
    )


@command("reopen")
def _reopen(args: argparse.Namespace) -> None:
    with open_memory(args) as mem:
        entry = mem.dataset(args.dataset, create=False).reopen(args.point_id, actor=args.actor)
    emit(
        args,
        {"reopened": entry.model_dump(mode="json")},
        f"reopened: {entry.node_id} holds again ({entry.text})",
    )


@command("history")
def _history(args: argparse.Namespace) -> None:
    clocks = {
        "as_of": iso_time(args.as_of, "--as-of"),
        "known_at": iso_time(args.known_at, "--known-at"),
    }
    with open_memory(args) as mem:
        entries = mem.dataset(args.dataset, create=False).history(args.node_id, **clocks)
    emit(
        args,
        {"versions": [e.model_dump(mode="json") for e in entries]},
        "\n".join(history_lines(entries)),
    )


@command("documents")
def _documents(args: argparse.Namespace) -> None:
    with open_memory(args) as mem:
        docs = mem.dataset(args.dataset, create=False).documents()
    lines = [
        f"{d.id}  {d.source}  v{d.version}  {d.status}  {d.created_at.isoformat(timespec='seconds')}"
        for d in docs
    ]
    emit(
        args,
        {"documents": [d.model_dump(mode="json") for d in docs]},
        "\n".join(lines) or "(no documents)",
    )
