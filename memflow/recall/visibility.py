"""What a filtered search may see: the documents that match its scope and ``where``, and the
nodes and edge texts they support (provenance: node_source, edge_source).

Resolved once per search, at the start of its transaction (``visible_rows`` in sql/filters.sql),
then bound to every recall statement as array constants (sql/recall.sql: ``:filtered``,
``:visible_nodes``, ``:visible_texts``, ``:visible_documents``). Under ``force_custom_plan`` the
arrays are constants, which PostgreSQL tests with a hash per row, so an HNSW iterative scan keeps
reading until ``k`` visible rows are found, or the planner reads the few visible rows by primary
key when that is cheaper. A node shared by documents of several scopes is visible to each of
them; the projection only walks up to visible parents, so an entity never brings in another
scope's episodes.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

from memflow.db.filters import SearchFilter
from memflow.db.queries import q, with_condition


@dataclass(frozen=True)
class Visible:
    """The rows a filtered search may use."""

    documents: list[uuid.UUID]
    nodes: list[uuid.UUID]
    edge_texts: list[bytes]


def params(visible: Visible | None) -> dict[str, Any]:
    """The bind parameters every recall statement takes (no filter: everything is visible)."""
    if visible is None:
        return {
            "filtered": False,
            "visible_documents": [],
            "visible_nodes": [],
            "visible_texts": [],
        }
    return {
        "filtered": True,
        "visible_documents": visible.documents,
        "visible_nodes": visible.nodes,
        "visible_texts": visible.edge_texts,
    }


def resolve(conn: Connection, dataset_id: uuid.UUID, flt: SearchFilter | None) -> Visible | None:
    """The visible rows of ``flt`` (None: no filter). The connection is bound to the dataset."""
    if flt is None:
        return None
    row = conn.execute(
        with_condition("visible_rows", flt.where.sql),
        {"dataset_id": dataset_id, "scope": json.dumps(flt.scope), **flt.where.params},
    ).one()
    return Visible(
        documents=list(row.documents or []),
        nodes=list(row.nodes or []),
        edge_texts=[bytes(h) for h in row.edge_texts or []],
    )


Tags = dict[uuid.UUID, tuple[dict[str, str], dict[str, Any]]]


def result_documents(
    conn: Connection,
    dataset_id: uuid.UUID,
    cited: Iterable[uuid.UUID],
    episodes: Sequence[uuid.UUID],
    allowed: Sequence[uuid.UUID] | None,
) -> tuple[Tags, dict[uuid.UUID, list[uuid.UUID]]]:
    """Each document's (scope, metadata) for the ``cited`` documents and the source documents
    of ``episodes`` (only ``allowed`` ones when given), and each episode's source documents,
    oldest first."""
    params = {
        "dataset_id": dataset_id,
        "ids": sorted(set(cited)),
        "episodes": list(episodes),
        "allowed": allowed,
    }
    tags: Tags = {}
    by_episode: dict[uuid.UUID, list[uuid.UUID]] = {}
    for r in conn.execute(q("result_documents"), params):
        tags[r.id] = (dict(r.scope), dict(r.metadata))
        if r.episode_id is not None:
            by_episode.setdefault(r.episode_id, []).append(r.id)
    return tags, by_episode
