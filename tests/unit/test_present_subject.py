"""Asked about now, two close statements that both name what the question names are two
answers to it, however else they are worded (RecallConfig.present_subject)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from memflow.recall.config import RecallConfig
from memflow.recall.present import outdated_points
from memflow.recall.types import GraphNode, Subgraph

OLD_DAY, NEW_DAY = datetime(2025, 5, 6, tzinfo=UTC), datetime(2025, 6, 10, tzinfo=UTC)


def _graph(
    old: str, new: str, other: str
) -> tuple[Subgraph, dict[uuid.UUID, float], list[uuid.UUID]]:
    ids = [uuid.uuid4() for _ in range(3)]
    days = [OLD_DAY, NEW_DAY, NEW_DAY]
    nodes = {
        i: GraphNode(i, "FacetPoint", search_text=t, created_at=d)
        for i, t, d in zip(ids, (old, new, other), days, strict=True)
    }
    times = {i: {"recorded_at": d} for i, d in zip(ids, days, strict=True)}
    scores = dict(zip(ids, (0.03, 0.06, 0.07), strict=True))
    return Subgraph(nodes=nodes, times=times), scores, ids


def test_two_notes_naming_the_asked_thing_answer_it_now() -> None:
    graph, scores, (old, new, other) = _graph(
        "The Quarrystone permit is with the council's planning desk for checks.",
        "Quarrystone permit: granted on Friday, copy in the shared drive.",
        "Parking at the depot is free after six on weekdays.",
    )
    query = "What is happening with the Quarrystone permit now?"
    got = outdated_points(query, graph, scores, RecallConfig())
    assert set(got) == {old} and got[old].newer == new, got
    assert outdated_points(query, graph, scores, RecallConfig(present_subject=False)) == {}
    # Not asked about now: nothing pairs them.
    assert (
        outdated_points("Who handles the Quarrystone permit?", graph, scores, RecallConfig()) == {}
    )
    assert other not in got
