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

Bounds (memflow.bounds checks the JSON itself: depth, NUL, lone surrogates, finite numbers
within ±1e308): metadata is at most 256 KiB as JSON, and a top-level string that starts like an
ISO date must be one Python reads (years 1 to 9999); a filter has at most 256 conditions and
64 KiB of JSON, an ``in`` list at most 1,000 values. A stored value outside these bounds
(written by an older memflow) never makes a filter fail: it simply does not match a range.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from memflow.bounds import check_json, check_label, check_text
from memflow.errors import InvalidInput

SCOPE_KEYS = ("user", "agent", "session")
OPERATORS = ("in", "not", "gte", "gt", "lte", "lt", "exists")
_RANGES = {"gte": ">=", "gt": ">", "lte": "<=", "lt": "<"}
_COMBINATORS = ("and", "or")
MAX_DEPTH = 16  # nesting of and/or: deeper filters are rejected rather than compiled
MAX_CONDITIONS = 256  # conditions on keys in one filter (an "in" list counts once)
MAX_IN_VALUES = 1000
MAX_METADATA_BYTES = 256 * 1024  # a document's metadata (a LangGraph store item's value)
MAX_FILTER_BYTES = 64 * 1024
MAX_SCOPE_CHARS = 500
# A string that starts like an ISO date (a year of 4 digits or more): the filter SQL reads it
# as a timestamp, so it must be a date Python reads too (years 1 to 9999).
_DATE_LIKE = re.compile(r"\s*[+-]?\d{4,}-\d{1,2}-\d{1,2}(?:$|[T ]\d)")


def check_scope(
    scope: Mapping[str, Any] | None, *, what: str = "scope", stored: bool = True
) -> dict[str, str]:
    """``scope`` as a plain dict: keys among SCOPE_KEYS, values non-empty strings. A scope to
    be ``stored`` holds names (memflow.bounds.check_label: no control characters); a search's
    may name any scope stored before that rule (no NUL, valid Unicode)."""
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
        label = f"{what} {key!r}"
        if stored:
            check_label(value, label, max_chars=MAX_SCOPE_CHARS)
        elif not isinstance(value, str) or not value.strip() or "\x00" in value:
            raise InvalidInput(f"{label} must be a non-empty string, got {value!r}")
        else:
            check_text(value, label)
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
    check_json(dict(metadata), "metadata")
    try:
        text = json.dumps(dict(metadata), allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(
            f"metadata must be JSON (strings, numbers, lists, objects): {exc}"
        ) from exc
    if len(text.encode("utf-8")) > MAX_METADATA_BYTES:
        raise InvalidInput(
            f"metadata is {len(text.encode('utf-8')):,} bytes as JSON: keep it under "
            f"{MAX_METADATA_BYTES:,} (memorize long content as text instead)"
        )
    loaded: dict[str, Any] = json.loads(text)
    for key, value in loaded.items():
        if isinstance(value, str) and _DATE_LIKE.match(value):
            _date_value(key, value)
    return loaded


def _date_value(key: str, value: str) -> None:
    """A metadata string that starts like a date must be one Python reads: the filter SQL reads
    it as a timestamp, and a date past year 9999 is out of range there once its offset applies."""
    try:
        datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        year = value.strip().lstrip("+-").split("-", 1)[0]
        if len(year) > 4:
            raise InvalidInput(
                f"metadata {key!r}: {value!r} is a date past year 9999: give dates in years 1 "
                "to 9999 (ISO 8601, e.g. 2026-03-01T09:00:00+01:00)"
            ) from None


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
    checked = check_scope(scope, stored=False)
    compiled = compile_where(where)
    out = SearchFilter(checked, compiled)
    return out if out.active else None


class _Compiler:
    def __init__(self) -> None:
        self.params: dict[str, Any] = {}
        self.conditions = 0

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
        self.conditions += 1
        if self.conditions > MAX_CONDITIONS:
            raise InvalidInput(
                f"the filter has more than {MAX_CONDITIONS} conditions: use at most "
                f"{MAX_CONDITIONS} (one 'in' list matches many values: {{'k': {{'in': [...]}}}})"
            )
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
                if len(value) > MAX_IN_VALUES:
                    raise InvalidInput(
                        f"'in' on {key!r} lists {len(value):,} values: use at most "
                        f"{MAX_IN_VALUES:,}"
                    )
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
            # A value stored with an offset is read as timestamptz, one without as UTC. Each
            # cast runs only on a value its own type reads (pg_input_is_valid): a timestamp
            # whose offset carries it past timestamptz's range (294276-12-31T23:59:59-15:00,
            # stored by an older memflow) does not match, instead of failing the search.
            v = f"(d.metadata ->> {k})"
            guard = f"jsonb_typeof(d.metadata -> {k}) = 'string' AND pg_input_is_valid({v}, 'timestamp')"
            value = (
                f"CASE WHEN {v} !~ '[T ][0-9:.]+(Z|[+-][0-9]{{2}}(:?[0-9]{{2}})?)$' "
                f"THEN CAST({v} AS timestamp) AT TIME ZONE 'UTC' "
                f"WHEN pg_input_is_valid({v}, 'timestamptz') THEN CAST({v} AS timestamptz) END"
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
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return isinstance(value, int) or math.isfinite(value)  # ints: memflow.bounds caps them


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
    # The compiler bounds and/or nesting itself (MAX_DEPTH, the clearer message); this bounds
    # the rest (lists in lists) and checks every string and number.
    check_json(where, "where", max_depth=2 * MAX_DEPTH + 8)
    try:
        size = len(json.dumps(where, default=str, ensure_ascii=False).encode("utf-8"))
    except (TypeError, ValueError):
        size = 0  # not JSON: the compiler names what is wrong
    if size > MAX_FILTER_BYTES:
        raise InvalidInput(
            f"the filter is {size:,} bytes as JSON: keep it under {MAX_FILTER_BYTES:,} (one 'in' "
            "list matches many values)"
        )
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
