"""The ``memflow`` command line. Every command takes --json, --database-url, --home and --dataset."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from memflow.bounds import escape_unsafe
from memflow.errors import MemflowError


def build_parser() -> argparse.ArgumentParser:
    # Here, not at the top: `memflow --version` (main's fast path) loads none of the commands.
    from memflow.cli import commands, demo, dump, history, memorize, search, server
    from memflow.cli.base import common_options

    parser = argparse.ArgumentParser(
        prog="memflow",
        description="Episodic memory for AI agents in PostgreSQL + pgvector.",
        epilog="Run `memflow demo` to see it work; `memflow COMMAND --help` for each command.",
    )
    parser.add_argument("--version", action="version", version=f"memflow {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    # The order of the commands in --help and docs/cli.md.
    for module in (commands, memorize, search, history, dump, demo, server):
        module.register(sub, common_options)
    _describe(parser)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memflow")
    except PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
        return "unknown"


def _describe(parser: argparse.ArgumentParser) -> None:
    """Give every command's --help a description: its one-line help where it has none."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, child in action.choices.items():
                if not child.description and helps.get(name):
                    child.description = str(helps[name])[:1].upper() + str(helps[name])[1:] + "."
                _describe(child)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--version"]:
        # Before the parser: building it loads every command. Exits as argparse's action does.
        print(f"memflow {_version()}")
        sys.exit(0)
    from memflow.cli.base import COMMANDS

    parser = build_parser()
    if not argv:
        parser.print_help()
        return 0
    args, extra = parser.parse_known_args(argv)
    if extra and args.handler != "db_psql":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.passthrough = extra  # `memflow db psql -c "select 1"`: psql's own arguments
    handler = COMMANDS[args.handler]
    try:
        result = handler(args)
        return int(result) if isinstance(result, int) else 0
    except MemflowError as exc:
        if getattr(args, "json", False):
            error = {"error": type(exc).__name__, "message": str(exc)}
            print(escape_unsafe(json.dumps(error, ensure_ascii=False), json_text=True))
        print(f"memflow: error: {escape_unsafe(str(exc), chr(10))}", file=sys.stderr)
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
            f"memflow: internal error: {type(exc).__name__}: {escape_unsafe(str(exc))} "
            "(set MEMFLOW_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 70


__all__ = ["build_parser", "main"]
