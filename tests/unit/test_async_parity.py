"""The async API is the sync API's twin: the same public methods with the same parameters, each
awaited. A method added to one and not the other fails here, unless it is listed below with the
reason it differs (these lists are the documented exceptions, see ``memflow.aio``)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from memflow import AsyncDataset, AsyncMemory, Dataset, Memory

# name -> why only one side has it
SYNC_ONLY = {
    Memory: {
        "close": "the async store closes with `await aclose()` (or `async with`)",
    },
    Dataset: {},
}
ASYNC_ONLY = {
    AsyncMemory: {
        "aclose": "closes the async engine: the twin of Memory.close",
        "start": "opens the store (awaiting or entering it calls it)",
        "engine": "a property: Memory.engine is an attribute set when it opens",
        "embedder": "a property: Memory.embedder is an attribute set when it opens",
    },
    AsyncDataset: {
        "id": "a property known after the first awaited call: Dataset.id is an attribute",
    },
}
# (class, method) -> parameters only one side takes, and why
PARAMETERS = {
    ("open", "cpu_workers"): "the size of the async API's CPU pool",
}
# Same name, a different kind of member (property on one side, coroutine method on the other).
KIND = {
    "context": "Dataset.context is a property; AsyncDataset.context() is awaited (it looks the "
    "dataset up on first use)",
}
TWINS = [(Memory, AsyncMemory), (Dataset, AsyncDataset)]


def _public(cls: type) -> dict[str, Any]:
    return {n: m for n, m in vars(cls).items() if not n.startswith("_")}


def _function(member: Any) -> Any:
    if isinstance(member, classmethod | staticmethod):
        return member.__func__
    return member


def _parameters(member: Any) -> dict[str, tuple[Any, Any]]:
    sig = inspect.signature(_function(member))
    return {
        p.name: (p.kind, p.default)
        for p in sig.parameters.values()
        if p.name not in ("self", "cls")
    }


@pytest.mark.parametrize(("sync", "twin"), TWINS, ids=lambda c: c.__name__)
def test_the_async_api_has_every_public_method_of_the_sync_one(sync: type, twin: type) -> None:
    mine, theirs = _public(sync), _public(twin)
    missing = set(mine) - set(theirs) - set(SYNC_ONLY[sync])
    extra = set(theirs) - set(mine) - set(ASYNC_ONLY[twin])
    assert not missing, f"give {twin.__name__} the twin of {sorted(missing)} (memflow/aio.py)"
    assert not extra, f"{twin.__name__} has {sorted(extra)} that {sync.__name__} lacks"
    # Every listed exception still exists: a stale entry would hide a future gap.
    assert set(SYNC_ONLY[sync]) <= set(mine) and set(ASYNC_ONLY[twin]) <= set(theirs)
    assert len(set(mine) & set(theirs)) >= (5 if sync is Memory else 15)


@pytest.mark.parametrize(("sync", "twin"), TWINS, ids=lambda c: c.__name__)
def test_twins_take_the_same_parameters_and_are_awaited(sync: type, twin: type) -> None:
    mine, theirs = _public(sync), _public(twin)
    for name in sorted(set(mine) & set(theirs)):
        if name in KIND:
            continue
        a, b = _parameters(mine[name]), _parameters(theirs[name])
        only = {p for p in set(a) ^ set(b) if (name, p) not in PARAMETERS}
        assert not only, f"{sync.__name__}.{name} and its twin differ in {sorted(only)}"
        for p in set(a) & set(b):
            assert a[p] == b[p], f"{name}({p}): {a[p]} in {sync.__name__}, {b[p]} in the twin"
        fn = _function(theirs[name])
        # open() and dataset() return objects (awaited or used later); every other twin is awaited.
        assert inspect.iscoroutinefunction(fn) == (name not in ("open", "dataset")), name
    assert all(k in mine and k in theirs for k in KIND if sync is Dataset)
