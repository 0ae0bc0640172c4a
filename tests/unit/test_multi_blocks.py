"""Cutting one dataset's highly_related context into episode blocks for the multi-dataset merge
(memflow.recall.multi): the units that only fill the room (``ContextUnit.fill``) are groups of
their own, also when their episode has a group of ranked units."""

from __future__ import annotations

import uuid

from memflow.recall.multi import _unit_blocks
from memflow.recall.types import ContextUnit, SearchResponse, SearchResult


def test_a_fill_group_of_an_episode_shown_before_is_a_block_of_its_own() -> None:
    a, b = uuid.uuid4(), uuid.uuid4()
    units = [
        ContextUnit(episode_id=a, sources=["a1"]),
        ContextUnit(episode_id=b, sources=["b1"]),
        ContextUnit(episode_id=a, sources=["a2"], fill=True),
    ]
    context = "[a]\nfirst of a\n\n[b]\nfirst of b\n\n[a]\nmore of a"
    results = [
        SearchResult(rank=1, episode_id=a, name="a", score=0.2, best_path="point"),
        SearchResult(rank=2, episode_id=b, name="b", score=0.3, best_path="point"),
    ]
    resp = SearchResponse(query="q", display="highly_related", results=results, context=context)
    resp = resp.model_copy(update={"context_units": units})
    blocks = _unit_blocks(0, resp)
    assert [blk.text for blk in blocks] == ["[a]\nfirst of a", "[b]\nfirst of b", "[a]\nmore of a"]
    assert [[u.sources for u in blk.units] for blk in blocks] == [[["a1"]], [["b1"]], [["a2"]]]
    # Each dataset keeps its own order in the merge: the fill block sorts after the others.
    assert [blk.key for blk in blocks] == sorted(blk.key for blk in blocks)
