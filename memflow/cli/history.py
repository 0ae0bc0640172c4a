"""``memflow correct``, ``memflow history`` and ``memflow documents``: facts that change."""

from __future__ import annotations

import argparse
from typing import Any

from memflow.cli.base import command, emit, open_memory
from memflow.store.history import HistoryEntry


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: Any) -> None:
    p = sub.add_parser(
        "correct",
        help="write a new version of a fact (a FacetPoint) and close the old one",
        description="Write TEXT as the new version of the FacetPoint POINT_ID (from a search's "
        "--json: context_units[].node_id or best_point_id); the old version stays in its history "
        "with reason 'correction'.",
    )
    common(p)
    p.add_argument("point_id", help="the FacetPoint to correct")
    p.add_argument("text", help="what the fact says now")
    p.add_argument(
        "--actor", default=None, help="who corrects it, for the audit (default: the database role)"
    )
    p.set_defaults(handler="correct")

    p = sub.add_parser(
        "history",
        help="every version of a fact, with event time, record time and what replaced it",
    )
    common(p)
    p.add_argument("node_id", help="any version of the fact (a node id)")
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


def history_lines(entries: list[HistoryEntry]) -> list[str]:
    lines = []
    for i, e in enumerate(entries, start=1):
        state = (
            "current"
            if e.current
            else f"until {_day(e, 'invalid_at')} ({e.reason or 'replaced'}"
            + (f", by {e.actor}" if e.actor else "")
            + ")"
        )
        lines.append(f"{i}. {e.text}")
        lines.append(
            f"   id {e.node_id}  valid from {_day(e, 'valid_at')}  recorded "
            f"{_day(e, 'recorded_at')}  {state}"
        )
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


@command("history")
def _history(args: argparse.Namespace) -> None:
    with open_memory(args) as mem:
        entries = mem.dataset(args.dataset, create=False).history(args.node_id)
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
