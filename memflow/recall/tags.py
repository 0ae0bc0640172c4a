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


def bare_episodes(fetched: Any) -> list[uuid.UUID]:
    """The projected Episodes without chunk provenance (written from drafts): episodic mode."""
    out: set[uuid.UUID] = set()
    parts = fetched if isinstance(fetched, tuple) else (fetched,)
    for part in parts:
        if isinstance(part, Subgraph):
            for nid, n in part.nodes.items():
                key = _as_uuid(nid)
                if n.kind == "Episode" and not n.sources and key is not None:
                    out.add(key)
    return sorted(out)


def with_tags(
    response: SearchResponse,
    tags: Mapping[uuid.UUID, Any],
    by_node: Mapping[uuid.UUID, list[uuid.UUID]] | None = None,
) -> SearchResponse:
    """``response`` with each result's scope and metadata: its first cited document's, else
    (no citations) its episode's first source document (``by_node``)."""
    if not tags:
        return response
    results = []
    for r in response.results:
        docs = [c.document_id for c in r.citations] + list((by_node or {}).get(r.episode_id, []))
        tagged = next((tags[d] for d in docs if d in tags), None)
        if tagged is None:
            results.append(r)
        else:
            results.append(r.model_copy(update={"scope": tagged[0], "metadata": tagged[1]}))
    return response.model_copy(update={"results": results})
