"""Reads of one dataset, written once for the sync and the async API.

Each is a step (:mod:`memflow.db.steps`): a function of a ``Connection`` inside a transaction
bound to the dataset, doing database work only. :class:`memflow.memory.Dataset` runs them on the
server it reads from, :class:`memflow.aio.AsyncDataset` on its async engine. What needs the CPU
first (embedding a type label: :func:`memflow.ingest.entity_types.entity_type_params`) the
caller runs before the step.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import Connection

from memflow.db.queries import q
from memflow.errors import InvalidInput, NotFound


def as_uuid(value: uuid.UUID | str, what: str | None = None) -> uuid.UUID:
    """An id given as a UUID or its text (InvalidInput otherwise; ``what``: "document"...)."""
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except ValueError:
        if what is None:
            raise InvalidInput(
                f"{value!r} is not an id: pass the UUID printed by memflow"
            ) from None
        raise InvalidInput(f"{value!r} is not a {what} id: pass the UUID memflow printed") from None


def dataset_stats(conn: Connection, dataset_id: uuid.UUID) -> dict[str, int]:
    row = conn.execute(q("dataset_stats"), {"dataset_id": dataset_id}).one()
    return {k: int(v) for k, v in row._mapping.items()}


def episode_list(conn: Connection, dataset_id: uuid.UUID, limit: int) -> list[dict[str, Any]]:
    rows = conn.execute(q("episode_list"), {"dataset_id": dataset_id, "limit": limit}).all()
    return [dict(r._mapping) for r in rows]


def procedure_list(
    conn: Connection, dataset_id: uuid.UUID, *, all_versions: bool, limit: int
) -> list[dict[str, Any]]:
    params = {"dataset_id": dataset_id, "all_versions": all_versions, "limit": limit}
    return [dict(r._mapping) for r in conn.execute(q("procedure_list"), params).all()]


def entities_of_type(conn: Connection, params: dict[str, Any]) -> list[dict[str, Any]]:
    return [dict(r._mapping) for r in conn.execute(q("entities_of_type"), params).all()]


def chunk(
    conn: Connection, dataset_id: uuid.UUID, dataset: str, document_id: uuid.UUID, key: str
) -> dict[str, Any]:
    """The message or section ``key`` of a document (NotFound when there is none)."""
    params = {"dataset_id": dataset_id, "document_id": document_id, "key": key}
    row = conn.execute(q("chunk_get"), params).first()
    if row is None:
        raise NotFound(
            f"no chunk {key!r} of document {document_id} in dataset {dataset!r}: use the "
            "document_id and key of a search's citations"
        )
    return dict(row._mapping)


def episode_tree(
    conn: Connection, dataset_id: uuid.UUID, dataset: str, episode_id: uuid.UUID
) -> list[dict[str, Any]]:
    """The rows of an episode's tree (NotFound when the dataset has no such episode)."""
    params = {"dataset_id": dataset_id, "episode_id": episode_id}
    return _episode_rows(conn, "episode_tree", params, dataset)


def episode_graph(
    conn: Connection,
    dataset_id: uuid.UUID,
    dataset: str,
    episode_id: uuid.UUID,
    *,
    max_citations: int,
) -> list[dict[str, Any]]:
    """An episode as rows of a tree (sql/inspect.sql ``episode_graph``): each node with the edge
    that reaches it, its validity and up to ``max_citations`` citations; NotFound when the
    dataset has no such episode."""
    params = {"dataset_id": dataset_id, "episode_id": episode_id, "max_citations": max_citations}
    return _episode_rows(conn, "episode_graph", params, dataset)


def _episode_rows(
    conn: Connection, statement: str, params: dict[str, Any], dataset: str
) -> list[dict[str, Any]]:
    """The rows of ``statement`` about episode ``params["episode_id"]`` (NotFound: none)."""
    rows = conn.execute(q(statement), params).all()
    if not rows:
        raise NotFound(
            f"no episode {params['episode_id']} in dataset {dataset!r}: list them with "
            f"`memflow show --dataset {dataset}`"
        )
    return [dict(r._mapping) for r in rows]


def episode_documents(
    conn: Connection, dataset_id: uuid.UUID, episode_id: uuid.UUID
) -> list[dict[str, Any]]:
    """The documents that support an episode, oldest first."""
    params = {"dataset_id": dataset_id, "node_id": episode_id}
    return [dict(r._mapping) for r in conn.execute(q("episode_documents"), params).all()]


__all__ = [
    "as_uuid",
    "chunk",
    "dataset_stats",
    "entities_of_type",
    "episode_documents",
    "episode_graph",
    "episode_list",
    "episode_tree",
    "procedure_list",
]
