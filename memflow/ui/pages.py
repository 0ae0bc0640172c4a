"""What the pages of ``memflow ui`` show, shaped from memflow's reads (no HTML here).

- an episode as a tree (:func:`episode_tree`) from the rows of ``sql/inspect.sql``
  ``episode_graph``;
- a result's explain trace (:func:`explain`) as the chain the templates draw Episode first
  (Episode ← Facet ← Point / Entity), the corroboration beside it, and their sum, the score;
- documents grouped by source with their versions (:func:`document_versions`).
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memflow.recall.types import PathStep, SearchResult
from memflow.store.history import DocumentVersion

# The order of a node's children in the tree: aspects before the entities they involve.
_CHILD_ORDER = {
    "Facet": 0,
    "FacetPoint": 0,
    "Procedure": 1,
    "ProcedureContextPoint": 1,
    "ProcedureStepPoint": 2,
    "Entity": 3,
}


@dataclass(frozen=True)
class Cited:
    """One citation: chunk ``key`` of document ``document_id`` (``source``) at time ``ts``."""

    document_id: str
    source: str
    key: str
    ts: str | None


@dataclass
class TreeNode:
    """A node of an episode's tree with the edge that reaches it from its parent."""

    id: uuid.UUID
    kind: str
    text: str
    detail: str | None = None  # a facet's anchor text, an episode's summary, an entity's role
    relationship: str | None = None
    edge_text: str | None = None
    edge_closed: datetime | None = None
    time_start: datetime | None = None
    time_end: datetime | None = None
    valid_at: datetime | None = None
    recorded_at: datetime | None = None  # the source's date (what as_of reads)
    created_at: datetime | None = None  # when memflow wrote it (what known_at reads)
    invalid_at: datetime | None = None
    superseded_by: uuid.UUID | None = None
    superseded_by_text: str | None = None
    supersedes: bool = False
    position: int | None = None
    citations: list[Cited] = field(default_factory=list)
    children: list[TreeNode] = field(default_factory=list)

    @property
    def closed(self) -> bool:
        return self.invalid_at is not None

    def count(self, kind: str) -> int:
        """Nodes of ``kind`` under this one (itself excluded)."""
        return sum((c.kind == kind) + c.count(kind) for c in self.children)


def _text(row: dict[str, Any]) -> tuple[str, str | None]:
    kind = row["kind"]
    if kind == "Episode":
        return row["name"] or "(unnamed episode)", row["summary"]
    if kind == "Facet":
        detail = row["anchor_text"] if row["anchor_text"] != row["search_text"] else None
        return row["search_text"] or row["name"], detail
    if kind == "Entity":
        return row["name"], row["description"]
    if kind == "Procedure":
        return row["name"], row["summary"]
    return row["search_text"] or row["name"], None


def _node(row: dict[str, Any]) -> TreeNode:
    text, detail = _text(row)
    return TreeNode(
        id=row["id"],
        kind=row["kind"],
        text=text,
        detail=detail or None,
        relationship=row["relationship"],
        edge_text=row["edge_text"],
        edge_closed=row["edge_invalid_at"],
        time_start=row["time_start"],
        time_end=row["time_end"],
        valid_at=row["valid_at"],
        recorded_at=row["recorded_at"],
        created_at=row["created_at"],
        invalid_at=row["invalid_at"],
        superseded_by=row["superseded_by"],
        superseded_by_text=row["superseded_by_text"],
        supersedes=bool(row["supersedes"]),
        position=row["position"],
        citations=[Cited(str(d), s, k, ts) for k, d, s, ts in row["citations"] or []],
    )


def episode_tree(rows: Sequence[dict[str, Any]]) -> TreeNode:
    """The tree of ``episode_graph`` rows (depth 0: the episode; 1: what it links to; 2: what
    its facets and procedures link to), children in the statement's order within each kind."""
    root = next(_node(r) for r in rows if r["depth"] == 0)
    by_parent: dict[uuid.UUID, list[TreeNode]] = defaultdict(list)
    for r in rows:
        if r["depth"] > 0:
            by_parent[r["parent_id"]].append(_node(r))
    for node in by_parent[root.id]:
        node.children = _ordered(by_parent.get(node.id, ()))
    root.children = _ordered(by_parent[root.id])
    return root


def _ordered(nodes: Iterable[TreeNode]) -> list[TreeNode]:
    return sorted(nodes, key=lambda n: _CHILD_ORDER.get(n.kind, 4))  # stable: keeps SQL order


@dataclass(frozen=True)
class Explained:
    """A result's explain trace: ``chain`` Episode first, then each edge and the node it comes
    from (Episode ← Facet ← Point), ``support`` the corroboration, ``total`` the sum of every
    step's cost, which is the result's score."""

    chain: list[PathStep]
    support: list[PathStep]
    total: float


def explain(result: SearchResult) -> Explained:
    """The deciding chain of ``result`` (its ``path``, as ``memflow search --explain`` prints
    it: from the hit to the episode) turned around to start at the episode."""
    chain = [s for s in result.path if s.kind != "support"]
    support = [s for s in result.path if s.kind == "support"]
    return Explained(chain=chain[::-1], support=support, total=sum(s.cost for s in result.path))


@dataclass(frozen=True)
class Source:
    """The versions of one document source, newest first."""

    source: str
    versions: list[DocumentVersion]

    @property
    def current(self) -> DocumentVersion | None:
        return next((v for v in self.versions if v.status == "current"), None)


def document_versions(documents: Iterable[DocumentVersion]) -> list[Source]:
    """Documents grouped by source (the order of ``Dataset.documents``), newest version first."""
    groups: dict[str, list[DocumentVersion]] = defaultdict(list)
    for d in documents:
        groups[d.source].append(d)
    return [
        Source(source, sorted(vs, key=lambda v: (v.version, v.created_at), reverse=True))
        for source, vs in groups.items()
    ]


__all__ = [
    "Cited",
    "Explained",
    "Source",
    "TreeNode",
    "document_versions",
    "episode_tree",
    "explain",
]
