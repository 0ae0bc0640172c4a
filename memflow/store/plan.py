"""Pure: turn drafts into the rows one document writes (nodes, edges, embeddings, provenance).

Ids are deterministic (uuid5 over dataset, kind, parent and normalised text), so planning the same
drafts twice gives the same rows. Edge texts follow architecture.md (m_flow's formats).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memflow.drafts import EntityDraft, EpisodeDraft, FacetDraft, ProcedureDraft, TimeSpan
from memflow.ids import canonical_name, make_id, normalise_text, text_hash
from memflow.text.supersede import Closure


@dataclass
class NodeRow:
    id: uuid.UUID
    kind: str
    name: str
    summary: str | None = None
    search_text: str | None = None
    anchor_text: str | None = None
    description: str | None = None
    facet_type: str | None = None
    canonical_name: str | None = None
    entity_type: str | None = None
    memory_type: str | None = None
    status: str | None = None
    time: TimeSpan | None = None
    sources: list[str] = field(default_factory=list)
    replaces: uuid.UUID | None = None  # a FacetPoint the draft names as replaced (revision 0004)
    valid_at: datetime | None = None  # set by the writer (memflow.store.temporal.stamp_times)
    recorded_at: datetime | None = None
    props: dict[str, Any] = field(default_factory=dict)

    def params(self, dataset_id: uuid.UUID) -> dict[str, Any]:
        return {
            "dataset_id": dataset_id,
            "id": self.id,
            "kind": self.kind,
            "name": self.name,
            "summary": self.summary,
            "search_text": self.search_text,
            "anchor_text": self.anchor_text,
            "description": self.description,
            "facet_type": self.facet_type,
            "canonical_name": self.canonical_name,
            "entity_type": self.entity_type,
            "memory_type": self.memory_type,
            "status": self.status,
            "time_start": self.time.start if self.time else None,
            "time_end": self.time.end if self.time else None,
            "time_confidence": self.time.confidence if self.time else None,
            "time_text": self.time.text if self.time else None,
            "valid_at": self.valid_at,
            "recorded_at": self.recorded_at,
            "props": json.dumps(self.props, sort_keys=True),
        }


@dataclass
class EdgeRow:
    id: uuid.UUID
    src: uuid.UUID
    relationship: str
    dst: uuid.UUID
    edge_text: str
    # Texts of the same plan whose vectors give this edge text's vector instead of embedding it:
    # one text, its vector reused (a piece's has_point edge); several, the normalised mean of
    # their normalised vectors (memflow.embed.base.mean_direction; Planner ``derive``).
    vector_parts: tuple[str, ...] = ()
    recorded_at: datetime | None = None  # set by the writer, from the node it points to

    @property
    def text_hash(self) -> bytes:
        return text_hash(self.edge_text)

    def params(self, dataset_id: uuid.UUID) -> dict[str, Any]:
        return {
            "dataset_id": dataset_id,
            "id": self.id,
            "src": self.src,
            "relationship": self.relationship,
            "dst": self.dst,
            "edge_text": self.edge_text,
            "text_hash": self.text_hash,
            "recorded_at": self.recorded_at,
        }


SUMMARY = "Episode_summary"


def summary_parts(draft: EpisodeDraft) -> tuple[str, ...]:
    """The texts whose vectors give a rules episode's summary vector when deriving: its facets'
    anchors. The rules' summary is one ``【handle】statements`` line per facet, a shortened
    restatement of those anchors; the mean of their vectors is within 0.97 cosine of its own
    (LoCoMo: the tune half's figures unchanged, the test half's episode recall@1 0.8 points lower;
    docs/benchmarks/ingest.md). Routing uses it for drafts; the plan uses the final anchors."""
    return tuple(dict.fromkeys(a for f in draft.facets if (a := f.anchor_text or f.search_text)))


@dataclass
class EmbedRow:
    collection: str
    node_id: uuid.UUID
    text: str


@dataclass
class WritePlan:
    nodes: dict[uuid.UUID, NodeRow] = field(default_factory=dict)
    edges: dict[uuid.UUID, EdgeRow] = field(default_factory=dict)
    embeds: list[EmbedRow] = field(default_factory=list)
    episode_ids: list[uuid.UUID] = field(default_factory=list)
    # Why the points' ``replaces`` close the old ones (change_log reason): drafts name them
    # ("document"), Dataset.correct writes one ("correction").
    replace_reason: str = "document"
    # Closures decided before the write: by the similarity path (memflow.store.conflicts) or a
    # model (memflow.llm.supersede); and whether the rules run in the transaction.
    closures: list[Closure] = field(default_factory=list)
    rules: bool = True
    procedure_ids: list[uuid.UUID] = field(default_factory=list)
    # Episode id -> the facet anchors whose vectors give its summary's vector (Planner ``derive``).
    summary_parts: dict[uuid.UUID, tuple[str, ...]] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        kinds = [n.kind for n in self.nodes.values()]
        return {
            "episodes": kinds.count("Episode"),
            "facets": kinds.count("Facet"),
            "facet_points": kinds.count("FacetPoint"),
            "entities": kinds.count("Entity"),
            "procedures": kinds.count("Procedure"),
            "edges": len(self.edges),
        }

    def edge_texts(self) -> dict[bytes, str]:
        return {e.text_hash: e.edge_text for e in self.edges.values()}

    def vector_parts(self) -> dict[bytes, tuple[str, ...]]:
        """Text hash -> the texts whose vectors give its vector instead of an embedding of its
        own: derived edge texts, and the summaries of ``summary_parts`` (unless another row
        embeds the same text for itself)."""
        out = {e.text_hash: e.vector_parts for e in self.edges.values() if e.vector_parts}
        derived: dict[bytes, tuple[str, ...]] = {}
        own: set[bytes] = set()
        for row in self.embeds:
            parts = self.summary_parts.get(row.node_id) if row.collection == SUMMARY else None
            if parts:
                derived[text_hash(row.text)] = parts
            else:
                own.add(text_hash(row.text))
        out.update((h, parts) for h, parts in derived.items() if h not in own)
        return out


def episode_id(dataset_id: uuid.UUID, draft: EpisodeDraft) -> uuid.UUID:
    return make_id(dataset_id, "Episode", normalise_text(draft.name), normalise_text(draft.summary))


def facet_id(dataset_id: uuid.UUID, episode: uuid.UUID, search_text: str) -> uuid.UUID:
    return make_id(dataset_id, "Facet", episode, normalise_text(search_text))


def entity_id(dataset_id: uuid.UUID, name: str) -> uuid.UUID:
    return make_id(dataset_id, "Entity", canonical_name(name) or normalise_text(name))


def procedure_key(p: ProcedureDraft) -> str:
    """What versions of one procedure share: the given key, else the normalised name."""
    return canonical_name(p.key or p.name) or normalise_text(p.key or p.name)


def procedure_id(dataset_id: uuid.UUID, p: ProcedureDraft) -> uuid.UUID:
    """One id per key and content: the same procedure memorised again is the same node."""
    content = [p.name, p.summary, *(s.text for s in p.steps)]
    content += [f"{c.aspect}:{c.text}" for c in p.context]
    return make_id(dataset_id, "Procedure", procedure_key(p), *map(normalise_text, content))


def procedure_summary(p: ProcedureDraft) -> str:
    """The embedded summary: the given one, else the name and the first steps."""
    if p.summary.strip():
        return p.summary.strip()
    steps = "; ".join(s.text for s in p.steps[:3])
    return _clip(f"{p.name}: {steps}", 600)


def _clip(text: str | None, n: int) -> str:
    return (text or "").strip()[:n]


def has_facet_text(f: FacetDraft) -> str:
    detail = _clip(f.description or f.anchor_text, 300)
    return f"{f.search_text}: {detail}" if detail else f.search_text


def has_point_text(f: FacetDraft, point_text: str, description: str | None) -> str:
    base = f"{f.search_text} -> {point_text}"
    return f"{base}: {_clip(description, 200)}" if description else base


def _role(e: EntityDraft) -> str:
    return e.role or e.description or e.entity_type or "mentioned"


def episode_entity_text(e: EntityDraft) -> str:
    return f"{e.name} | {_clip(_role(e), 200)}"


def facet_entity_text(e: EntityDraft, f: FacetDraft) -> str:
    return f"{e.name} | {_clip(_role(e), 180)} (in: {f.search_text[:50]})"


class Planner:
    """Accumulates the rows of one write (one document's drafts).

    ``derive``: the vectors of the edge texts that only restate their ends (``has_facet``: the
    facet's handle and anchor; ``has_point`` without a description: the handle and the point;
    a facet's ``involves_entity``: the entity's name and the handle; an episode's
    ``involves_entity``: the entity's name and the handles of the facets that involve it) are the
    normalised mean of those texts' vectors, which the plan embeds anyway, instead of embeddings
    of their own; so is an episode's summary, from its facets' anchors (``summary_parts``)."""

    def __init__(self, dataset_id: uuid.UUID, *, derive: bool = True) -> None:
        self.ds = dataset_id
        self.derive = derive
        self.plan = WritePlan()

    def _edge(
        self,
        src: uuid.UUID,
        rel: str,
        dst: uuid.UUID,
        edge_text: str,
        vector_parts: tuple[str, ...] = (),
    ) -> None:
        eid = make_id(self.ds, "edge", src, rel, dst)
        if eid not in self.plan.edges:
            self.plan.edges[eid] = EdgeRow(eid, src, rel, dst, edge_text, vector_parts)

    def _parts(self, *texts: str | None) -> tuple[str, ...]:
        """``texts`` as the vector parts of a derived edge, when deriving (and all are given)."""
        if not self.derive or not all(t and t.strip() for t in texts):
            return ()
        return tuple(t for t in texts if t)

    def _entity(self, e: EntityDraft, sources: list[str]) -> uuid.UUID:
        eid = entity_id(self.ds, e.name)
        row = self.plan.nodes.get(eid)
        if row is None:
            row = NodeRow(
                id=eid,
                kind="Entity",
                name=e.name,
                description=e.description,
                canonical_name=canonical_name(e.name) or normalise_text(e.name),
                entity_type=e.entity_type,
            )
            self.plan.nodes[eid] = row
            self.plan.embeds.append(EmbedRow("Entity_name", eid, e.name))
        else:
            row.description = row.description or e.description
            row.entity_type = row.entity_type or e.entity_type
        row.sources.extend(sources)
        for label in e.types:
            self._entity_type(eid, row.name, label, sources)
        for alias in e.aliases:
            if canonical_name(alias) == row.canonical_name or not alias.strip():
                continue
            other = self._entity(EntityDraft(name=alias, entity_type=e.entity_type), sources)
            a, b = sorted([eid, other], key=str)
            na, nb = self.plan.nodes[a].name, self.plan.nodes[b].name
            self._edge(a, "same_entity_as", b, f"{na} = {nb}")
        return eid

    def _entity_type(self, entity: uuid.UUID, name: str, label: str, sources: list[str]) -> None:
        key = canonical_name(label)
        if not key:
            return
        tid = make_id(self.ds, "EntityType", key)
        if tid not in self.plan.nodes:
            self.plan.nodes[tid] = NodeRow(
                id=tid, kind="EntityType", name=label, canonical_name=key
            )
            self.plan.embeds.append(EmbedRow("EntityType_name", tid, label))
        self.plan.nodes[tid].sources.extend(sources)
        self._edge(entity, "is_a", tid, f"{name} is a {label}")

    def add_episode(self, draft: EpisodeDraft, *, ep_id: uuid.UUID | None = None) -> uuid.UUID:
        ep = ep_id or episode_id(self.ds, draft)
        self.plan.episode_ids.append(ep)
        all_sources = list(draft.sources)
        for f in draft.facets:
            all_sources += f.sources
            for p in f.points:
                all_sources += p.sources
        self.plan.nodes[ep] = NodeRow(
            id=ep,
            kind="Episode",
            name=draft.name,
            summary=draft.summary,
            memory_type=draft.memory_type,
            status="open",
            time=draft.time,
            sources=all_sources,
        )
        self.plan.embeds.append(EmbedRow(SUMMARY, ep, draft.summary))
        for f in draft.facets:
            self._facet(ep, f)
        for e in draft.entities:
            en = self._entity(e, list(draft.sources))
            key = canonical_name(e.name)
            handles = [
                f.search_text
                for f in draft.facets
                if any(canonical_name(x.name) == key for x in f.entities)
            ]
            parts = self._parts(self.plan.nodes[en].name, *handles)
            self._edge(ep, "involves_entity", en, episode_entity_text(e), parts)
        for proc in draft.procedures:
            pid = self.add_procedure(proc)
            self._edge(ep, "has_procedure", pid, f"lays out the procedure: {_clip(proc.name, 200)}")
        return ep

    def add_procedure(self, p: ProcedureDraft) -> uuid.UUID:
        """A Procedure with its context points and ordered steps (version 1, current: the
        writer's versioning step renumbers it when the dataset holds an older version)."""
        pid = procedure_id(self.ds, p)
        srcs = list(p.sources) + [s for st in p.steps for s in st.sources]
        srcs += [s for c in p.context for s in c.sources]
        if pid in self.plan.nodes:
            self.plan.nodes[pid].sources.extend(srcs)
            return pid
        summary = procedure_summary(p)
        self.plan.nodes[pid] = NodeRow(
            id=pid,
            kind="Procedure",
            name=p.name,
            summary=summary,
            canonical_name=procedure_key(p),
            status="current",
            sources=srcs,
            props={"version": 1},
        )
        self.plan.procedure_ids.append(pid)
        self.plan.embeds.append(EmbedRow("Procedure_summary", pid, summary))
        for pos, step in enumerate(p.steps, start=1):
            sid = make_id(self.ds, "ProcedureStepPoint", pid, str(pos), normalise_text(step.text))
            self.plan.nodes[sid] = NodeRow(
                id=sid,
                kind="ProcedureStepPoint",
                name=f"step {pos}",
                search_text=step.text,
                sources=list(step.sources),
                props={"position": pos},
            )
            self.plan.embeds.append(EmbedRow("Procedure_step_text", sid, step.text))
            self._edge(
                pid,
                "has_key_point",
                sid,
                f"{_clip(p.name, 80)} -> step {pos}: {_clip(step.text, 200)}",
            )
        for c in p.context:
            cid = make_id(self.ds, "ProcedureContextPoint", pid, c.aspect, normalise_text(c.text))
            if cid in self.plan.nodes:
                continue
            self.plan.nodes[cid] = NodeRow(
                id=cid,
                kind="ProcedureContextPoint",
                name=c.aspect,
                search_text=c.text,
                sources=list(c.sources),
                props={"aspect": c.aspect},
            )
            self.plan.embeds.append(EmbedRow("Procedure_context_text", cid, c.text))
            self._edge(
                pid,
                "has_context_point",
                cid,
                f"{_clip(p.name, 80)} -> {c.aspect}: {_clip(c.text, 200)}",
            )
        return pid

    def _facet(self, ep: uuid.UUID, f: FacetDraft) -> None:
        fid = facet_id(self.ds, ep, f.search_text)
        srcs = list(f.sources) + [s for p in f.points for s in p.sources]
        existing = self.plan.nodes.get(fid)
        anchor = f.anchor_text or f.search_text
        if existing is not None:  # same handle twice in one episode: absorb the text
            if anchor not in (existing.anchor_text or ""):
                existing.anchor_text = f"{existing.anchor_text}\n{anchor}".strip()
            existing.sources.extend(srcs)
        else:
            self.plan.nodes[fid] = NodeRow(
                id=fid,
                kind="Facet",
                name=f.name or f.search_text,
                search_text=f.search_text,
                anchor_text=anchor,
                description=f.description,
                facet_type=f.facet_type,
                time=f.time,
                sources=srcs,
            )
        # The parts of has_facet are the final handle and anchor: set in finish(), after absorption.
        self._edge(ep, "has_facet", fid, has_facet_text(f))
        handle = self.plan.nodes[fid].search_text
        for p in f.points:
            pid = make_id(self.ds, "FacetPoint", fid, normalise_text(p.search_text))
            if pid not in self.plan.nodes:
                self.plan.nodes[pid] = NodeRow(
                    id=pid,
                    kind="FacetPoint",
                    name=p.name or p.search_text[:120],
                    search_text=p.search_text,
                    description=p.description,
                    sources=list(p.sources),
                    replaces=p.replaces,
                )
            else:
                self.plan.nodes[pid].sources.extend(p.sources)
            point = self.plan.nodes[pid].search_text or p.search_text
            self._edge(
                fid,
                "has_point",
                pid,
                has_point_text(f, p.search_text, p.description),
                (point,) if p.piece else () if p.description else self._parts(handle, point),
            )
        for e in f.entities:
            en = self._entity(e, srcs)
            parts = self._parts(self.plan.nodes[en].name, handle)
            self._edge(fid, "involves_entity", en, facet_entity_text(e, f), parts)

    def finish(self) -> WritePlan:
        anchors: dict[uuid.UUID, list[str]] = {}
        for edge in self.plan.edges.values():
            if edge.relationship == "has_facet":
                facet = self.plan.nodes[edge.dst]
                edge.vector_parts = self._parts(facet.search_text, facet.anchor_text)
                anchors.setdefault(edge.src, []).append(facet.anchor_text or "")
        if self.derive:
            for ep, texts in anchors.items():
                if all(t.strip() for t in texts):
                    self.plan.summary_parts[ep] = tuple(dict.fromkeys(texts))
        # Embeddings of facet texts are added once per facet, after absorption.
        for node in self.plan.nodes.values():
            if node.kind == "Facet":
                self.plan.embeds.append(
                    EmbedRow("Facet_search_text", node.id, node.search_text or "")
                )
                self.plan.embeds.append(
                    EmbedRow("Facet_anchor_text", node.id, node.anchor_text or "")
                )
            elif node.kind == "FacetPoint":
                self.plan.embeds.append(
                    EmbedRow("FacetPoint_search_text", node.id, node.search_text or "")
                )
        return self.plan


def plan_drafts(
    dataset_id: uuid.UUID, drafts: list[EpisodeDraft], *, derive: bool = False
) -> WritePlan:
    """The rows of ``drafts`` (structured drafts keep every edge text's own embedding unless
    ``derive``: see :class:`Planner`)."""
    planner = Planner(dataset_id, derive=derive)
    for d in drafts:
        planner.add_episode(d)
    return planner.finish()
