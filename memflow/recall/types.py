"""Plain data of recall: vector hits, the projected subgraph, scored bundles and results.

Responses are pydantic models so ``SearchResponse.model_dump(mode="json")`` is the CLI's ``--json``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, Literal, cast
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from memflow.recall.config import DisplayMode, SearchMode
from memflow.text.tokens import TokenCounterName

COLLECTIONS = (
    "Episode_summary",
    "Facet_search_text",
    "Facet_anchor_text",
    "FacetPoint_search_text",
    "Entity_name",
    "Edge_text",
)
EDGE_COLLECTION = "Edge_text"

NodeKind = Literal[
    "Episode",
    "Facet",
    "FacetPoint",
    "Entity",
    "Procedure",
    "ProcedureStepPoint",
    "ProcedureContextPoint",
]
Relationship = Literal[
    "has_facet",
    "has_point",
    "involves_entity",
    "same_entity_as",
    "has_key_point",
    "has_context_point",
]
PathKind = Literal[
    "direct_episode", "facet", "point", "entity", "facet_entity", "edge", "procedure"
]

# Tie-break order of path kinds: the more specific evidence wins equal scores (retrieval.md 6-7).
PATH_PREFERENCE: dict[str, int] = {
    "point": 0,
    "facet_entity": 1,
    "facet": 2,
    "entity": 3,
    "edge": 4,
    "direct_episode": 5,
}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Record:
    """The base of the search's hot-path dataclasses (built by the hundred per search): declared
    ``@dataclass(slots=True, unsafe_hash=True)``, not frozen, as a frozen dataclass's __init__
    sets every field through object.__setattr__ (~3x the cost of building one). They hash and
    compare by value as frozen ones do, and pickle as they did (a list of the fields' values:
    recordings of earlier searches still load, benchmarks/locomo_replay.py). Nothing assigns to
    their fields; dataclasses.replace makes a changed copy."""

    __slots__ = ()

    def __getstate__(self) -> list[Any]:
        return [getattr(self, f.name) for f in fields(cast(Any, self))]

    def __setstate__(self, state: list[Any]) -> None:
        for f, value in zip(fields(cast(Any, self)), state, strict=True):
            setattr(self, f.name, value)


@dataclass(slots=True, unsafe_hash=True)
class Hit(Record):
    """One ANN row. ``score`` starts as the raw distance until normalisation and bonuses set it.

    A plain slotted dataclass: a search builds and rescores ~600 of them (hot path)."""

    collection: str
    text: str
    distance: float  # raw cosine distance, 1 - cos
    node_id: UUID | None = None  # None for Edge_text rows
    score: float = math.nan  # defaults to the distance
    edge_text_hash: bytes | None = None

    def __post_init__(self) -> None:
        if math.isnan(self.score):
            self.score = self.distance

    def rescored(self, score: float) -> Hit:
        # Positional construction: several times faster than dataclasses.replace.
        return Hit(
            self.collection, self.text, self.distance, self.node_id, score, self.edge_text_hash
        )


class Provenance(Sequence[Any]):
    """A node's provenance rows as a search's statement returned them, the text of a JSON array
    (sql/recall.sql ``project``), parsed on first use: a search fetches ~450 of them and reads
    those of its results and packed units. Compares equal to the list it holds."""

    __slots__ = ("_keys", "_rows", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._rows: list[Any] | None = None
        self._keys: frozenset[tuple[Any, str]] | None = None

    def rows(self) -> list[Any]:
        rows = self._rows
        if rows is None:
            rows = self._rows = json.loads(self._text)
        return rows

    def turns(self) -> frozenset[tuple[Any, str]]:
        """The turns the rows cite, as (document id, chunk key), made once (a cached graph's
        nodes keep theirs)."""
        keys = self._keys
        if keys is None:
            keys = self._keys = frozenset(
                (document_id, key) for key, document_id, _source, _ts in self.rows()
            )
        return keys

    def __getitem__(self, index: Any) -> Any:
        return self.rows()[index]

    def __len__(self) -> int:
        return len(self.rows())

    def __iter__(self) -> Iterator[Any]:
        return iter(self.rows())

    def __eq__(self, other: object) -> bool:
        return self.rows() == (other.rows() if isinstance(other, Provenance) else other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self.rows())

    def __getstate__(self) -> str:
        return self._text

    def __setstate__(self, state: str) -> None:
        self._text, self._rows, self._keys = state, None, None


# The projected subgraph is internal to a search and rebuilt for every query: plain slotted
# dataclasses (Record), several times cheaper to construct than pydantic models.
@dataclass(slots=True, unsafe_hash=True)
class GraphNode(Record):
    id: UUID
    kind: NodeKind
    name: str = ""
    summary: str | None = None
    search_text: str | None = None
    anchor_text: str | None = None
    description: str | None = None
    facet_type: str | None = None
    created_at: datetime | None = None
    time_start: datetime | None = None
    time_end: datetime | None = None
    display_only: bool = False
    # Provenance rows [chunk key, document id, document source, chunk ts] (sql/recall.sql
    # ``project``), first chunk first; made into Citations only for what a response shows.
    # The statements return their JSON text: kept as a Provenance, parsed when first read.
    sources: Sequence[Any] = field(default_factory=list)
    speaker: str | None = None  # FacetPoints: the speaker of the turn it came from (parsed)
    degree: int | None = None  # Entities: episodes and facets linking to it (up to a cap)
    # Revision 0004: when this fact stopped holding, set only if it was replaced as of the
    # search's time (memflow.recall.temporal.mark_graph); None: it holds.
    replaced_at: datetime | None = None

    def __post_init__(self) -> None:
        if isinstance(self.sources, str):
            self.sources = Provenance(self.sources)


@dataclass(slots=True, unsafe_hash=True)
class GraphEdge(Record):
    src: UUID
    relationship: Relationship
    dst: UUID
    edge_text: str = ""


@dataclass(slots=True)
class Subgraph:
    nodes: dict[UUID, GraphNode] = field(default_factory=dict)
    edges: list[GraphEdge] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. hub-guard truncations
    episode_count: int = 0  # episodes in the dataset (entity specificity)
    # Points fetched with their exact distance for the context only (not recalled, not scored).
    unit_distances: dict[UUID, float] = field(default_factory=dict)
    # Revision 0004: valid_at, recorded_at, invalid_at, superseded_by of the nodes, by id
    # (memflow.recall.temporal.node_times), for the response's units and path steps.
    times: dict[UUID, dict[str, Any]] = field(default_factory=dict)
    # Issue 26: the write path's links between statements that give different values for one
    # thing (memflow.store.conflicts): node -> ((other node, "restates" | "restated_by"), ...).
    links: dict[UUID, tuple[tuple[UUID, str], ...]] = field(default_factory=dict)


class PathStep(_Frozen):
    """One node or edge of a bundle's winning chain, or one piece of corroborating evidence
    (``kind="support"``), for the explain trace. The costs of a bundle's steps sum to its
    score."""

    kind: Literal["node", "edge", "support"]
    node_kind: NodeKind | None = None
    relationship: Relationship | None = None
    id: UUID | None = None  # node id; None for edges
    text: str = ""
    collection: str | None = None  # the collection of the hit that gave this step its distance
    distance: float | None = None  # raw cosine distance of that hit
    cost: float = 0.0  # what this step adds to the bundle score
    # Revision 0004, for node steps: event time, record time, and when and by what it was replaced.
    valid_at: datetime | None = None
    recorded_at: datetime | None = None
    invalid_at: datetime | None = None
    superseded_by: UUID | None = None


class Bundle(_Frozen):
    episode_id: UUID
    score: float
    best_path: PathKind
    best_facet_id: UUID | None = None
    best_point_id: UUID | None = None
    best_entity_id: UUID | None = None
    path: list[PathStep] = Field(default_factory=list)
    # A question about the present: what moving ahead of the episode whose statement this one's
    # newer statement outdates took off the score (memflow.recall.present).
    recency: float = 0.0


class Citation(_Frozen):
    """Where a result or context unit came from: the chunk (a message or section) ``key`` of
    document ``document_id`` (``source``: its path or name) and the chunk's timestamp. Keys are
    unique within a document only; ``Dataset.document(document_id)`` / ``memflow show`` open it."""

    document_id: UUID
    source: str
    key: str
    ts: datetime | None = None


def citations(rows: Sequence[Any]) -> list[Citation]:
    """Citations from provenance rows ``[key, document_id, source, ts]`` (``GraphNode.sources``,
    the ``sources`` column of sql/recall.sql)."""
    return [Citation(key=k, document_id=d, source=s, ts=ts) for k, d, s, ts in rows]


def source_keys(rows: Sequence[Any]) -> list[str]:
    """The chunk keys of provenance rows."""
    return [row[0] for row in rows]


def turn_keys(rows: Sequence[Any]) -> frozenset[tuple[Any, str]]:
    """The turns provenance rows cite, as (document id, chunk key): a chunk key ("s1") names a
    turn within its document only. (A cached graph's nodes make theirs once.)"""
    if isinstance(rows, Provenance):
        return rows.turns()
    return frozenset((document_id, key) for key, document_id, _source, _ts in rows)


def first_document(rows: Sequence[Any]) -> Any:
    """The document id of the first provenance row (the document a point was first said in),
    or None without provenance."""
    if not rows:
        return None
    _key, document_id, _source, _ts = rows[0]
    return document_id


class SearchResult(_Frozen):
    """One ranked result: an episode, or (``kind == "procedure"``: procedural mode, or a how-to
    query in episodic mode) a procedure with ``steps`` in order, ``episode_id`` being the episode
    it was laid out in."""

    rank: int
    kind: Literal["episode", "procedure"] = "episode"
    episode_id: UUID
    name: str
    score: float
    best_path: PathKind
    best_facet_id: UUID | None = None
    best_point_id: UUID | None = None
    best_entity_id: UUID | None = None
    path: list[PathStep] = Field(default_factory=list)
    context: str = ""
    time: str | None = None
    # The chunks of the winning evidence (its best point, else facet), else the episode's first.
    citations: list[Citation] = Field(default_factory=list)
    procedure_id: UUID | None = None  # kind == "procedure"
    steps: list[str] = Field(default_factory=list)  # kind == "procedure": the steps, in order
    # Memory.search(datasets=[...]): the dataset the result is from (None: Dataset.search).
    dataset: str | None = None
    # Revision 0006: the scope and metadata of the first document the result cites.
    scope: dict[str, str] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)


