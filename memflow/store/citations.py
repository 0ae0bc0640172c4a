"""Stored citations (revision 0008): what search reads of a node's provenance, kept on the node.

An Episode, Facet or FacetPoint carries ``citations`` ([chunk key, document id, document source,
chunk ts] per cited chunk, in chunk order) and ``speaker`` (its first chunk's). Every writer that
changes a node's citations refreshes them in its own transaction: the write path after linking a
document's chunks, import after writing its rows, forget before and after deleting chunks.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import Connection

from memflow.db.queries import q


def refresh(conn: Connection, dataset_id: uuid.UUID, node_ids: Iterable[uuid.UUID]) -> None:
    """Recompute the stored citations of ``node_ids``."""
    ids = sorted(set(node_ids))
    if ids:
        conn.execute(q("node_citations_refresh"), {"dataset_id": dataset_id, "ids": ids})


def refresh_dataset(conn: Connection, dataset_id: uuid.UUID) -> None:
    """Recompute the stored citations of every node of the dataset that cites a chunk."""
    rows = conn.execute(q("node_citations_of_dataset"), {"dataset_id": dataset_id})
    refresh(conn, dataset_id, [r.node_id for r in rows])


def of_documents(
    conn: Connection, dataset_id: uuid.UUID, document_ids: Iterable[uuid.UUID]
) -> list[uuid.UUID]:
    """The nodes citing a chunk of ``document_ids`` (to refresh once those chunks are gone)."""
    rows = conn.execute(
        q("node_citations_of_documents"),
        {"dataset_id": dataset_id, "document_ids": list(document_ids)},
    )
    return [r.node_id for r in rows]


def delete_chunks(conn: Connection, dataset_id: uuid.UUID, document_ids: list[uuid.UUID]) -> int:
    """Delete the chunks of ``document_ids`` (their node_chunk rows go with them) and refresh the
    stored citations of the nodes that cited them; the number of chunks deleted."""
    citing = of_documents(conn, dataset_id, document_ids)
    deleted = conn.execute(
        q("forget_delete_chunks"), {"dataset_id": dataset_id, "document_ids": document_ids}
    ).all()
    refresh(conn, dataset_id, citing)
    return len(deleted)
