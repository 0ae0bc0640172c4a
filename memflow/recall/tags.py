"""Each search result's scope and metadata: those of the first document it cites (revision
0006), read in the search's transaction and attached after ranking."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from memflow.recall.types import Citation, SearchResponse, Subgraph


def _as_uuid(value: Any) -> uuid.UUID | None:
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except ValueError:
        return None


def _cited(items: Iterable[Any]) -> Iterable[Any]:
    for item in items:
        for c in getattr(item, "citations", None) or []:
            if isinstance(c, Citation):
                yield c.document_id


def document_ids(fetched: Any) -> list[uuid.UUID]:
    """The documents a search's rows cite: provenance of the projected graph (episodic mode),
    or the citations of its units or procedures (the other modes)."""
    raw: list[Any] = []
    parts = fetched if isinstance(fetched, tuple) else (fetched,)
    for part in parts:
        if isinstance(part, Subgraph):
            raw += [row[1] for n in part.nodes.values() for row in n.sources or []]
        elif isinstance(part, list):
            raw += list(_cited(part))
    return sorted({u for u in map(_as_uuid, raw) if u is not None})


def with_tags(response: SearchResponse, tags: Mapping[uuid.UUID, Any]) -> SearchResponse:
    """``response`` with each result's scope and metadata (its first cited document's)."""
    if not tags:
        return response
    results = []
    for r in response.results:
        tagged = next((tags[c.document_id] for c in r.citations if c.document_id in tags), None)
        if tagged is None:
            results.append(r)
        else:
            results.append(r.model_copy(update={"scope": tagged[0], "metadata": tagged[1]}))
    return response.model_copy(update={"results": results})
