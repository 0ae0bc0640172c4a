"""`memflow search --explain` names every step of a trace: nodes by their kind, edges by their
relationship, corroborating evidence as support (issue 29: support steps printed as ``None``)."""

from __future__ import annotations

import uuid

from memflow.cli.search import explain_lines, step_name
from memflow.recall.types import PathStep, SearchResult

EP = uuid.uuid5(uuid.NAMESPACE_URL, "episode")
PT = uuid.uuid5(uuid.NAMESPACE_URL, "point")


def result() -> SearchResult:
    steps = [
        PathStep(kind="node", node_kind="FacetPoint", id=PT, text="The kiln ships on May 9.",
                 collection="FacetPoint_search_text", distance=0.12, cost=0.12),
        PathStep(kind="edge", relationship="has_point", text="Kiln plan -> The kiln ships"),
        PathStep(kind="edge", text="an edge whose relationship the trace did not find"),
        PathStep(kind="support", node_kind="FacetPoint", text="second point: kiln crates",
                 collection="FacetPoint_search_text", distance=0.2, cost=0.008),
        PathStep(kind="support", node_kind="Facet", text="best window: Kiln plan", cost=0.1),
        PathStep(kind="support", node_kind="Episode", id=EP, text="summary: Kiln plan",
                 cost=0.02),
    ]  # fmt: skip
    return SearchResult(
        rank=1, episode_id=EP, name="Kiln plan", score=0.248, best_path="point", path=steps
    )


def test_every_step_is_named() -> None:
    lines = explain_lines(result())
    assert not any("None" in line for line in lines), lines
    assert '└─ has_point: "Kiln plan -> The kiln ships"' in lines[2]
    assert '└─ edge: "an edge whose' in lines[3]
    assert '└─ support (FacetPoint): "second point: kiln crates"  (+0.008)' in lines[4]
    assert '└─ support (Facet): "best window: Kiln plan"' in lines[5]
    assert '└─ support (Episode): "summary: Kiln plan"' in lines[6]


def test_a_step_name_is_never_empty() -> None:
    assert step_name(PathStep(kind="support")) == "support"
    assert step_name(PathStep(kind="edge", relationship="involves_entity")) == "involves_entity"
