"""The ``rules`` extractor: the best structure obtainable without a language model (ingest.md).

One Episode per document or dialog session (long documents: one per top-level section); Facets
are topic segments (Markdown sections, paragraph groups, windows of turns); FacetPoints are the
statements themselves, each citing its chunk key; Entities come from :mod:`entities`.
Deterministic: the same document (and the same embedder) always gives the same drafts.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import PurePath

import numpy as np

from memflow.bounds import load_json
from memflow.drafts import (
    EntityDraft,
    EpisodeDraft,
    FacetDraft,
    PointDraft,
    TimeSpan,
)
from memflow.embed.base import Embedder, Matrix, Vector
from memflow.errors import InvalidInput
from memflow.ids import canonical_name
from memflow.ingest.entities import EntityHit, keywords, name_aliases, rank_entities
from memflow.ingest.entity_types import with_entity_types
from memflow.ingest.procedures import attach_procedures, dialog_procedures, text_procedures
from memflow.ingest.segment import segment
from memflow.store.datasets import as_draft
from memflow.text.dating import text_time
from memflow.text.document import Chunk, ParsedDocument
from memflow.text.pieces import chars_within, split_long, text_size
from memflow.text.sentences import join_statements, shorten, speaker_label, text_units
from memflow.text.timeparse import best_time, resolve_tz

_FACET_TYPES = (
    ("decision", ("decision", "decided", "conclusion", "outcome", "resolution", "决定", "决策",
                  "结论", "选型")),
    ("risk", ("risk", "constraint", "caveat", "limitation", "issue", "风险", "约束", "限制", "注意",
              "问题")),
    ("plan", ("plan", "next step", "roadmap", "timeline", "milestone", "rollout", "schedule", "todo",
              "计划", "安排", "下一步", "时间表", "里程碑", "排期")),
    ("metric", ("metric", "performance", "latency", "benchmark", "result", "numbers", "指标",
                "性能", "延迟", "数据", "结果")),
)  # fmt: skip
_MIN_TIME_CONFIDENCE = 0.5


@dataclass(frozen=True)
class _Group:
    """Chunks that become one Facet, with the heading that names it (if any)."""

    chunks: list[Chunk]
    heading: str | None = None


def facet_type_for(heading: str | None) -> str:
    """decision / risk / plan / metric from heading words, else topic."""
    text = (heading or "").casefold()
    for facet_type, cues in _FACET_TYPES:
        if any(cue in text for cue in cues):
            return facet_type
    return "topic"


def point_text(chunk: Chunk) -> str:
    """A turn keeps its speaker (``"Speaker: text"``); a sentence is itself."""
    return f"{chunk.speaker}: {chunk.text}" if chunk.speaker else chunk.text


def point_texts(chunk: Chunk) -> list[str]:
    """The FacetPoint texts of a chunk: itself, or for a long turn or sentence several pieces
    cut at sentence boundaries, each keeping the speaker (:func:`memflow.text.pieces.split_long`)."""
    pieces = split_long(chunk.text)
    if len(pieces) == 1:
        return [point_text(chunk)]
    return [f"{chunk.speaker}: {p}" if chunk.speaker else p for p in pieces]


def _bounded_lines(lines: Sequence[str], limit: int, words: float) -> str:
    """Whole lines while they fit in ``limit`` characters and ``words`` words, then "…"."""
    out: list[str] = []
    used = 0
    size = 0.0
    for line in lines:
        n = text_size(line)
        if used + len(line) + 1 > limit or size + n > words:
            if not out:
                out.append(_bounded(line, limit, words))
            else:
                out.append("…")
            break
        out.append(line)
        used += len(line) + 1
        size += n
    return "\n".join(out)


def _bounded(text: str, limit: int, words: float) -> str:
    """``text`` shortened to ``limit`` characters and ``words`` words."""
    return shorten(text, min(limit, max(1, chars_within(text, words))))


class RulesExtractor:
    """Deterministic extractor; ``embedder`` (optional) only drives dialog/text segmentation.

    Vectors computed for segmentation are kept in ``embedding_cache`` (text -> vector, passages
    of this embedder) so a writer can reuse them for the FacetPoint texts, which are identical.
    Pass a shared mapping as ``cache`` to do that; the default cache keeps ``cache_size`` texts.
    """

    name = "rules"

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        min_facet_turns: int = 3,
        max_facet_turns: int = 8,
        window_turns: int = 4,
        min_facet_sentences: int = 2,
        max_facet_sentences: int = 8,
        max_section_sentences: int = 12,
        long_document_sentences: int = 80,
        max_entities_per_facet: int = 8,
        max_entities_per_episode: int = 20,
        summary_chars: int = 1200,
        anchor_chars: int = 1000,
        anchor_words: int = 250,
        tz: str = "UTC",
        cache: MutableMapping[str, Vector] | None = None,
        cache_size: int = 50_000,
    ) -> None:
        self.embedder = embedder
        self.min_facet_turns = min_facet_turns
        self.max_facet_turns = max_facet_turns
        self.window_turns = window_turns
        self.min_facet_sentences = min_facet_sentences
        self.max_facet_sentences = max_facet_sentences
        self.max_section_sentences = max_section_sentences
        self.long_document_sentences = long_document_sentences
        self.max_entities_per_facet = max_entities_per_facet
        self.max_entities_per_episode = max_entities_per_episode
        self.summary_chars = summary_chars
        self.anchor_chars = anchor_chars
        # A character bound lets CJK anchors run ~3x as long in e5 tokens as English ones; 250
        # words (a CJK character is half a word) binds only for them (English: ~6 characters a
        # word, so 1,000 characters come first).
        self.anchor_words = anchor_words
        self.tz = resolve_tz(tz)
        self._lru: OrderedDict[str, Vector] | None = None
        if cache is None:
            cache = self._lru = OrderedDict()
        self.embedding_cache: MutableMapping[str, Vector] = cache
        self.cache_size = cache_size

    # ------------------------------------------------------------ public

    def extract(self, doc: ParsedDocument) -> list[EpisodeDraft]:
        if doc.content_type == "draft":
            return drafts_from_json(doc.text, doc.source)
        if doc.content_type in ("dialog", "conversation"):
            return self._dialog(doc)
        return self._text(doc)

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Passage vectors for ``texts`` through the cache (each distinct text embedded once)."""
        if self.embedder is None:
            raise InvalidInput("this RulesExtractor has no embedder")
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        cache = self.embedding_cache
        missing = list(dict.fromkeys(t for t in texts if t not in cache))
        if missing:
            for text, vector in zip(missing, self.embedder.embed_passages(missing), strict=True):
                cache[text] = vector
        out = np.stack([cache[t] for t in texts])
        if self._lru is not None:  # least recently used texts leave first
            for text in texts:
                self._lru.move_to_end(text)
            while len(self._lru) > self.cache_size:
                self._lru.popitem(last=False)
        return out

    def chunk_vectors(self, chunks: Sequence[Chunk]) -> Matrix:
        """One vector per chunk for segmentation: its point text's, or the mean of its pieces'
        (the texts embedded are the FacetPoint texts, so the writer finds them in the cache)."""
        texts = [point_texts(c) for c in chunks]
        flat = self.embed([t for ts in texts for t in ts])
        out = np.empty((len(chunks), flat.shape[1]), dtype=np.float32)
        at = 0
        for row, ts in enumerate(texts):
            out[row] = flat[at : at + len(ts)].mean(axis=0)
            at += len(ts)
        return out

    # ------------------------------------------------------------ dialog

    def _dialog(self, doc: ParsedDocument) -> list[EpisodeDraft]:
        sessions = [(s.started_at, [doc.chunks[i] for i in s.chunk_indexes]) for s in doc.sessions]
        if not sessions:
            sessions = [(None, list(doc.chunks))]
        episodes: list[EpisodeDraft] = []
        for started_at, chunks in sessions:
            if not chunks:
                continue
            episode = with_entity_types(self._session_episode(doc, started_at, chunks), chunks)
            found = [p for p, _ in dialog_procedures(chunks)]
            episodes.append(episode.model_copy(update={"procedures": found}) if found else episode)
        return episodes

    def _session_episode(
        self, doc: ParsedDocument, started_at: datetime | None, chunks: list[Chunk]
    ) -> EpisodeDraft:
        when = (started_at or doc.reference_time).astimezone(self.tz)
        day = when.replace(hour=0, minute=0, second=0, microsecond=0)
        date_text = f"{day.day} {day:%B %Y}"
        span = TimeSpan(
            start=day,
            end=day + timedelta(days=1),
            confidence=0.95 if started_at is not None else 0.7,
            text=date_text,
        )
        vectors = None
        if self.embedder is not None and len(chunks) > self.min_facet_turns:
            vectors = self.chunk_vectors(chunks)
        spans = segment(
            len(chunks),
            vectors=vectors,
            min_size=self.min_facet_turns,
            max_size=self.max_facet_turns,
            window=self.window_turns,
        )
        speakers = list(dict.fromkeys(c.speaker for c in chunks if c.speaker))
        facets = self._facets([_Group(chunks[a:b]) for a, b in spans], when, speakers)
        names = speaker_label(speakers)
        topic = keywords([c.text for c in chunks], exclude=speakers, limit=3)
        label = ", ".join(topic) if topic else shorten(chunks[0].text, 60)
        name = shorten(f"{names or doc.title} — {date_text}: {label}", 160)
        return self._episode(name, facets, chunks, span, speakers)

    # ------------------------------------------------------------ text and markdown

    def _text(self, doc: ParsedDocument) -> list[EpisodeDraft]:
        chunks = list(doc.chunks)
        if not chunks:
            return []
        breaks = _paragraph_starts(doc)
        parts = self._episode_parts(chunks, breaks)
        episodes: list[EpisodeDraft] = []
        for i, (title, part) in enumerate(parts):
            # The part's own title, then the document's, then its file name date the part
            # before any date in its body (memflow.text.dating). A plain text's "title" is its
            # first line: it dates the first part only.
            whole = doc.content_type == "markdown" or i == 0
            titles = [title, doc.title if whole else None, PurePath(doc.source).name]
            groups = self._text_groups(part, breaks, drop=title)
            facets = self._facets(groups, doc.reference_time, [], titles)
            body = " ".join(c.text for c in part)
            found = text_time(
                titles, body[:6000], doc.reference_time, self.tz,
                body_confidence_min=_MIN_TIME_CONFIDENCE, written=part[0].timestamp,
            )  # fmt: skip
            span = found.to_span() if found else None
            name = title or (doc.title if len(parts) == 1 else shorten(part[0].text, 80))
            episodes.append(with_entity_types(self._episode(name, facets, part, span, []), part))
        return attach_procedures(episodes, parts, text_procedures(doc))

    def _episode_parts(
        self, chunks: list[Chunk], breaks: set[int]
    ) -> list[tuple[str | None, list[Chunk]]]:
        """The whole document, or one part per top-level section when it is long."""
        root = _common_root(chunks)
        if len(chunks) <= self.long_document_sentences:
            return [(root, chunks)]
        depth = 1 if root else 0
        parts: list[tuple[str | None, list[Chunk]]] = []
        for chunk in chunks:
            path = (chunk.section or "").split(" > ")
            top = path[depth] if len(path) > depth and path[depth] else None
            title = " — ".join(p for p in (root, top) if p) or None
            if parts and (parts[-1][0] == title or top is None):
                parts[-1][1].append(chunk)
            else:
                parts.append((title, [chunk]))
        if len(parts) == 1:  # no top-level sections: cut at paragraph breaks
            return [(root, chunks[a:b]) for a, b in self._long_spans(chunks, breaks)]
        return parts

    def _long_spans(self, chunks: list[Chunk], breaks: set[int]) -> list[tuple[int, int]]:
        local = {c.index - chunks[0].index for c in chunks if c.index in breaks}
        limit = self.long_document_sentences
        return segment(len(chunks), breaks=local, min_size=limit // 2, max_size=limit, window=limit)

    def _text_groups(self, chunks: list[Chunk], breaks: set[int], drop: str | None) -> list[_Group]:
        sections: list[list[Chunk]] = []
        for chunk in chunks:
            if sections and sections[-1][0].section == chunk.section:
                sections[-1].append(chunk)
            else:
                sections.append([chunk])
        groups: list[_Group] = []
        for section in sections:
            heading = _relative_heading(section[0].section, drop)
            local = {i for i, c in enumerate(section) if c.index in breaks}
            if heading is not None and len(section) <= self.max_section_sentences:
                spans = [(0, len(section))]
            else:
                vectors = None
                if self.embedder is not None and len(section) > self.max_facet_sentences:
                    vectors = self.chunk_vectors(section)
                spans = segment(
                    len(section),
                    vectors=vectors,
                    breaks=local,
                    min_size=self.min_facet_sentences,
                    max_size=self.max_facet_sentences,
                    window=self.max_facet_sentences,
                )
            groups += [_Group(section[a:b], heading) for a, b in spans]
        return groups

    # ------------------------------------------------------------ facets and episodes

    def _facets(
        self,
        groups: list[_Group],
        now: datetime,
        speakers: list[str],
        titles: Sequence[str | None] = (),
    ) -> list[FacetDraft]:
        """One facet per group; a text's facet is dated by its heading, then by ``titles`` (its
        part's and document's), before its own statements (memflow.text.dating)."""
        facets: list[FacetDraft] = []
        used: set[str] = set()
        # "Marco" stands for "Marco Rossi" throughout the episode, not only in its own facet.
        aliases = name_aliases([c.text for g in groups for c in g.chunks], speakers)
        for group in groups:
            raw = [c.text for c in group.chunks]
            lines = [point_text(c) for c in group.chunks]
            group_speakers = [s for s in speakers if any(c.speaker == s for c in group.chunks)]
            if group.heading:
                handle = group.heading
            elif group_speakers:
                handle = ", ".join(keywords(raw, exclude=speakers, limit=4)) or shorten(raw[0], 80)
            else:
                handle = shorten(raw[0], 80)
            handle = _unique(handle, used)
            if group_speakers:
                anchor = _bounded_lines(lines, self.anchor_chars, self.anchor_words)
            else:
                anchor = _bounded(join_statements(lines), self.anchor_chars, self.anchor_words)
            hits = rank_entities(
                raw, speakers=group_speakers, limit=self.max_entities_per_facet, aliases=aliases
            )
            found = (
                text_time([group.heading, *titles], " ".join(raw)[:4000], now, self.tz)
                if titles
                else best_time(" ".join(raw)[:4000], now, self.tz)
            )
            facets.append(
                FacetDraft(
                    name=handle,
                    facet_type=facet_type_for(group.heading),
                    search_text=handle,
                    anchor_text=anchor,
                    description=shorten(join_statements(lines), 300),
                    points=[
                        PointDraft(search_text=t, sources=[c.key], piece=len(ts) > 1)
                        for c in group.chunks
                        for ts in [point_texts(c)]
                        for t in ts
                    ],
                    entities=[_facet_entity(h, group.chunks) for h in hits],
                    time=found.to_span()
                    if found and found.confidence >= _MIN_TIME_CONFIDENCE
                    else None,
                    sources=[c.key for c in group.chunks],
                )
            )
        return facets

    def _episode(
        self,
        name: str,
        facets: list[FacetDraft],
        chunks: list[Chunk],
        span: TimeSpan | None,
        speakers: list[str],
    ) -> EpisodeDraft:
        return EpisodeDraft(
            name=shorten(name, 160),
            summary=self._summary(facets),
            facets=facets,
            entities=self._episode_entities(facets, chunks, speakers),
            time=span,
            sources=[c.key for c in chunks],
        )

    def _summary(self, facets: list[FacetDraft]) -> str:
        """The seed's sectioned form: one ``【handle】content`` line per facet, bounded."""
        budget = max(80, self.summary_chars // max(1, len(facets)))
        lines: list[str] = []
        used = 0
        for i, facet in enumerate(facets):
            content = join_statements([p.search_text for p in facet.points]) or facet.anchor_text
            head = f"【{shorten(facet.search_text, 40)}】"
            line = head + shorten(content, max(20, budget - len(head) - 1))
            if used + len(line) > self.summary_chars:
                lines.append(f"…(+{len(facets) - i} more)")
                break
            lines.append(line)
            used += len(line) + 1
        return "\n".join(lines) or "(empty)"

    def _episode_entities(
        self, facets: list[FacetDraft], chunks: list[Chunk], speakers: list[str]
    ) -> list[EntityDraft]:
        turns: dict[str, int] = {}
        for chunk in chunks:
            if chunk.speaker:
                turns[chunk.speaker] = turns.get(chunk.speaker, 0) + 1
        merged: dict[str, tuple[EntityDraft, list[str], int]] = {}
        for facet in facets:
            for entity in facet.entities:
                key = canonical_name(entity.name)
                first, where, order = merged.get(key, (entity, [], len(merged)))
                merged[key] = (first, [*where, facet.search_text], order)
        out: list[EntityDraft] = []
        for speaker in speakers:
            out.append(
                EntityDraft(
                    name=speaker,
                    entity_type="person",
                    role=f"speaker ({turns.get(speaker, 0)} turns)",
                )
            )
            merged.pop(canonical_name(speaker), None)
        ranked = sorted(merged.values(), key=lambda v: (-len(v[1]), v[2]))
        for entity, where, _ in ranked[: max(0, self.max_entities_per_episode - len(out))]:
            role = shorten("mentioned in: " + "; ".join(shorten(w, 50) for w in where), 200)
            out.append(EntityDraft(name=entity.name, entity_type=entity.entity_type, role=role))
        return out


def _facet_entity(hit: EntityHit, chunks: list[Chunk]) -> EntityDraft:
    if hit.entity_type == "person":
        turns = sum(1 for c in chunks if c.speaker == hit.name)
        role = f"speaker ({turns} turns)"
        if hit.count:
            role += f", also mentioned: {shorten(point_text(chunks[hit.first]), 120)}"
    else:
        role = f"mentioned: {shorten(point_text(chunks[hit.first]), 160)}"
    return EntityDraft(name=hit.name, entity_type=hit.entity_type, role=role)


def _unique(handle: str, used: set[str]) -> str:
    candidate, n = handle, 2
    while canonical_name(candidate) in used:
        candidate, n = f"{handle} ({n})", n + 1
    used.add(canonical_name(candidate))
    return candidate


def _common_root(chunks: list[Chunk]) -> str | None:
    roots = {(c.section or "").split(" > ")[0] for c in chunks if c.section}
    return roots.pop() if len(roots) == 1 else None


def _relative_heading(section: str | None, drop: str | None) -> str | None:
    if not section:
        return None
    parts = section.split(" > ")
    dropped = set((drop or "").split(" — "))
    while len(parts) > 1 and parts[0] in dropped:
        parts.pop(0)
    return " > ".join(parts)


def _paragraph_starts(doc: ParsedDocument) -> set[int]:
    """Chunk indexes that open a paragraph, recovered by re-reading the document's text."""
    units, _ = text_units(doc.text, markdown=doc.content_type == "markdown")
    if [u.text for u in units] != [c.text for c in doc.chunks]:
        return set()
    return {i for i in range(1, len(units)) if units[i].paragraph != units[i - 1].paragraph}


def drafts_from_json(text: str, source: str) -> list[EpisodeDraft]:
    """Episode drafts given as JSON: one draft, a list, or ``{"episodes": [...]}`` (checked as
    ``add_episodes`` checks them: memflow.store.datasets.as_draft)."""
    obj = load_json(text, source)
    items = obj.get("episodes", [obj]) if isinstance(obj, dict) else obj
    if not isinstance(items, list):
        raise InvalidInput(f'{source}: "episodes" must be a list of episode drafts')
    return [as_draft(item, source) for item in items]


__all__ = ["RulesExtractor", "drafts_from_json", "facet_type_for", "point_text", "point_texts"]
