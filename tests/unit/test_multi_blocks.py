"""Cutting one dataset's highly_related context into episode blocks for the multi-dataset merge
(memflow.recall.multi): the units that only fill the room (``ContextUnit.fill``) are groups of
their own, also when their episode has a group of ranked units."""

from __future__ import annotations

import uuid

from memflow.embed.hash import HashEmbedder
from memflow.recall.multi import _unit_blocks, merge
from memflow.recall.options import SearchOptions
from memflow.recall.search import plan_search
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


def _response(groups: list[tuple[uuid.UUID, float, list[tuple[str, bool]]]]) -> SearchResponse:
    """An episodic highly_related response: per group its episode, score and (line, fill)."""
    units, parts = [], []
    for episode, _, lines in groups:
        parts.append("\n".join(["[h]", *(text for text, _ in lines)]))
        units += [ContextUnit(episode_id=episode, sources=[t], tokens=2, fill=f) for t, f in lines]
    results = [
        SearchResult(rank=n, episode_id=e, name="", score=s, best_path="point")
        for n, (e, s, _) in enumerate(dict.fromkeys((e, s, ()) for e, s, _ in groups), start=1)
    ]
    return SearchResponse(
        query="q", display="highly_related", results=results, context="\n\n".join(parts)
    ).model_copy(update={"context_units": units})


def test_the_merge_puts_every_fill_block_after_all_the_ranked_ones() -> None:
    a, b = uuid.uuid4(), uuid.uuid4()
    first = _response([(a, 0.2, [("a one", False)]), (a, 0.2, [("a more", True)])])
    second = _response([(b, 0.3, [("b one", False)])])
    plan = plan_search(HashEmbedder(64), "q", SearchOptions(display="highly_related"))
    merged = merge(["first", "second"], [first, second], plan)
    # "a more" scores better than "b one" but only fills the room: it comes after.
    assert merged.context == "[h]\na one\n\n[h]\nb one\n\n[h]\na more"
    assert [u.fill for u in merged.context_units] == [False, False, True]
