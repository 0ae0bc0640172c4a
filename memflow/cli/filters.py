"""``--scope KEY=VALUE``, ``--metadata JSON`` and ``--where JSON``: the flags of memorize,
add-episode, import and search that memflow.db.filters checks."""

from __future__ import annotations

import argparse
from typing import Any

from memflow.bounds import load_json
from memflow.db.filters import SCOPE_KEYS
from memflow.errors import InvalidInput


def add_scope_option(p: argparse.ArgumentParser, *, search: bool = False) -> None:
    doing = "search only what documents of this scope support" if search else "who it belongs to"
    p.add_argument(
        "--scope",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=f"{doing}: {', '.join(SCOPE_KEYS)} (repeat for several, e.g. --scope user=u1 "
        "--scope session=s9)",
    )


def add_metadata_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--metadata",
        default=None,
        metavar="JSON",
        help='a JSON object stored on each document, e.g. \'{"project": "atlas"}\' '
        "(search --where filters on it)",
    )


def add_where_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--where",
        default=None,
        metavar="JSON",
        help='a metadata filter: {"k": v}, {"k": {"in": [..]}}, {"k": {"not": v}}, '
        '{"k": {"gte": .., "lt": ..}} (numbers or ISO dates), {"k": {"exists": true}}, '
        '{"and": [..]}, {"or": [..]}',
    )


def scope_of(values: list[str]) -> dict[str, str] | None:
    """``--scope`` values as a dict (memflow.db.filters checks the keys and values)."""
    out: dict[str, str] = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep:
            raise InvalidInput(f"--scope {value!r}: write KEY=VALUE, e.g. --scope user=u1")
        if key.strip() in out:
            raise InvalidInput(f"--scope {key.strip()!r} given twice: give each key once")
        out[key.strip()] = rest
    return out or None


def json_object(value: str | None, flag: str) -> dict[str, Any] | None:
    """``value`` parsed as a JSON object (None when not given)."""
    if value is None:
        return None
    malformed = '{what} is not valid JSON ({msg}): quote it, e.g. {what} \'{{"project": "atlas"}}\''
    parsed = load_json(value, flag, malformed=malformed, check=False)  # db.filters checks it
    if not isinstance(parsed, dict):
        raise InvalidInput(f'{flag} must be a JSON object such as {{"project": "atlas"}}')
    return parsed
