"""sql/*.sql and the code agree: every named statement is used, every name used exists, and the
library runs no SQL text of its own (README: every statement memflow runs is in sql/)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from memflow.db.queries import all_queries

PACKAGE = Path(__file__).resolve().parents[2] / "memflow"
# Owned by the migrations (Alembic), which keep their DDL with them; schema.py is the table
# definitions Alembic compares the database with.
NOT_CHECKED = {"db/migrate.py", "db/embedded.py", "db/schema.py"}
SQL_START = re.compile(
    r"^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|DROP|ALTER|LOCK|SET|RESET|TRUNCATE)\s"
)


def _trees() -> dict[str, ast.Module]:
    return {
        str(p.relative_to(PACKAGE)): ast.parse(p.read_text(encoding="utf-8"))
        for p in sorted(PACKAGE.rglob("*.py"))
    }


def _strings(tree: ast.Module) -> set[str]:
    return {
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def _prefixes(tree: ast.Module) -> set[str]:
    """The constant starts of f-strings: ``q(f"embed_upsert_{table}")`` uses every
    ``embed_upsert_*`` statement."""
    return {
        str(arg.values[0].value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id in {"q", "raw"}
        and n.args
        and isinstance(arg := n.args[0], ast.JoinedStr)
        and arg.values
        and isinstance(arg.values[0], ast.Constant)
    }


def test_every_named_statement_is_used_by_the_library() -> None:
    trees = _trees().values()
    used = set().union(*(_strings(t) for t in trees))
    prefixes = set().union(*(_prefixes(t) for t in trees))
    unused = sorted(
        n for n in all_queries() if n not in used and not any(n.startswith(p) for p in prefixes)
    )
    assert not unused, f"statements in sql/ nothing in memflow/ runs: {unused}"


def test_every_statement_the_code_names_exists() -> None:
    names = set(all_queries())
    missing = []
    for path, tree in _trees().items():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in {"q", "raw"}
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and node.args[0].value not in names
            ):
                missing.append(
                    f"memflow/{path}:{node.lineno} {node.func.id}({node.args[0].value!r})"
                )
    assert not missing, "no such statement in sql/: " + ", ".join(missing)


def test_no_sql_text_outside_sql_dir() -> None:
    found = []
    for path, tree in _trees().items():
        if path in NOT_CHECKED:
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and (
                    (isinstance(node.func, ast.Name) and node.func.id == "text")
                    or (isinstance(node.func, ast.Attribute) and node.func.attr == "text")
                )
                and path != "db/queries.py"
            ):
                found.append(f"memflow/{path}:{node.lineno} text(...)")
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and SQL_START.match(node.value)
            ):
                found.append(f"memflow/{path}:{node.lineno} {node.value[:40]!r}")
    assert not found, "SQL belongs in sql/*.sql:\n" + "\n".join(found)
