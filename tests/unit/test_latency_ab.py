"""benchmarks.latency_ab runs each tree's own code: a worker started in another tree imports that
tree's memflow, and refuses to run when it would import another one."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.latency_ab import run_in_tree

SHOW = "import json, sys, memflow\nprint(json.dumps([memflow.__file__, json.load(sys.stdin)]))\n"


def test_a_worker_imports_its_trees_memflow(tmp_path: Path) -> None:
    (tmp_path / "memflow").mkdir()
    (tmp_path / "memflow" / "__init__.py").write_text("", encoding="utf-8")
    got = run_in_tree(tmp_path, SHOW, {"x": 1})
    assert got == [str(tmp_path.resolve() / "memflow" / "__init__.py"), {"x": 1}]


def test_a_worker_without_its_trees_memflow_refuses(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="failed"):
        run_in_tree(tmp_path, SHOW, {})
