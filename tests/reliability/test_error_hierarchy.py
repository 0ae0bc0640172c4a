"""The error hierarchy: every class is a MemflowError, documented in docs/errors.md, and its
default message names a fix."""

from __future__ import annotations

import re

import memflow
from memflow import errors

from ..conftest import REPO
from ._support import assert_actionable

DOC = REPO / "docs" / "errors.md"


def _classes() -> list[type[errors.MemflowError]]:
    return [getattr(errors, n) for n in errors.__all__]


def test_every_error_is_a_memflow_error_exported_at_top_level() -> None:
    for cls in _classes():
        assert issubclass(cls, errors.MemflowError)
        assert getattr(memflow, cls.__name__) is cls


def test_every_default_message_names_a_fix() -> None:
    for cls in _classes():
        if cls is errors.MemflowError:
            continue
        assert_actionable(cls())


def test_docs_list_every_class_with_its_parent() -> None:
    doc = DOC.read_text(encoding="utf-8")
    tree = doc.split("```")[1]
    for cls in _classes():
        assert f"| `{cls.__name__}` |" in doc, f"{cls.__name__} missing from the table"
        assert re.search(rf"[├└]── {cls.__name__}\b", tree) or cls is errors.MemflowError
    # The tree's indentation matches the real inheritance.
    parents: list[str] = []
    for line in tree.strip().splitlines():
        depth = (len(line) - len(line.lstrip("│ ├└─"))) // 4
        name = line.lstrip("│ ├└─").strip()
        parents = [*parents[:depth], name]
        if depth:
            assert getattr(errors, name).__bases__[0].__name__ == parents[depth - 1], name
