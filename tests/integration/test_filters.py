"""Metadata filters on a real database equal a brute-force Python filter over the same documents
(200 random filters, derandomised), and SQL-looking keys and values are only data."""

from __future__ import annotations

import json
import math
import random
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memflow import InvalidInput, Memory
from memflow.db import engine as dbe
from memflow.db.filters import search_filter
from memflow.db.queries import q
from memflow.embed.hash import HashEmbedder
from memflow.recall import sqlrecall, visibility
from tests.conftest import TEMPLATE, _scratch_database
from tests.integration.test_memorize import rows

INJECTION = "x'; DROP TABLE memflow.node; --"
KEYS = ("project", "lang", "n", "when", "tag", INJECTION)
SCALARS: tuple[Any, ...] = ("atlas", "borealis", "北极星", "en", "zh", 1, 2.5, 3, 10, True, False)
STORED: dict[str, tuple[Any, ...]] = {
    "project": ("atlas", "borealis", "北极星", INJECTION),
    "lang": ("en", "zh", None),
    "n": (1, 2.5, 3, 3.0, 10, True, "3", [3]),
    "when": (
        "2026-01-05",
        "2026-02-10T08:00:00",
        "2026-03-01T10:00:00+02:00",
        "2026-03-01T07:30:00Z",
        "soon",
        20260105,
    ),
    "tag": (None, "x", {"nested": "x"}, INJECTION),
    INJECTION: ("atlas", 1),
}
DATES = ("2026-01-01", "2026-02-10T08:00:00", "2026-03-01T08:00:00+00:00", "2026-03-01")
NUMBERS = (0, 1, 2.5, 3, 9.99, 10)


def _documents() -> list[dict[str, Any]]:
    """60 metadata objects: every stored value of every key appears, with gaps (missing keys)."""
    pick = random.Random(17)
    out = []
    for _ in range(60):
        meta: dict[str, Any] = {}
        for key, values in STORED.items():
            if pick.random() < 0.8:  # some keys missing
                meta[key] = pick.choice(values)
        out.append(meta)
    return out


METADATA = _documents()


@pytest.fixture(scope="module")
def store(pg_admin_url: str, template_db: str) -> Iterator[tuple[Memory, uuid.UUID, str]]:
    """One dataset whose documents carry METADATA (written with the writer's statement), built
    once for the module."""
    with _scratch_database(pg_admin_url, TEMPLATE) as url:
        mem = Memory.open(url, embedder=HashEmbedder(384))
        ds = mem.dataset("filters")
        with dbe.transaction(mem.engine, ds.id) as conn:
            for i, meta in enumerate(METADATA):
                conn.execute(
                    q("document_insert"),
                    {
                        "dataset_id": ds.id,
                        "id": uuid.UUID(int=i + 1),
                        "source": f"doc-{i}",
                        "title": f"doc {i}",
                        "content_type": "text",
                        "content_hash": str(i),
                        "reference_time": None,
                        "meta": "{}",
                        "scope": json.dumps({"user": f"u{i % 3}"}),
                        "metadata": json.dumps(meta),
                    },
                )
        try:
            yield mem, ds.id, url
        finally:
            mem.close()


def _matching(store: tuple[Memory, uuid.UUID, str], where: Any, scope: Any = None) -> set[int]:
    mem, ds, _ = store
    flt = search_filter(scope, where)
    assert flt is not None
    with dbe.transaction(mem.engine, ds) as conn:
        sqlrecall.bind(conn, ds, 40)
        seen = visibility.resolve(conn, ds, flt)
    assert seen is not None
    return {d.int - 1 for d in seen.documents}


# -- the brute force: the filter language as documented in memflow.db.filters, in Python --------
def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    return type(a) is type(b) and a == b


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _when(v: Any) -> datetime | None:
    if not isinstance(v, str):
        return None
    try:
        t = datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def _holds(meta: dict[str, Any], where: dict[str, Any]) -> bool:
    for key, cond in where.items():
        if key in ("and", "or"):
            parts = [_holds(meta, c) for c in cond]
            if not (all(parts) if key == "and" else any(parts)):
                return False
        elif not isinstance(cond, dict):
            if not (key in meta and _json_equal(meta[key], cond)):
                return False
        elif not _operators(meta, key, cond):
            return False
    return True


