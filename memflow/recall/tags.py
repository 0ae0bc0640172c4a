"""Each search result's scope and metadata: those of the first document it cites (revision
0006), read in the search's transaction and attached after ranking."""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from memflow.recall.types import SearchResponse
from memflow.recall.visibility import Tags


def with_tags(
    response: SearchResponse, tags: Tags, by_node: Mapping[uuid.UUID, list[uuid.UUID]]
) -> SearchResponse:
    """``response`` with each result's scope and metadata: its first cited document's, else
    (no citations) its episode's first source document (``by_node``)."""
    if not tags:
        return response
    results = []
    for r in response.results:
        docs = [c.document_id for c in r.citations] + list(by_node.get(r.episode_id, []))
        tagged = next((tags[d] for d in docs if d in tags), None)
        if tagged is None:
            results.append(r)
        else:
            results.append(r.model_copy(update={"scope": tagged[0], "metadata": tagged[1]}))
    return response.model_copy(update={"results": results})
