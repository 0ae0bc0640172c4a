"""The scope checks and the where compiler (memflow.db.filters): pure, no database."""

from __future__ import annotations

from typing import Any

import pytest

from memflow.db.filters import check_metadata, check_scope, compile_where, search_filter
from memflow.errors import InvalidInput

INJECTION = "x'; DROP TABLE memflow.node; --"


def test_no_filter_is_none() -> None:
    assert search_filter(None, None) is None
    assert search_filter({}, {}) is None
    assert search_filter({"user": "u1"}, None) is not None


def test_keys_and_values_are_bound_never_spliced() -> None:
    where = {INJECTION: INJECTION, "and": [{"n": {"gte": 1, "lt": 5}}, {"k": {"in": [INJECTION]}}]}
    compiled = compile_where(where)
    assert INJECTION not in compiled.sql and "DROP" not in compiled.sql
    assert "'" not in compiled.sql.replace("'number'", "").replace("'string'", "").replace(
        "'timestamp'", ""
    ).replace("'UTC'", "").replace("'[T ][0-9:.]+(Z|[+-][0-9]{2}(:?[0-9]{2})?)$'", "")
    assert INJECTION in compiled.params.values()
    assert all(f":{name}" in compiled.sql for name in compiled.params)


@pytest.mark.parametrize(
    ("where", "needle"),
    [
        ({"project": {"like": "a%"}}, "'like'"),
        ({"project": {}}, "'project'"),
        ({"project": ["a", "b"]}, "'project'"),
        ({"project": {"in": []}}, "'project'"),
        ({"project": {"in": "atlas"}}, "'project'"),
        ({"n": {"gte": 1, "lt": "2026-01-01"}}, "'n'"),
        ({"when": {"gte": "next week"}}, "'when'"),
        ({"flag": {"exists": "yes"}}, "'flag'"),
        ({"or": []}, "'or'"),
        ({"and": {"a": 1}}, "'and'"),
        ({"": 1}, "''"),
        ({"n": {"gte": float("nan")}}, "'n'"),
        ({"deep": {"not": {"x": 1}}}, "'deep'"),
        ("project = 'atlas'", "where"),
    ],
)
def test_malformed_filters_name_the_key_or_operator(where: Any, needle: str) -> None:
    with pytest.raises(InvalidInput, match=needle):
        compile_where(where)


def test_nesting_is_bounded() -> None:
    where: dict[str, Any] = {"k": 1}
    for _ in range(40):
        where = {"or": [where]}
    with pytest.raises(InvalidInput, match="nested deeper"):
        compile_where(where)


@pytest.mark.parametrize(
    ("scope", "needle"),
    [({"team": "a"}, "'team'"), ({"user": " "}, "'user'"), ({"session": None}, "'session'")],
)
def test_scopes_take_three_keys_with_non_empty_strings(scope: Any, needle: str) -> None:
    with pytest.raises(InvalidInput, match=needle):
        check_scope(scope)
    assert check_scope({"user": "u1", "agent": "规划", "session": "s9"})["agent"] == "规划"


def test_metadata_must_be_a_json_object() -> None:
    assert check_metadata({"project": "atlas", "n": [1, {"a": None}]}) == {
        "project": "atlas",
        "n": [1, {"a": None}],
    }
    for bad in (["a"], {"x": object()}, {"x": float("inf")}, {1: "a"}):
        with pytest.raises(InvalidInput, match="metadata"):
            check_metadata(bad)  # type: ignore[arg-type]
