"""The search's hot-path dataclasses (memflow.recall.types.Record): not frozen (cheaper to build),
but hashed, compared and pickled as the frozen ones were, so recordings of earlier searches
(benchmarks/locomo_replay.py) still load."""

from __future__ import annotations

import copy
import pickle
import uuid
from dataclasses import fields
from typing import Any

import pytest

from memflow.recall.render import EvidenceUnit
from memflow.recall.scoring import Choice, Support
from memflow.recall.types import GraphEdge, GraphNode, Hit, Provenance

U = uuid.UUID(int=7)
RECORDS: list[Any] = [
    Hit("FacetPoint_search_text", "a point", 0.25, U, edge_text_hash=b"\x01"),
    GraphEdge(U, "has_point", U, "facet -> point"),
    EvidenceUnit(U, U, "a point", 0.5, True),
    Choice(0.3, "point", point=U, edge=GraphEdge(U, "has_point", U)),
    Support(0.1, U, 0.2, U, 0.3),
]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_a_record_hashes_compares_and_pickles_by_value(record: Any) -> None:
    twin = copy.copy(record)
    assert twin == record and hash(twin) == hash(record) and twin is not record
    assert pickle.loads(pickle.dumps(record)) == record
    # The state is the list of the fields' values: what the frozen dataclasses pickled.
    state = record.__reduce_ex__(2)[2]
    assert state == [getattr(record, f.name) for f in fields(record)]
    loaded = type(record).__new__(type(record))
    loaded.__setstate__(list(state))
    assert loaded == record


def test_a_node_keeps_its_provenance_unparsed_through_pickling() -> None:
    node = GraphNode(U, "FacetPoint", "p", sources='[["k1", "doc", "src", null]]')
    assert isinstance(node.sources, Provenance)
    back = pickle.loads(pickle.dumps(node))
    assert back == node and back.sources == [["k1", "doc", "src", None]]
    assert Hit("Episode_summary", "e", 0.4).score == 0.4  # score defaults to the distance
