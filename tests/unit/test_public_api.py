"""Every type a public signature names can be imported from ``memflow`` itself."""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Callable, Iterator
from dataclasses import fields
from pathlib import Path

import pytest

import memflow

# Standard-library, typing and third-party names a signature may use without memflow exporting them.
EXTERNAL = {
    "Any", "AsyncEngine", "BaseException", "Callable", "Literal", "None", "Path", "Sequence", "TracebackType",
    "UUID", "Unpack", "bool", "bytes", "datetime", "dict", "float", "int", "list", "os", "str",
    "tuple", "type", "uuid",
}  # fmt: skip

PUBLIC = [memflow.Memory, memflow.Dataset, memflow.AsyncMemory, memflow.AsyncDataset]


def _callables() -> Iterator[tuple[str, Callable[..., object]]]:
    for cls in PUBLIC:
        for name, member in vars(cls).items():
            if name.startswith("_"):
                continue
            if isinstance(member, classmethod | staticmethod):
                yield f"{cls.__name__}.{name}", member.__func__
            elif isinstance(member, property) and member.fget is not None:
                yield f"{cls.__name__}.{name}", member.fget
            elif inspect.isfunction(member):
                yield f"{cls.__name__}.{name}", member


def _names(annotation: str) -> set[str]:
    """The identifiers of an annotation string ("Sequence[Source] | None" -> Sequence, Source)."""
    tree = ast.parse(annotation, mode="eval")
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def _annotations(fn: Callable[..., object]) -> dict[str, str]:
    return {k: v for k, v in fn.__annotations__.items() if isinstance(v, str)}


def test_public_signatures_name_only_exported_types() -> None:
    missing = []
    seen = 0
    for where, fn in _callables():
        for param, annotation in _annotations(fn).items():
            seen += 1
            for name in _names(annotation) - EXTERNAL:
                if name not in memflow.__all__ or not hasattr(memflow, name):
                    missing.append(f"{where}({param}: {annotation}): memflow.{name}")
    assert seen > 30, "the check found too few annotations to be meaningful"
    assert not missing, "export from memflow/__init__.py:\n" + "\n".join(missing)


def test_options_and_results_name_only_exported_types() -> None:
    missing = []
    for cls in (memflow.MemorizeOptions, memflow.StoreContext):
        for f in fields(cls):
            for name in _names(str(f.type)) - EXTERNAL - {"Engine"}:
                if name not in memflow.__all__:
                    missing.append(f"{cls.__name__}.{f.name}: memflow.{name}")
    assert not missing, "\n".join(missing)


def test_everything_in_all_is_importable() -> None:
    for name in memflow.__all__:
        assert getattr(memflow, name) is not None, name


def test_the_checker_catches_an_unexported_type() -> None:
    def probe(x: Hidden) -> None:  # type: ignore[name-defined]  # noqa: F821
        return None

    names = _names(_annotations(probe)["x"]) - EXTERNAL
    assert names == {"Hidden"} and "Hidden" not in memflow.__all__


def _type_checking_imports() -> dict[str, str]:
    """name -> module of the imports under ``if TYPE_CHECKING:`` in memflow/__init__.py (what
    mypy and IDEs see)."""
    tree = ast.parse(Path(memflow.__file__).read_text(encoding="utf-8"))
    out = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module, ast.unparse(imp)
                out.update({alias.name: imp.module for alias in imp.names})
    return out


def test_the_lazy_map_resolves_every_public_name() -> None:
    """Each public name loads from the module the type checker is told it comes from, and is
    the very object that module defines; ``dir(memflow)`` lists them all."""
    lazy = memflow._LAZY
    assert set(lazy) == set(memflow.__all__) - {"__version__"}
    assert _type_checking_imports() == lazy
    for name, module in lazy.items():
        assert getattr(memflow, name) is getattr(importlib.import_module(module), name), name
    assert set(memflow.__all__) <= set(dir(memflow))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        memflow.Nope  # type: ignore[attr-defined]  # noqa: B018
