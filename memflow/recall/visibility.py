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
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
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


@dataclass
class Documents:
    """The scope and metadata of the documents a search's rows cite (``tags``) and the source
    documents of its episodes without citations, collected from the rows of the statements that
    fetched them (``document`` rows of ``project`` and ``expand_points`` in sql/recall.sql)."""

    tags: Tags = field(default_factory=dict)
    sourced: dict[uuid.UUID, list[tuple[datetime, uuid.UUID]]] = field(default_factory=dict)

    def add(
        self,
        doc: uuid.UUID,
        scope: dict[str, str],
        metadata: dict[str, Any],
        created_at: datetime,
        episode: uuid.UUID | None,
    ) -> None:
        """One ``document`` row: ``episode`` is the episode it is a source of (None: cited)."""
        self.tags[doc] = (dict(scope), dict(metadata))
        if episode is not None:
            self.sourced.setdefault(episode, []).append((created_at, doc))

    def by_episode(self) -> dict[uuid.UUID, list[uuid.UUID]]:
        """Each episode's source documents, oldest first."""
        return {e: [d for _, d in sorted(docs)] for e, docs in sorted(self.sourced.items())}


def result_documents(conn: Connection, dataset_id: uuid.UUID, cited: Iterable[uuid.UUID]) -> Tags:
    """Each ``cited`` document's (scope, metadata): for the citations of rows fetched without
    their documents (procedures, baseline units)."""
    params = {"dataset_id": dataset_id, "ids": sorted(set(cited))}
    return {
        r.id: (dict(r.scope), dict(r.metadata)) for r in conn.execute(q("result_documents"), params)
    }
