"""The graph cached per engine (memflow.recall.graphcache, revision 0009), on a real PostgreSQL:
a search answered from the cache returns what the SQL returns; every write is seen by the next
search, from the same store or another; a role reads no graph another role's store cached."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, event

from memflow.cli.app import main
from memflow.config import sqlalchemy_url
from memflow.db import engine as dbe
from memflow.embed.hash import HashEmbedder
from memflow.memory import Dataset, Memory
from memflow.recall import graphcache, sqlrecall

from ..support.roles import login_role

QUERIES = ("latency under 500 ms", "what did the team decide?", "鉴权中间件能改吗")
OPTIONS: tuple[dict[str, Any], ...] = (
    {},
    {"display": "highly_related"},
    {"display": "summary"},
    {"display": "detail", "top_k": 3},
    {"display": "highly_related", "budget_tokens": 10**6},
)


def _draft(name: str, point: str) -> dict[str, Any]:
    return {
        "name": name,
        "summary": f"{name}: {point}",
        "facets": [
            {"search_text": "decision", "anchor_text": name, "points": [{"search_text": point}]}
        ],
    }


def _dump(ds: Dataset, query: str, **options: Any) -> dict[str, Any]:
    return ds.search(query, **options).model_dump(mode="json", exclude={"timings_ms"})


def _context(ds: Dataset, query: str) -> str:
    return ds.search(query, display="highly_related", budget_tokens=5000).context


@pytest.fixture
def seeded(mem: Memory, seed_drafts: list[dict[str, Any]]) -> Dataset:
    ds = mem.dataset("cache")
    ds.add_episodes(seed_drafts, metadata={"project": "atlas"})
    return ds


class Statements:
    def __init__(self, engine: Engine) -> None:
        self.sent: list[str] = []
        event.listen(engine, "before_cursor_execute", self._count)

    def _count(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        self.sent.append(statement)


def test_cached_searches_return_what_the_sql_returns(
    mem: Memory, seeded: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    cached = [_dump(seeded, q, **o) for q in QUERIES for o in OPTIONS]
    assert graphcache.store_of(mem.engine).holds(seeded.id)
    monkeypatch.setattr(graphcache, "MAX_NODES", 0)  # too large to cache: the SQL path
    with Memory.open(mem.url, embedder=HashEmbedder(384)) as other:
        ds = other.dataset("cache", create=False)
        assert [_dump(ds, q, **o) for q in QUERIES for o in OPTIONS] == cached
        assert not graphcache.store_of(other.engine).holds(ds.id)


def test_an_unfiltered_search_sends_two_statements_once_the_graph_is_cached(
    mem: Memory, seeded: Dataset
) -> None:
    log = Statements(mem.engine)
    seeded.search("latency under 500 ms", display="highly_related")
    # bind, recall, graph_load, then the expansion's SQL (the recall had no distances to give)
    assert len(log.sent) == 4 and "graph_revision" in log.sent[2], log.sent
    log.sent.clear()
    seeded.search("what did the team decide?", display="highly_related")
    # bind + recall (with the revision and the points' distances): no projection, no expansion
    assert len(log.sent) == 2, log.sent
    assert "graph_revision" in log.sent[1] and "point_distances" in log.sent[1]
    log.sent.clear()
    filtered = seeded.search("what did the team decide?", where={"project": "atlas"})
    assert filtered.results and any("kept_ids" in s for s in log.sent)  # the SQL projection


def test_every_write_is_seen_by_the_next_search(seeded: Dataset) -> None:
    assert "zebra crossing" not in _context(seeded, "zebra crossing budget")
    written = seeded.add_episode(_draft("zebra crossing", "the zebra crossing budget is 40k"))
    assert "zebra crossing budget is 40k" in _context(seeded, "zebra crossing budget")
    memo = "Ana: the heron bridge opens on Friday.\nBo: good, the heron bridge opening is set."
    seeded.memorize([memo], extractor="rules")
    assert "heron bridge" in _context(seeded, "when does the heron bridge open?")
    seeded.forget(episode_id=written.episode_ids[0])
    assert "zebra crossing budget is 40k" not in _context(seeded, "zebra crossing budget")


def test_correct_and_reopen_are_seen_by_the_next_search(seeded: Dataset) -> None:
    written = seeded.add_episode(_draft("kiln schedule", "the kiln fires on Tuesdays"))
    before = seeded.search("when does the kiln fire?", display="highly_related", budget_tokens=5000)
    assert "fires on Tuesdays" in before.context
    point = next(
        u.node_id
        for u in before.context_units
        if u.kind == "FacetPoint" and u.episode_id == written.episode_ids[0]
    )
    assert point is not None
    seeded.correct(point, "the kiln fires on Thursdays")
    after = seeded.search("when does the kiln fire?", display="highly_related", budget_tokens=5000)
    assert "fires on Thursdays" in after.context
    assert "superseded" in after.context or "fires on Tuesdays" not in after.context
    seeded.reopen(point)
    again = _context(seeded, "when does the kiln fire?")
    assert "fires on Tuesdays" in again and "fires on Thursdays" in again


def test_a_write_through_another_store_is_seen(mem: Memory, seeded: Dataset) -> None:
    assert "osprey" not in _context(seeded, "osprey nest camera")
    with Memory.open(mem.url, embedder=HashEmbedder(384)) as other:
        other.dataset("cache", create=False).add_episode(
            _draft("osprey nest", "the osprey nest camera streams at dawn")
        )
    assert "osprey nest camera streams at dawn" in _context(seeded, "osprey nest camera")


@pytest.fixture
def reader_engine(db_url: str, mem: Memory) -> Iterator[Engine]:
    """An engine of a login granted dataset "granted" only (`memflow db grant-reader`)."""
    mem.dataset("granted").add_episode(_draft("granted", "a granted point"))
    with login_role(db_url, "mf_cache_reader") as (role, url):
        argv = ["db", "grant-reader", role, "--dataset", "granted", "--database-url", db_url]
        assert main(argv) == 0
        engine = dbe.make_engine(sqlalchemy_url(url), pool_size=1)
        try:
            yield engine
        finally:
            engine.dispose()


def _recalled(engine: Engine, ds: Dataset) -> sqlrecall.Recalled:
    with dbe.transaction(engine) as conn:
        sqlrecall.bind(conn, ds.id, 40)
        return sqlrecall.recall(conn, ds.id, HashEmbedder(384).embed_query("point"), 20)


def test_a_role_reads_no_graph_another_role_cached(
    mem: Memory, seeded: Dataset, reader_engine: Engine
) -> None:
    _context(seeded, "latency under 500 ms")
    assert graphcache.store_of(mem.engine).holds(seeded.id)
    store = graphcache.store_of(reader_engine)
    assert store is not graphcache.store_of(mem.engine) and not store.holds(seeded.id)
    # A dataset it was not granted: no hit and no revision, so nothing to cache or reuse.
    hidden = _recalled(reader_engine, seeded)
    assert hidden.hits == [] and hidden.revision is None
    with dbe.transaction(reader_engine, seeded.id) as conn:
        assert graphcache.load(conn, seeded.id, 3) is None
    # Its own dataset: the whole of it, as the library's role reads it.
    granted = mem.dataset("granted", create=False)
    seen = _recalled(reader_engine, granted)
    assert seen.hits and seen.revision == _recalled(mem.engine, granted).revision
    with dbe.transaction(reader_engine, granted.id) as conn:
        mine = graphcache.load(conn, granted.id, 3)
    with dbe.transaction(mem.engine, granted.id) as conn:
        owners = graphcache.load(conn, granted.id, 3)
    assert mine is not None and owners is not None and mine.nodes.keys() == owners.nodes.keys()


def test_a_dataset_made_again_under_its_name_is_not_served_from_the_cache(mem: Memory) -> None:
    old = mem.dataset("again")
    old.add_episode(_draft("lighthouse", "the old lighthouse keeper rings at noon"))
    assert "old lighthouse keeper" in _context(old, "lighthouse keeper")
    assert mem.drop_dataset("again")
    new = mem.dataset("again")
    assert new.id == old.id  # (ids come from names) and the same writes follow
    new.add_episode(_draft("lighthouse", "the new lighthouse keeper rings at dusk"))
    context = _context(new, "lighthouse keeper")
    assert "new lighthouse keeper" in context and "old lighthouse keeper" not in context