class ContextUnit(_Frozen):
    """One unit that went into the response's context, with its provenance: ``citations``
    (document, source, chunk key, ts) and their chunk keys alone (``sources``)."""

    node_id: UUID | None = None
    episode_id: UUID | None = None
    kind: Literal["FacetPoint", "Facet", "Episode", "chunk"] = "FacetPoint"
    sources: list[str] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    tokens: int = 0
    # Tokens of the header this unit is shown under: once per episode group in the episodic
    # highly_related context, on every line of the vector/lexical baselines.
    header_tokens: int = 0
    # Revision 0004: event time, record time, and when and by what the fact was replaced.
    valid_at: datetime | None = None
    recorded_at: datetime | None = None
    invalid_at: datetime | None = None
    superseded_by: UUID | None = None
    # Issue 26: a newer statement in the same search gives another value for what this one
    # states (the context marks it "[possibly outdated: restated <day>]"): that statement's id.
    outdated_by: UUID | None = None
    # Memory.search(datasets=[...]): the dataset the unit is from (None: Dataset.search).
    dataset: str | None = None
    # Episodic highly_related: beyond the relevance cut-off, packed only into the room the
    # other units left (RecallConfig.fill_budget; memflow.recall.render.pack_indexes).
    fill: bool = False


# How a replaced fact's text is marked in a context (memflow.recall.temporal): "<text> [superseded,
# valid until 2023-03-09]".
SUPERSEDED_MARK = "[superseded, valid until"

