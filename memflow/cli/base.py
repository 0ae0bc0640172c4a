"""What every ``memflow`` command shares: the common options, the handler registry, opening the
store and printing results (``--json`` or text)."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from typing import Any, TextIO, cast

from memflow.bounds import escape_unsafe
from memflow.memory import Memory

Handler = Callable[[argparse.Namespace], Any]
COMMANDS: dict[str, Handler] = {}


def default_dataset() -> str:
    return os.environ.get("MEMFLOW_DATASET", "default")


def common_options(
    p: argparse.ArgumentParser, *, dataset: bool = True, several: bool = False
) -> None:
    """The options every command takes; ``several``: --dataset may be repeated (a list, None
    when not given: :func:`default_dataset`)."""
    g = p.add_argument_group("common options")
    g.add_argument("--json", action="store_true", help="print machine-readable JSON")
    g.add_argument(
        "--database-url",
        default=None,
        help="PostgreSQL URL (default: MEMFLOW_DATABASE_URL, else the embedded server)",
    )
    g.add_argument(
        "--home",
        default=None,
        help="embedded server home (default: MEMFLOW_HOME or the user data dir)",
    )
    g.add_argument(
        "--embedder",
        default=None,
        help="local (default) | hash | openai[:model] | sentence-transformers:PATH",
    )
    if dataset:
        g.add_argument(
            "--dataset",
            "-d",
            action="append" if several else "store",
            default=None if several else default_dataset(),
            help="dataset name"
            + ("; repeat it to search several datasets at once" if several else "")
            + " (default: MEMFLOW_DATASET or 'default')",
        )


def command(name: str) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        COMMANDS[name] = fn
        return fn

    return deco


def open_memory(args: argparse.Namespace, **kwargs: Any) -> Memory:
    """Open the store with --embedder, else MEMFLOW_EMBEDDER, else the embedder the dataset was
    written with, else the default."""
    embedder = args.embedder
    if embedder is None and not os.environ.get("MEMFLOW_EMBEDDER") and "dataset" in args:
        name = args.dataset[0] if isinstance(args.dataset, list) else args.dataset
        embedder = Memory.recorded_embedder(args.database_url, name, home=args.home)
    return Memory.open(args.database_url, home=args.home, embedder=embedder, **kwargs)


def plural(n: int, noun: str, many: str | None = None) -> str:
    """``1 point``, ``2 points``, ``0 points``."""
    return f"{n} {noun if n == 1 else (many or noun + 's')}"


_NOUNS = (
    ("documents", "document"),
    ("chunks", "chunk"),
    ("episodes", "episode"),
    ("facets", "facet"),
    ("facet_points", "point"),
    ("entities", "entity"),
    ("procedures", "procedure"),
    ("edges", "edge"),
)


GRAPH = ("episodes", "facets", "facet_points", "entities", "procedures", "edges")
_ONLY_IF_ANY = ("procedures",)  # shown when there are some (most memories have none)


def counts_text(counts: Any, keys: tuple[str, ...] = GRAPH) -> str:
    """``2 episodes, 1 facet, 1 point, ...`` for ``keys`` of ``counts`` (a mapping or an object
    with those attributes)."""
    parts = []
    for key, noun in _NOUNS:
        if key not in keys:
            continue
        n = counts.get(key) if isinstance(counts, dict) else getattr(counts, key, None)
        if n is not None and not (key in _ONLY_IF_ANY and not n):
            parts.append(plural(int(n), noun, "entities" if noun == "entity" else None))
    return ", ".join(parts)


class _Escaping:
    """A text stream that writes unsafe characters as ``\\uXXXX`` (valid in a JSON line, readable
    in a text one), keeping newlines and carriage returns: progress lines name the input files."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(escape_unsafe(text, "\n\r", json_text=True))

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()


def escaping(stream: TextIO) -> TextIO:
    """``stream`` with every control character a file name may hold escaped (ESC, C1, bidi)."""
    return cast(TextIO, _Escaping(stream))


def emit(args: argparse.Namespace, payload: Any, text: str | None = None) -> None:
    """Print ``payload`` as JSON (--json) or ``text``; control characters a stored name or text
    may hold (ESC, the C1 range, bidirectional overrides) never reach the terminal raw."""
    if args.json:
        dumped = json.dumps(payload, ensure_ascii=False, indent=2, default=str)
        print(escape_unsafe(dumped, "\n", json_text=True))
    elif text is not None:
        print(escape_unsafe(text, "\n\t"))


__all__ = [
    "COMMANDS",
    "GRAPH",
    "Handler",
    "command",
    "common_options",
    "counts_text",
    "default_dataset",
    "emit",
    "escaping",
    "open_memory",
    "plural",
]
