"""Scopes and metadata filters: checked, then compiled to a parameterised SQL condition.

Pure (no database): ``check_scope`` / ``check_metadata`` validate what ``memorize`` stores on a
document; ``compile_where`` turns a search's ``where`` into a boolean SQL expression over the
document's ``metadata`` column (alias ``d``) in which every key and every value is a bind
parameter (``:w0``, ``:w1``, ...): nothing the caller wrote becomes SQL text.

The filter language (``where``), over a document's metadata (a JSON object):

- ``{"k": v}``: the value at ``k`` equals ``v`` (a string, number, boolean or null; JSON
  equality, so ``1`` equals ``1.0`` and ``true`` is not ``1``).
- ``{"k": {"in": [v, ...]}}``: equals one of the (non-empty list of) values.
- ``{"k": {"not": v}}``: does not equal ``v`` (a missing key is "not v").
- ``{"k": {"gte": a, "gt": a, "lte": b, "lt": b}}``: a range; bounds are all numbers (the
  stored value must be a number) or all ISO dates / date-times (the stored value must be a
  string the database reads as a timestamp; dates without an offset are UTC).
- ``{"k": {"exists": true}}`` (or ``false``): the key is present (absent).
- several operators on one key, and several keys in one object, must all hold;
  ``{"and": [f, ...]}`` and ``{"or": [f, ...]}`` combine (non-empty lists of) filters.

A missing key matches nothing but ``not`` and ``exists: false``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from memflow.errors import InvalidInput

SCOPE_KEYS = ("user", "agent", "session")
OPERATORS = ("in", "not", "gte", "gt", "lte", "lt", "exists")
_RANGES = {"gte": ">=", "gt": ">", "lte": "<=", "lt": "<"}
_COMBINATORS = ("and", "or")
MAX_DEPTH = 16  # nesting of and/or: deeper filters are rejected rather than compiled


def check_scope(scope: Mapping[str, Any] | None, *, what: str = "scope") -> dict[str, str]:
    """``scope`` as a plain dict: keys among SCOPE_KEYS, values non-empty strings."""
    if scope is None:
        return {}
    if not isinstance(scope, Mapping):
        raise InvalidInput(
            f"{what} must be an object such as {{'user': 'u1'}}, got {type(scope).__name__}"
        )
    out: dict[str, str] = {}
    for key, value in scope.items():
        if key not in SCOPE_KEYS:
            raise InvalidInput(f"unknown {what} key {key!r}: use any of {', '.join(SCOPE_KEYS)}")
        if not isinstance(value, str) or not value.strip() or "\x00" in value:
            raise InvalidInput(f"{what} {key!r} must be a non-empty string, got {value!r}")
        out[key] = value
    return out


def check_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """``metadata`` as a JSON-serialisable dict (a JSON object, string keys)."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidInput(
            f"metadata must be a JSON object such as {{'project': 'atlas'}}, "
            f"got {type(metadata).__name__}"
        )
    for key in metadata:
        if not isinstance(key, str) or not key or "\x00" in key:
            raise InvalidInput(f"metadata key {key!r} must be a non-empty string")
    try:
        text = json.dumps(dict(metadata), allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(
            f"metadata must be JSON (strings, numbers, lists, objects): {exc}"
        ) from exc
    if "\\u0000" in text:
        raise InvalidInput("metadata must not contain NUL characters")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def tags_json(scope: Mapping[str, str], metadata: Mapping[str, Any]) -> str:
    """The canonical JSON of a scope and metadata (part of a scoped document's id)."""
    return json.dumps(
        {"scope": dict(scope), "metadata": dict(metadata)}, sort_keys=True, ensure_ascii=False
    )


@dataclass
class CompiledWhere:
    """A boolean SQL expression over ``d.metadata`` and its bind parameters."""

    sql: str = "true"
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SearchFilter:
    """A search's checked scope and compiled ``where``; ``active`` when either restricts."""

    scope: dict[str, str]
    where: CompiledWhere

    @property
    def active(self) -> bool:
        return bool(self.scope) or self.where.sql != "true"


def search_filter(
    scope: Mapping[str, Any] | None, where: Mapping[str, Any] | None
) -> SearchFilter | None:
    """The checked filter of a search, None when it has neither scope nor where."""
    checked = check_scope(scope)
    compiled = compile_where(where)
    out = SearchFilter(checked, compiled)
    return out if out.active else None


class _Compiler:
    def __init__(self) -> None:
        self.params: dict[str, Any] = {}

    def bind(self, value: Any) -> str:
        name = f"w{len(self.params)}"
        self.params[name] = value
        return f":{name}"

    def node(self, where: Any, depth: int, path: str) -> str:
        if depth > MAX_DEPTH:
            raise InvalidInput(f"filter nested deeper than {MAX_DEPTH} levels at {path}")
        if not isinstance(where, Mapping) or not where:
            raise InvalidInput(
                f"filter at {path} must be a non-empty object such as {{'project': 'atlas'}}, "
                f"got {where!r}"
            )
        parts = []
        for key, cond in where.items():
            if not isinstance(key, str) or not key or "\x00" in key:
                raise InvalidInput(f"filter key {key!r} at {path} must be a non-empty string")
            if key in _COMBINATORS:
                parts.append(self.combine(key, cond, depth, path))
            else:
                parts.append(self.key(key, cond, path))
        return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"

    def combine(self, op: str, conds: Any, depth: int, path: str) -> str:
        if not isinstance(conds, list | tuple) or not conds:
            raise InvalidInput(f"{op!r} at {path} takes a non-empty list of filters, got {conds!r}")
        inner = [self.node(c, depth + 1, f"{path}.{op}[{i}]") for i, c in enumerate(conds)]
        return "(" + f" {op.upper()} ".join(inner) + ")"

    def key(self, key: str, cond: Any, path: str) -> str:
        k = self.bind(key)
        if not isinstance(cond, Mapping):
            return _coalesce(f"d.metadata -> {k} = CAST({self.bind(_scalar(key, cond))} AS jsonb)")
        if not cond:
            raise InvalidInput(
                f"filter on {key!r} has no operator: use one of {', '.join(OPERATORS)}"
            )
        parts: list[str] = []
        bounds = {op: v for op, v in cond.items() if op in _RANGES}
        for op, value in cond.items():
            if op not in OPERATORS:
                raise InvalidInput(
                    f"unknown filter operator {op!r} on {key!r}: use one of {', '.join(OPERATORS)}"
                )
            if op == "in":
                if not isinstance(value, list | tuple) or not value:
                    raise InvalidInput(f"'in' on {key!r} takes a non-empty list, got {value!r}")
                values = "[" + ", ".join(_scalar(key, v) for v in value) + "]"
                parts.append(
                    _coalesce(
                        f"(jsonb_exists(d.metadata, {k}) AND CAST({self.bind(values)} AS jsonb)"
                        f" @> jsonb_build_array(d.metadata -> {k}))"
                    )
                )
            elif op == "not":
                parts.append(
                    f"NOT {_coalesce(f'd.metadata -> {k} = CAST({self.bind(_scalar(key, value))} AS jsonb)')}"
                )
            elif op == "exists":
                if not isinstance(value, bool):
                    raise InvalidInput(f"'exists' on {key!r} takes true or false, got {value!r}")
                test = f"jsonb_exists(d.metadata, {k})"
                parts.append(test if value else f"NOT {test}")
        if bounds:
            parts.append(self.range(key, k, bounds))
        return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"

    def range(self, key: str, k: str, bounds: dict[str, Any]) -> str:
        numeric = [_is_number(v) for v in bounds.values()]
        if all(numeric):
            tests = [
                f"CAST(d.metadata ->> {k} AS numeric) {_RANGES[op]} CAST({self.bind(str(v))} AS numeric)"
                for op, v in bounds.items()
            ]
            guard = f"jsonb_typeof(d.metadata -> {k}) = 'number'"
        elif not any(numeric):
            tests = [
                f"memflow_filter_ts {_RANGES[op]} CAST({self.bind(_as_datetime(key, op, v))} AS timestamptz)"
                for op, v in bounds.items()
            ]
            guard = f"jsonb_typeof(d.metadata -> {k}) = 'string' AND pg_input_is_valid(d.metadata ->> {k}, 'timestamp')"
            ts = f"(CAST(d.metadata ->> {k} AS timestamp) AT TIME ZONE 'UTC')"
            tz = f"CAST(d.metadata ->> {k} AS timestamptz)"
            value = (
                f"CASE WHEN (d.metadata ->> {k}) ~ '[T ][0-9:.]+(Z|[+-][0-9]{{2}}(:?[0-9]{{2}})?)$' "
                f"THEN {tz} ELSE {ts} END"
            )
            tests = [t.replace("memflow_filter_ts", value) for t in tests]
        else:
            raise InvalidInput(
                f"range on {key!r} mixes numbers and dates: give all bounds as numbers or all "
                "as ISO dates"
            )
        return _coalesce(f"CASE WHEN {guard} THEN {' AND '.join(tests)} END")


def _coalesce(expr: str) -> str:
    """Two-valued logic: a test on a missing or mistyped value is false, never NULL (so NOT and
    OR combine as in Python)."""
    return f"coalesce({expr}, false)"


def _scalar(key: str, value: Any) -> str:
    """``value`` as JSON text, when it is a string, number, boolean or null."""
    if value is None or isinstance(value, bool | str):
        if isinstance(value, str) and "\x00" in value:
            raise InvalidInput(f"filter value on {key!r} must not contain NUL characters")
        return json.dumps(value, ensure_ascii=False)
    if _is_number(value):
        return json.dumps(value)
    raise InvalidInput(
        f"filter value on {key!r} must be a string, number, boolean or null, got {value!r}"
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _as_datetime(key: str, op: str, value: Any) -> datetime:
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, date):
        parsed = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise InvalidInput(
                f"{op!r} on {key!r} takes a number or an ISO date such as '2026-03-01', "
                f"got {value!r}"
            ) from None
    else:
        raise InvalidInput(f"{op!r} on {key!r} takes a number or an ISO date, got {value!r}")
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def compile_where(where: Mapping[str, Any] | None) -> CompiledWhere:
    """``where`` as a parameterised SQL condition over ``d.metadata`` (see the module doc)."""
    if where is None:
        return CompiledWhere()
    if isinstance(where, Mapping) and not where:
        return CompiledWhere()
    c = _Compiler()
    return CompiledWhere(c.node(where, 0, "where"), c.params)


__all__ = [
    "OPERATORS",
    "SCOPE_KEYS",
    "CompiledWhere",
    "SearchFilter",
    "check_metadata",
    "check_scope",
    "compile_where",
    "search_filter",
    "tags_json",
]