# What ``SearchResult.score`` means in each mode: always a cost, lower is better.
SCORE_MEANING: dict[str, str] = {
    "episodic": "cost, lower is better: the cosine distance of the episode's cheapest chain of "
    "evidence plus its corroboration",
    "vector": "cost, lower is better: the cosine distance of the episode's best unit",
    "lexical": "cost, lower is better: 1 - the full-text rank of the episode's best message",
    "procedural": "cost, lower is better: the cosine distance of the procedure's best summary, "
    "step or context hit (steps and context +0.05)",
}


class SearchResponse(BaseModel):
    query: str
    mode: SearchMode = "episodic"
    display: DisplayMode = "summary"
    results: list[SearchResult] = Field(default_factory=list)
    timings_ms: dict[str, float] = Field(default_factory=dict)
    context: str = ""
    context_units: list[ContextUnit] = Field(default_factory=list)  # in rank order
    preprocessed: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    # How the context's budget counted tokens (SearchOptions.token_counter, memflow.text.tokens).
    token_counter: TokenCounterName = "words"
    # What the results' ``score`` is (SCORE_MEANING): a cost, so the best result scores lowest.
    score_meaning: str = ""

    def model_post_init(self, context: Any, /) -> None:
        if not self.score_meaning:
            self.score_meaning = SCORE_MEANING[self.mode]


__all__ = [
    "COLLECTIONS",
    "EDGE_COLLECTION",
    "PATH_PREFERENCE",
    "SCORE_MEANING",
    "SUPERSEDED_MARK",
    "Bundle",
    "Citation",
    "ContextUnit",
    "GraphEdge",
    "GraphNode",
    "Hit",
    "NodeKind",
    "PathKind",
    "PathStep",
    "Relationship",
    "SearchResponse",
    "SearchResult",
    "Subgraph",
    "citations",
    "source_keys",
    "turn_keys",
]