def _operators(meta: dict[str, Any], key: str, cond: dict[str, Any]) -> bool:
    present = key in meta
    value = meta.get(key)
    for op, arg in cond.items():
        if op == "in" and not (present and any(_json_equal(value, a) for a in arg)):
            return False
        if op == "not" and present and _json_equal(value, arg):
            return False
        if op == "exists" and present != arg:
            return False
    bounds = {op: arg for op, arg in cond.items() if op in ("gte", "gt", "lte", "lt")}
    if not bounds:
        return True
    if all(_number(b) for b in bounds.values()):
        if not _number(value):
            return False
        x: Any = value
        lims: dict[str, Any] = bounds
    else:
        x = _when(value)
        if x is None:
            return False
        lims = {op: _when(b) for op, b in bounds.items()}
    checks = {"gte": x >= lims.get("gte", x), "gt": "gt" not in lims or x > lims["gt"]}
    checks |= {"lte": x <= lims.get("lte", x), "lt": "lt" not in lims or x < lims["lt"]}
    return all(checks.values())


# -- random filters ----------------------------------------------------------------------------
_key = st.sampled_from(KEYS)
_scalar = st.sampled_from((*SCALARS, None, INJECTION))
_number_bound = st.sampled_from(NUMBERS)
_date_bound = st.sampled_from(DATES)


def _range(bound: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(
        st.sampled_from(("gte", "gt", "lte", "lt")), bound, min_size=1, max_size=2
    )


_condition = st.one_of(
    _scalar,
    st.builds(lambda v: {"in": v}, st.lists(_scalar, min_size=1, max_size=3)),
    st.builds(lambda v: {"not": v}, _scalar),
    st.builds(lambda v: {"exists": v}, st.booleans()),
    _range(_number_bound),
    _range(_date_bound),
)
_leaf = st.dictionaries(_key, _condition, min_size=1, max_size=2)
_filters = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.builds(lambda fs: {"and": fs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda fs: {"or": fs}, st.lists(inner, min_size=1, max_size=3)),
    ),
    max_leaves=5,
)


@settings(
    max_examples=200,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(where=_filters)
def test_filters_equal_a_brute_force_python_filter(
    store: tuple[Memory, uuid.UUID, str], where: dict[str, Any]
) -> None:
    expected = {i for i, meta in enumerate(METADATA) if _holds(meta, where)}
    assert _matching(store, where) == expected


def test_the_brute_force_is_not_trivial(store: tuple[Memory, uuid.UUID, str]) -> None:
    """Each operator selects some documents and leaves others (the comparison means something)."""
    for where in (
        {"project": "atlas"},
        {"n": {"in": [3, "3"]}},
        {"lang": {"not": "en"}},
        {"tag": {"exists": True}},
        {"n": {"gte": 2.5, "lt": 10}},
        {"when": {"gte": "2026-02-01", "lt": "2026-03-01T09:00:00+01:00"}},
        {"or": [{"project": "北极星"}, {"lang": None}]},
    ):
        got = _matching(store, where)
        assert 0 < len(got) < len(METADATA), where
        assert got == {i for i, meta in enumerate(METADATA) if _holds(meta, where)}, where
    users = _matching(store, {"project": "atlas"}, {"user": "u1"})
    assert users and all(i % 3 == 1 for i in users)


def test_sql_looking_keys_and_values_are_only_data(store: tuple[Memory, uuid.UUID, str]) -> None:
    mem, ds_id, url = store
    nodes_before = rows(url, "SELECT count(*) FROM memflow.document")
    hit = _matching(store, {INJECTION: "atlas"})
    assert hit == {i for i, m in enumerate(METADATA) if m.get(INJECTION) == "atlas"} and hit
    assert _matching(store, {"project": INJECTION}) == {
        i for i, m in enumerate(METADATA) if m.get("project") == INJECTION
    }
    ds = mem.dataset("filters")
    resp = ds.search(INJECTION, where={INJECTION: {"in": [INJECTION, "1; SELECT pg_sleep(5)"]}})
    assert resp.results == []
    resp = ds.search("anything", scope={"user": INJECTION})
    assert resp.results == []
    with pytest.raises(InvalidInput, match="DROP TABLE"):
        ds.search("anything", where={"project": {INJECTION: 1}})
    assert rows(url, "SELECT count(*) FROM memflow.document") == nodes_before
    assert rows(url, "SELECT to_regclass('memflow.node') IS NOT NULL") == [(True,)]
    assert ds_id == ds.id
