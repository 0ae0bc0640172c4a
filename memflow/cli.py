"""The ``memflow`` command line. Every command takes --json, --database-url, --home and --dataset."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from memflow.errors import MemflowError

Handler = Callable[[argparse.Namespace], Any]
_COMMANDS: dict[str, Handler] = {}


def _common(p: argparse.ArgumentParser, *, dataset: bool = True) -> None:
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
            default=os.environ.get("MEMFLOW_DATASET", "default"),
            help="dataset name (default: MEMFLOW_DATASET or 'default')",
        )


def command(name: str) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        _COMMANDS[name] = fn
        return fn

    return deco


def open_memory(args: argparse.Namespace, **kwargs: Any) -> Any:
    from memflow.memory import Memory

    return Memory.open(args.database_url, home=args.home, embedder=args.embedder, **kwargs)


def emit(args: argparse.Namespace, payload: Any, text: str | None = None) -> None:
    if args.json:
        print(json.dumps(payload, ensure_ascii=False, indent=2, default=str))
    elif text is not None:
        print(text)


def build_parser() -> argparse.ArgumentParser:
    from memflow.cli_commands import register

    parser = argparse.ArgumentParser(
        prog="memflow",
        description="Episodic memory for AI agents in PostgreSQL + pgvector.",
        epilog="Run `memflow demo` to see it work; `memflow COMMAND --help` for each command.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    register(sub, _common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = _COMMANDS[args.handler]
    try:
        result = handler(args)
        return int(result) if isinstance(result, int) else 0
    except MemflowError as exc:
        if getattr(args, "json", False):
            print(
                json.dumps({"error": type(exc).__name__, "message": str(exc)}, ensure_ascii=False)
            )
        print(f"memflow: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("memflow: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if os.environ.get("MEMFLOW_DEBUG"):
            raise
        print(
            f"memflow: internal error: {type(exc).__name__}: {exc} (set MEMFLOW_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 70


if __name__ == "__main__":  # pragma: no cover
    # Run through the imported module so the command registry is the one subcommands fill.
    from memflow.cli import main as _main

    sys.exit(_main())
