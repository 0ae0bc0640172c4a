"""Generate docs/cli.md from the argparse parsers: ``python -m memflow.cli.docs > docs/cli.md``.

A test checks the committed file is current, so the CLI reference never drifts from ``--help``.
"""

from __future__ import annotations

import argparse
import os

from memflow.cli.app import build_parser


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def render() -> str:
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # stable wrapping
    try:
        return _render()
    finally:
        if saved is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved


def _render() -> str:
    root = build_parser()
    root.prog = "memflow"
    out = [
        "# memflow command line",
        "",
        "Generated from `--help` by `python -m memflow.cli.docs`.",
        "",
    ]
    out += ["```", root.format_help().rstrip(), "```", ""]

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        for name, sub in _subparsers(parser).items():
            full = f"{path} {name}"
            sub.prog = full
            out.extend([f"## `{full}`", "", "```", sub.format_help().rstrip(), "```", ""])
            walk(sub, full)

    walk(root, "memflow")
    return "\n".join(out)


if __name__ == "__main__":  # pragma: no cover
    print(render(), end="")
