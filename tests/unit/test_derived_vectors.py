"""Derived edge vectors (issue 14): which edge texts take their vector from their ends, and the
normalised mean that gives it."""

from __future__ import annotations

import uuid

import numpy as np
import pytest

from memflow.drafts import EntityDraft, EpisodeDraft, FacetDraft, PointDraft
from memflow.embed.base import mean_direction
from memflow.errors import EmbeddingError
from memflow.ids import text_hash
from memflow.store.plan import Planner, plan_drafts

DS = uuid.UUID(int=7)


def test_mean_direction_is_the_normalised_mean_of_the_normalised_parts() -> None:
    a = np.array([3.0, 0.0, 0.0], dtype=np.float32)  # lengths differ: each part counts once
    b = np.array([0.0, 0.5, 0.0], dtype=np.float32)
    got = mean_direction([a, b])
    assert np.allclose(got, [2**-0.5, 2**-0.5, 0.0], atol=1e-6)
    assert got.dtype == np.float32
    assert np.allclose(mean_direction([a]), [1.0, 0.0, 0.0])
    assert np.allclose(mean_direction([a, np.zeros(3)]), [1.0, 0.0, 0.0])  # zero part ignored
    with pytest.raises(EmbeddingError, match="embed the text itself"):
        mean_direction([np.zeros(3, dtype=np.float32)])


def _episode() -> EpisodeDraft:
    lin = EntityDraft(name="Lin", entity_type="person", role="speaker (2 turns)")
    return EpisodeDraft(
        name="Orchard weekend",
        summary="【apples】Lin picks apples; 林说周六去果园。",
        facets=[
            FacetDraft(
                search_text="apples, orchard",
                anchor_text="Lin: we pick apples on Saturday\nLin: 周六去果园摘苹果。",
                points=[
                    PointDraft(search_text="Lin: we pick apples on Saturday"),
                    PointDraft(search_text="Lin: 周六去果园摘苹果。"),
                    PointDraft(search_text="Lin: a piece of a long turn", piece=True),
                    PointDraft(search_text="Lin: bring baskets", description="two of them"),
                ],
                entities=[lin],
            ),
            # The same handle again: its anchor is absorbed into the first facet.
            FacetDraft(search_text="apples, orchard", anchor_text="Lin: the cider press"),
        ],
        entities=[lin],
    )


def test_edges_restating_their_ends_take_parts_that_the_plan_embeds_anyway() -> None:
    plan = plan_drafts(DS, [_episode()], derive=True)
    embedded = {e.text for e in plan.embeds}
    parts = {(e.relationship, e.edge_text): e.vector_parts for e in plan.edges.values()}
    handle = "apples, orchard"
    first = "Lin: we pick apples on Saturday\nLin: 周六去果园摘苹果。"
    anchor = f"{first}\nLin: the cider press"  # after absorption: what Facet_anchor_text embeds
    assert parts[("has_facet", f"{handle}: {first}")] == (handle, anchor)
    assert parts[("has_point", f"{handle} -> Lin: 周六去果园摘苹果。")] == (
        handle,
        "Lin: 周六去果园摘苹果。",
    )
    assert parts[("has_point", f"{handle} -> Lin: a piece of a long turn")] == (
        "Lin: a piece of a long turn",
    )
    # A point with a description says more than its ends: its edge text is embedded.
    assert parts[("has_point", f"{handle} -> Lin: bring baskets: two of them")] == ()
    facet_entity = [p for (r, t), p in parts.items() if r == "involves_entity" and "(in:" in t]
    assert facet_entity == [("Lin", handle)]
    episode_entity = [
        p for (r, t), p in parts.items() if r == "involves_entity" and "(in:" not in t
    ]
    # "Lin | speaker (2 turns)": the entity and the handles of the facets that involve it.
    assert episode_entity == [("Lin", handle)]
    for given in parts.values():
        assert set(given) <= embedded  # deriving embeds nothing extra


def test_without_derive_only_a_piece_reuses_a_vector() -> None:
    planner = Planner(DS, derive=False)
    planner.add_episode(_episode())
    plan = planner.finish()
    assert plan_drafts(DS, [_episode()]).edges == plan.edges  # structured drafts: the default
    with_parts = {e.edge_text: e.vector_parts for e in plan.edges.values() if e.vector_parts}
    assert with_parts == {
        "apples, orchard -> Lin: a piece of a long turn": ("Lin: a piece of a long turn",)
    }


def test_a_rules_episode_summary_takes_its_facets_anchors_as_parts() -> None:
    plan = plan_drafts(DS, [_episode()], derive=True)
    (ep,) = plan.episode_ids
    anchor = "Lin: we pick apples on Saturday\nLin: 周六去果园摘苹果。\nLin: the cider press"
    assert plan.summary_parts == {ep: (anchor,)}  # the facet's anchor after absorption
    summary = "【apples】Lin picks apples; 林说周六去果园。"
    assert plan.vector_parts()[text_hash(summary)] == (anchor,)
    assert anchor in {e.text for e in plan.embeds}  # the part is embedded anyway


def test_a_summary_is_embedded_when_not_deriving_or_when_another_row_embeds_its_text() -> None:
    summary = "【apples】Lin picks apples; 林说周六去果园。"
    assert text_hash(summary) not in plan_drafts(DS, [_episode()]).vector_parts()
    bare = EpisodeDraft(name="Nothing yet", summary="A quiet day.")  # no facets, no parts
    plan = plan_drafts(DS, [_episode(), bare], derive=True)
    assert text_hash("A quiet day.") not in plan.vector_parts()
    # An entity named like the summary embeds that text for itself: nothing is derived for it.
    twin = _episode().model_copy(
        update={"entities": [EntityDraft(name=summary, entity_type="thing")]}
    )
    assert text_hash(summary) not in plan_drafts(DS, [twin], derive=True).vector_parts()
