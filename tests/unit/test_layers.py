"""memflow's packages form layers with one direction (docs/architecture.md).

Every import of every module under memflow/ counts: module level, inside functions and under
``if TYPE_CHECKING:``. A unit (a subpackage such as ``memflow.recall`` or a top-level module such
as ``memflow.memory``) may import itself and units of lower layers only; units of one layer never
import each other. On top of that, no two modules import each other, directly or through others.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "memflow"

# Bottom first. ``memflow`` is the package's __init__ (the public API).
LAYERS: list[set[str]] = [
    {"errors", "ids", "config", "drafts"},  # pure, import nothing of memflow
    # what memflow takes from outside (times, JSON, names): InvalidInput otherwise / the
    # OpenTelemetry spans of the operations (memflow.trace)
    {"bounds", "trace"},
    {"db", "embed", "text"},  # PostgreSQL, embedding providers, parsed text and time parsing
    {"context"},  # StoreContext: engine, embedder, dataset id, fault hook
    {"store", "llm"},  # the write path and forget / the LLM client, extractor and router
    {"ingest", "recall"},  # memorize / search
    {"memory"},  # the facade: Memory, Dataset
    {"service", "aio", "asgi"},  # argument checks and JSON shapes of the doors / the async API /
    # ASGI plumbing of the HTTP doors
    # the front doors agents use (memflow serve, memflow mcp) / memflow inside agent frameworks
    # (LangChain, LangGraph, LlamaIndex; optional extras)
    {"http_api", "mcp_server", "integrations"},
    {"ui"},  # memflow ui: the web pages mounted into memflow serve's app (http_api's errors)
    {"memflow"},  # the public API
    {"cli"},  # the command line
    {"__main__"},  # python -m memflow
]
RANK = {unit: i for i, layer in enumerate(LAYERS) for unit in layer}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["memflow", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(module: str, path: Path) -> Iterator[tuple[int, str]]:
    """(line, imported memflow module) for every import statement of ``module``."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            # ``from memflow.cli import commands`` imports the module memflow.cli.commands
            names = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names
            ]
        else:
            continue
        for name in names:
            if name == "memflow" or name.startswith("memflow."):
                yield node.lineno, name


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "memflow"


def _edges() -> list[tuple[str, int, str]]:
    return [(m, line, t) for m, p in sorted(MODULES.items()) for line, t in _imports(m, p)]


def test_every_unit_has_a_layer() -> None:
    missing = sorted({_unit(m) for m in MODULES} - set(RANK))
    assert not missing, f"add these to LAYERS in tests/unit/test_layers.py: {missing}"


def test_imports_point_down_the_layers() -> None:
    bad = []
    for module, line, target in _edges():
        src, dst = _unit(module), _unit(target)
        if src != dst and RANK[dst] >= RANK[src]:
            path = MODULES[module].relative_to(PACKAGE.parent)
            bad.append(
                f"{path}:{line} imports {target}: layer {RANK[src]} ({src}) may not import "
                f"layer {RANK[dst]} ({dst})"
            )
    assert not bad, "\n".join(bad)


def test_no_module_import_cycles() -> None:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module, _, target in _edges():
        if target in MODULES and target != module:
            graph[module].add(target)
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                return [*stack[stack.index(t) :], t]
            if t not in state and (cycle := visit(t)):
                return cycle
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (cycle := visit(m)):
            pytest.fail("import cycle: " + " -> ".join(cycle))


def test_the_checker_sees_function_level_and_type_checking_imports(tmp_path: Path) -> None:
    src = tmp_path / "probe.py"
    src.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from memflow.memory import Dataset\n"
        "def f():\n    from memflow.cli import app\n    import memflow.recall.search\n",
        encoding="utf-8",
    )
    found = [t for _, t in _imports("memflow.store.probe", src)]
    assert found == ["memflow.memory", "memflow.cli.app", "memflow.recall.search"]
