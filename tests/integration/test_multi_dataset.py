"""One search over several datasets (Memory.search(datasets=[...]), AsyncMemory.search): one
ranked list with each result's dataset, nothing from a dataset outside the list, and a read
transaction bound to the listed datasets only, one at a time."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import event, text

from memflow import AsyncMemory, EmbedderMismatch, InvalidInput, Memory, NotFound
from memflow.db import engine as dbe
from memflow.db.steps import advance
from memflow.embed.hash import HashEmbedder
from memflow.recall import multi
from memflow.recall.options import SearchOptions
from memflow.recall.render import count_tokens
from memflow.recall.search import plan_search

PLANTING = "When were the tomatoes planted along the south fence?"
OVEN = "Who replaced the oven thermostat in the bakery?"

GARDEN = [
    {
        "name": "Tomato planting",
        "summary": "The tomatoes were planted along the south fence on May 3 by Aiko.",
        "facets": [
            {
                "facet_type": "fact",
                "search_text": "Tomatoes planted",
                "anchor_text": "Aiko planted the tomatoes along the south fence on May 3.",
                "points": [{"search_text": "The tomatoes were planted along the south fence"}],
            }
        ],
    },
    {
        "name": "浇水安排",
        "summary": "花园每周三和周六浇水，由陈伟负责。",
        "facets": [
            {"facet_type": "plan", "search_text": "浇水时间", "anchor_text": "每周三和周六浇水。"}
        ],
    },
]
KITCHEN = [
    {
        "name": "Oven repair",
        "summary": "Bruno replaced the oven thermostat in the bakery on June 2.",
        "facets": [
            {
                "facet_type": "fact",
                "search_text": "Oven thermostat replaced",
                "anchor_text": "Bruno replaced the oven thermostat in the bakery on June 2.",
                "points": [{"search_text": "Bruno replaced the oven thermostat in the bakery"}],
            }
        ],
    }
]
# A third dataset with an even better match for both questions: it must never show.
ATTIC = [
    {
        "name": f"Attic copy {i}",
        "summary": question,
        "facets": [
            {
                "facet_type": "fact",
                "search_text": question,
                "anchor_text": question,
                "points": [{"search_text": question}],
            }
        ],
    }
    for i, question in enumerate((PLANTING, OVEN))
]


@pytest.fixture
def store(db_url: str) -> Iterator[Memory]:
    with Memory.open(db_url, embedder=HashEmbedder(384)) as m:
        m.dataset("garden").add_episodes(GARDEN)
        m.dataset("kitchen").add_episodes(KITCHEN)
        m.dataset("attic").add_episodes(ATTIC)
        yield m


def _names(resp: Any) -> list[tuple[str | None, str]]:
    return [(r.dataset, r.name) for r in resp.results]


def test_results_from_both_datasets_each_with_its_dataset_and_nothing_from_a_third(
    store: Memory,
) -> None:
    attic_best = store.dataset("attic").search(PLANTING).results[0]
    resp = store.search(PLANTING, datasets=["garden", "kitchen"], display="summary")
    got = _names(resp)
    assert got[0] == ("garden", "Tomato planting")
    assert {d for d, _ in got} == {"garden", "kitchen"}
    assert ("kitchen", "Oven repair") in got and ("garden", "浇水安排") in got
    assert all(not name.startswith("Attic copy") for _, name in got)
    assert attic_best.score < resp.results[0].score  # the third dataset did hold a better match
    assert "Attic" not in resp.context and "tomatoes were planted" in resp.context
    # One ranked list: ranks from 1, scores ascending (costs), each the dataset's own score.
    assert [r.rank for r in resp.results] == list(range(1, len(got) + 1))
    assert [r.score for r in resp.results] == sorted(r.score for r in resp.results)
    for r in resp.results:
        alone = store.dataset(r.dataset or "").search(PLANTING, display="summary")
        assert r.score == next(a.score for a in alone.results if a.episode_id == r.episode_id)
    payload = resp.model_dump(mode="json")
    assert [r["dataset"] for r in payload["results"]] == [d for d, _ in got]


def test_the_best_match_ranks_first_whichever_dataset_it_is_in(store: Memory) -> None:
    resp = store.search(OVEN, datasets=["garden", "kitchen"], display="summary", top_k=2)
    assert _names(resp)[0] == ("kitchen", "Oven repair")
    assert len(resp.results) == 2 and resp.results[1].dataset == "garden"
    first = store.search(OVEN, datasets=["kitchen", "garden"], display="summary", top_k=2)
    assert _names(first) == _names(resp)  # the order of the list breaks ties only


def test_an_episode_scores_the_same_alone_and_among_others(store: Memory) -> None:
    """Why the lists merge on raw scores: a cost is the episode's own evidence distance, not a
    rank within its dataset (bonuses, shares of a dataset's spread, are the only coupling)."""
    store.dataset("house").add_episodes(KITCHEN + GARDEN)
    alone = store.dataset("kitchen").search(OVEN).results[0]
    among = store.dataset("house").search(OVEN).results[0]
    assert (alone.name, among.name) == ("Oven repair", "Oven repair")
    assert alone.score == among.score


def test_highly_related_context_merges_both_within_the_budget(store: Memory) -> None:
    both = PLANTING + " " + OVEN
    resp = store.search(
        both, datasets=["garden", "kitchen"], display="highly_related", budget_tokens=60
    )
    assert resp.display == "highly_related"
    assert "tomatoes" in resp.context and "thermostat" in resp.context
    assert count_tokens(resp.context) <= 60
    assert {u.dataset for u in resp.context_units} == {"garden", "kitchen"}
    base = store.search(OVEN, datasets=["garden", "kitchen"], mode="vector", display="summary")
    assert _names(base)[0] == ("kitchen", "Oven repair")
    assert {r.dataset for r in base.results} == {"garden", "kitchen"}


def test_one_dataset_is_the_dataset_search_with_its_name(store: Memory) -> None:
    one = store.search(PLANTING, datasets=["garden"])
    alone = store.dataset("garden").search(PLANTING)
    assert [r.model_dump(exclude={"dataset"}) for r in one.results] == [
        r.model_dump(exclude={"dataset"}) for r in alone.results
    ]
    assert all(r.dataset is None for r in alone.results)
    assert one.context == alone.context and {r.dataset for r in one.results} == {"garden"}


def test_the_transaction_binds_only_the_listed_datasets_one_at_a_time(store: Memory) -> None:
    ids = {name: str(store.dataset(name).id) for name in ("garden", "kitchen", "attic")}
    seen: list[tuple[str, Any]] = []

    def record(_c: Any, _cur: Any, statement: str, params: Any, _ctx: Any, _many: bool) -> None:
        seen.append((statement, params))

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        before = store.reads.stats().get("primary", 0)
        store.search(PLANTING, datasets=["garden", "kitchen"], display="highly_related")
        # Through the read router: a lookup per dataset, then one read for the search itself.
        assert store.reads.stats()["primary"] == before + 3
    finally:
        event.remove(store.engine, "before_cursor_execute", record)
    bound: str | None = None
    bindings: list[str] = []
    checked = 0
    for statement, params in seen:
        values = {str(v) for v in (params or {}).values()} if isinstance(params, dict) else set()
        assert ids["attic"] not in values, statement
        if re.search(r"set_config\('memflow\.dataset_id'", statement):
            bound = str(params["dataset_id"])
            bindings.append(bound)
        elif isinstance(params, dict) and "dataset_id" in params:
            # Every statement reads the dataset the transaction is bound to at that moment.
            assert str(params["dataset_id"]) == bound, statement
            checked += 1
    assert checked >= 6  # recall, validity, projection ... of each dataset
    assert set(bindings) == {ids["garden"], ids["kitchen"]}
    assert bindings[0] == ids["garden"] and bindings[-1] == ids["kitchen"]


def test_at_every_step_row_level_security_shows_exactly_one_listed_dataset(store: Memory) -> None:
    """The read transaction run step by step: after each step a statement with no dataset filter
    of its own sees, through row-level security alone, the rows of one listed dataset."""
    ids = {name: store.dataset(name).id for name in ("garden", "kitchen")}
    targets = [multi.Target(name, ds) for name, ds in ids.items()]
    plan = plan_search(store.embedder, PLANTING, SearchOptions(display="highly_related"))
    visible_sets: list[set[Any]] = []
    with dbe.transaction(store.engine) as conn:
        assert conn.execute(text("SELECT current_user")).scalar() == "memflow_app"

        def visible() -> set[Any]:
            rows = conn.execute(text("SELECT DISTINCT dataset_id FROM memflow.node"))
            return set(rows.scalars())

        assert visible() == set()  # bound to nothing yet: nothing
        body, value = multi.fetch_body(targets, plan), None
        while True:
            done, out = advance(body, value, None)
            if done:
                break
            value = out(conn)
            visible_sets.append(visible())
    assert len(visible_sets) >= 8 and all(len(v) == 1 for v in visible_sets)
    assert set().union(*visible_sets) == set(ids.values())
    assert len(out) == 2 and all(fetched.rows.hits for _, fetched in out)  # both found


def test_datasets_of_different_embedders_are_refused_with_what_to_do(
    store: Memory, db_url: str
) -> None:
    other = HashEmbedder(384)
    other.name = "hash-384-other"
    with Memory.open(db_url, embedder=other) as m:
        m.dataset("cellar").add_episode({"name": "Wine", "summary": "The cellar holds cider."})
    with pytest.raises(EmbedderMismatch, match="separate calls") as err:
        store.search(PLANTING, datasets=["garden", "cellar"])
    assert "'garden' (hash-384)" in str(err.value) and "'cellar' (hash-384-other)" in str(err.value)
    with pytest.raises(EmbedderMismatch, match="hash-384-other"):
        store.search(PLANTING, datasets=["cellar"])


def test_unknown_empty_and_bare_string_datasets(store: Memory) -> None:
    with pytest.raises(NotFound, match="no dataset named 'nowhere'"):
        store.search(PLANTING, datasets=["garden", "nowhere"])
    with pytest.raises(InvalidInput, match="no datasets given"):
        store.search(PLANTING, datasets=[])
    with pytest.raises(InvalidInput, match=r"datasets=\['garden'\]"):
        store.search(PLANTING, datasets="garden")
    twice = store.search(OVEN, datasets=["kitchen", "kitchen"], display="summary")
    assert [r.name for r in twice.results] == ["Oven repair"]


def test_async_twin_gives_the_same_list(store: Memory, db_url: str) -> None:
    expected = store.search(OVEN, datasets=["garden", "kitchen"], display="summary")

    async def go() -> Any:
        async with AsyncMemory.open(db_url, embedder=HashEmbedder(384)) as amem:
            got = await amem.search(OVEN, datasets=["garden", "kitchen"], display="summary")
            with pytest.raises(NotFound):
                await amem.search(OVEN, datasets=["garden", "nowhere"])
            with pytest.raises(InvalidInput):
                await amem.search(OVEN, datasets=[])
            return got

    got = asyncio.run(go())
    assert _names(got) == _names(expected)
    assert [r.score for r in got.results] == [r.score for r in expected.results]
    assert got.context == expected.context


def test_scope_and_where_apply_in_every_listed_dataset(store: Memory) -> None:
    """The filter travels in the search plan, so each dataset's search honours it: another
    user's better match in either dataset never shows, and each result carries its scope."""
    store.dataset("garden").add_episodes(ATTIC[:1], scope={"user": "u2"}, metadata={"k": 2})
    store.dataset("kitchen").add_episodes(ATTIC[1:], scope={"user": "u2"}, metadata={"k": 2})
    store.dataset("kitchen").add_episodes(
        [dict(KITCHEN[0], name="Oven again", summary="Oven thermostat checked by Bruno.")],
        scope={"user": "u1"},
        metadata={"k": 1},
    )
    both = ["garden", "kitchen"]
    everyone = _names(store.search(OVEN, datasets=both, display="summary"))
    assert ("kitchen", "Attic copy 1") in everyone  # unfiltered, u2's copy is the best match
    mine = store.search(OVEN, datasets=both, display="summary", scope={"user": "u1"})
    assert _names(mine) == [("kitchen", "Oven again")]
    assert mine.results[0].scope == {"user": "u1"} and mine.results[0].metadata == {"k": 1}
    theirs = store.search(PLANTING, datasets=both, display="summary", where={"k": {"gte": 2}})
    assert sorted(_names(theirs)) == [("garden", "Attic copy 0"), ("kitchen", "Attic copy 1")]
    with pytest.raises(InvalidInput, match="nope"):
        store.search(OVEN, datasets=both, where={"k": {"nope": 1}})
