"""The ``memflow`` command line, on top of the library: it imports the facade (memflow.memory)
and the layers below it, and nothing imports it. ``memflow.cli:main`` is the console script."""

from __future__ import annotations

import gc
from collections.abc import Sequence

from memflow.cli import app
from memflow.cli.app import build_parser


def main(argv: Sequence[str] | None = None) -> int:
    """The ``memflow`` process: :func:`memflow.cli.app.main`, then an exit that does not walk
    every object the libraries loaded (the collection interpreter shutdown runs took 0.4-0.6 s
    of a search on a loaded 2-core machine; frozen objects are skipped)."""
    try:
        return app.main(argv)
    finally:
        gc.freeze()


__all__ = ["build_parser", "main"]
