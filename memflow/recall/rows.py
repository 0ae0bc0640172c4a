"""What a search's transaction hands to its pure finish stage, one type per kind of search: a
tagged union (``kind``) of the episodic, procedural and baseline rows (:func:`cited`: the
documents they cite), and :class:`Fetched`: those rows with the cited documents' scope and
metadata."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from memflow.recall.baseline import BaselineUnit
from memflow.recall.pipeline import FirstRanking, ScoredHits
from memflow.recall.scoring import RelationshipIndex
from memflow.recall.types import Citation, Hit, SearchResult, Subgraph
from memflow.recall.visibility import Tags


def _cited(citations: Iterable[Citation]) -> set[uuid.UUID]:
    return {c.document_id for c in citations}


@dataclass(frozen=True)
class EpisodicRows:
    """``mode="episodic"``: the recall hits, the projected graph, the scored hits, and the best
    procedure when the query asks how to do something (None when it does not)."""

    hits: list[Hit]
    graph: Subgraph
    scored: ScoredHits
    how_to: list[SearchResult] | None = None
    # The relationship index of ``graph`` when the transaction built it (the expansion's
    # ranking), so that the final ranking does not build it again.
    index: RelationshipIndex | None = None
    # The ranking before the expansion (pipeline.FirstRanking), the final one when it still holds.
    first: FirstRanking | None = None
    kind: Literal["episodic"] = "episodic"

    def cited(self) -> set[uuid.UUID]:
        """The documents the how-to procedure cites: the graph's come with its statements
        (:class:`memflow.recall.visibility.Documents`)."""
        return _cited(c for r in self.how_to or [] for c in r.citations)


@dataclass(frozen=True)
class ProceduralRows:
    """``mode="procedural"``: current procedures, best first, steps in order."""

    procedures: list[SearchResult]
    kind: Literal["procedural"] = "procedural"


@dataclass(frozen=True)
class BaselineRows:
    """``mode="vector"`` and ``"lexical"``: ranked units, no graph."""

    units: list[BaselineUnit]
    kind: Literal["baseline"] = "baseline"


SearchRows = EpisodicRows | ProceduralRows | BaselineRows


def cited(rows: SearchRows) -> set[uuid.UUID]:
    """The documents ``rows`` cite that their statements did not read: the citations of the
    procedures or units (an episodic search's how-to procedure)."""
    if isinstance(rows, EpisodicRows):
        return rows.cited()
    items = rows.procedures if isinstance(rows, ProceduralRows) else rows.units
    return _cited(c for item in items for c in item.citations)


@dataclass(frozen=True)
class Fetched:
    """A search's rows, and the scope and metadata of the documents they cite (``tags``) and of
    the source documents of their bare episodes (``by_node``: episode -> its documents)."""

    rows: SearchRows
    tags: Tags = field(default_factory=dict)
    by_node: dict[uuid.UUID, list[uuid.UUID]] = field(default_factory=dict)


__all__ = ["BaselineRows", "EpisodicRows", "Fetched", "ProceduralRows", "SearchRows", "cited"]
