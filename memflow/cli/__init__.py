"""The ``memflow`` command line, on top of the library: it imports the facade (memflow.memory)
and the layers below it, and nothing imports it. ``memflow.cli:main`` is the console script."""

from memflow.cli.app import build_parser, main

__all__ = ["build_parser", "main"]
