"""The ``llm`` extractor: one JSON-schema call per dialog session or per window of a long text.

Each call groups the lines into events, writes a sectioned summary (section -> Facet: title =
search_text, content = anchor_text), atomic FacetPoints citing chunk keys, and entities. The reply
is then checked against the source: numbers and names in the lines a facet cites must appear in
that facet; a source line whose anchors were lost is appended to the facet as a point.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

from memflow.drafts import (
    ContextPointDraft,
    EntityDraft,
    EpisodeDraft,
    FacetDraft,
    PointDraft,
    ProcedureDraft,
    StepDraft,
)
from memflow.ids import canonical_name, normalise_text
from memflow.llm.client import LlmClient, Usage, load_prompt
from memflow.llm.schemas import LlmEvent, LlmExtraction, LlmSection
from memflow.text.dating import date_drafts
from memflow.text.document import Chunk, ParsedDocument

SUMMARY_MAX_CHARS = 4000
POINT_DESCRIPTION_MAX_CHARS = 500

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_NAME = re.compile(r"(?<![A-Za-z0-9'’])[A-Z][A-Za-z0-9]*(?:[-&][A-Za-z0-9]+)*")
_SENTENCE_END = (".", "!", "?", "…", "。", "！", "？", "\n", '"', "“", "(")
_NOT_NAMES = frozenset({"OK", "Ok", "Oh", "Hey", "Hi", "Yes", "No", "Yeah", "Wow", "Thanks"})
_NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)
_WORDS = re.compile(r"\w+")


# ---------------------------------------------------------------------------------------------
# anchors: numbers and names that must survive extraction


def _normalise_number(token: str) -> str:
    integer, dot, fraction = token.partition(".")
    integer = integer.lstrip("0") or "0"
    return f"{integer}{dot}{fraction.rstrip('0')}".rstrip(".")


def numeric_anchors(text: str) -> set[str]:
    """Numbers in ``text``, normalised ("1,500" -> "1500", "05" -> "5", "2.50" -> "2.5")."""
    found: set[str] = set()
    for match in _NUMBER.finditer(text):
        token = match.group()
        if _THOUSANDS.fullmatch(token):
            found.add(_normalise_number(token.replace(",", "")))
        else:
            found.update(_normalise_number(part) for part in token.split(",") if part)
    return found


def name_anchors(text: str) -> set[str]:
    """Capitalised words and acronyms that do not start a sentence (likely names, terms)."""
    found: set[str] = set()
    for match in _NAME.finditer(text):
        word = match.group()
        before = text[: match.start()].rstrip()
        if len(word) < 2 or word in _NOT_NAMES or not before or before.endswith(_SENTENCE_END):
            continue
        found.add(word)
    return found


def lost_anchors(source: str, kept: str) -> set[str]:
    """Anchors of ``source`` (numbers, names) that do not appear in ``kept``."""
    kept_numbers = numeric_anchors(
        _NUMBER_WORD.sub(lambda m: _NUMBER_WORDS[m.group().lower()], kept)
    )
    kept_folded = kept.casefold()
    lost = {n for n in numeric_anchors(source) if n not in kept_numbers}
    lost.update(n for n in name_anchors(source) if n.casefold() not in kept_folded)
    return lost


def _facet_text(facet: FacetDraft) -> str:
    return "\n".join([facet.search_text, facet.anchor_text, *(p.search_text for p in facet.points)])


def chunk_line(chunk: Chunk) -> str:
    return f"{chunk.speaker}: {chunk.text}" if chunk.speaker else chunk.text


def restore_anchors(facet: FacetDraft, chunks: dict[str, Chunk]) -> FacetDraft:
    """Append, as points, the cited source lines whose numbers or names the facet lost."""
    kept = _facet_text(facet)
    added: list[PointDraft] = []
    for key in facet.sources:
        chunk = chunks.get(key)
        if chunk is None or not lost_anchors(chunk.text, kept):
            continue
        point = PointDraft(search_text=chunk_line(chunk), sources=[key])
        added.append(point)
        kept = f"{kept}\n{point.search_text}"
    return facet.model_copy(update={"points": [*facet.points, *added]}) if added else facet


def _overlap(a: str, b: str) -> float:
    wa, wb = set(_WORDS.findall(a.casefold())), set(_WORDS.findall(b.casefold()))
    return len(wa & wb) / (len(wa | wb) or 1)


def attach_uncited(
    facets: list[FacetDraft], keys: Sequence[str], chunks: dict[str, Chunk]
) -> list[FacetDraft]:
    """Lines of the event that no facet cites and whose anchors appear nowhere in the event
    are appended to the facet they share most words with."""
    if not facets:
        return facets
    cited = {k for f in facets for k in f.sources}
    out = list(facets)
    for key in keys:
        chunk = chunks.get(key)
        if key in cited or chunk is None:
            continue
        everything = "\n".join(_facet_text(f) for f in out)
        if not lost_anchors(chunk.text, everything):
            continue
        best = max(range(len(out)), key=lambda i: _overlap(chunk.text, _facet_text(out[i])))
        facet = out[best]
        out[best] = facet.model_copy(
            update={
                "points": [*facet.points, PointDraft(search_text=chunk_line(chunk), sources=[key])],
                "sources": [*facet.sources, key],
            }
        )
    return out


# ---------------------------------------------------------------------------------------------
# windows: what one call sees


@dataclass(frozen=True)
class Window:
    chunks: tuple[Chunk, ...]
    reference_time: datetime

    @property
    def keys(self) -> list[str]:
        return [c.key for c in self.chunks]


def _split(chunks: Sequence[Chunk], max_chars: int) -> Iterable[list[Chunk]]:
    current: list[Chunk] = []
    size = 0
    for chunk in chunks:
        length = len(chunk.text) + 16
        section_changes = bool(current) and chunk.section != current[-1].section
        if current and (size + length > max_chars or (section_changes and size > max_chars // 2)):
            yield current
            current, size = [], 0
        current.append(chunk)
        size += length
    if current:
        yield current


def plan_windows(doc: ParsedDocument, max_chars: int) -> list[Window]:
    """One window per dialog session (or per text), split where it exceeds ``max_chars``."""
    groups: list[tuple[list[Chunk], datetime]] = []
    if doc.sessions:
        seen: set[int] = set()
        for session in doc.sessions:
            members = [doc.chunks[i] for i in session.chunk_indexes if 0 <= i < len(doc.chunks)]
            seen.update(session.chunk_indexes)
            groups.append((members, session.started_at or doc.reference_time))
        rest = [c for i, c in enumerate(doc.chunks) if i not in seen]
        if rest:
            groups.append((rest, doc.reference_time))
    else:
        groups.append((list(doc.chunks), doc.reference_time))
    return [
        Window(tuple(part), when)
        for members, when in groups
        for part in _split(members, max_chars)
        if part
    ]


def render_lines(window: Window) -> str:
    lines: list[str] = []
    section: str | None = None
    for chunk in window.chunks:
        if chunk.section and chunk.section != section:
            lines.append(f"# {chunk.section}")
        section = chunk.section
        stamp = (
            f"({chunk.timestamp.isoformat(sep=' ', timespec='minutes')}) "
            if chunk.timestamp
            else ""
        )
        line = " ".join(chunk_line(chunk).split())  # one source line per chunk, always
        lines.append(f"[{chunk.key}] {stamp}{line}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# reply -> drafts


def _known(keys: Iterable[str], valid: set[str]) -> list[str]:
    return list(dict.fromkeys(k.strip("[] ") for k in keys if k.strip("[] ") in valid))


def _entities(event: LlmEvent) -> dict[str, EntityDraft]:
    out: dict[str, EntityDraft] = {}
    for ent in event.entities:
        key = canonical_name(ent.name)
        if not key or key in out:
            continue
        out[key] = EntityDraft(
            name=ent.name,
            description=ent.description or None,
            entity_type=ent.entity_type,
            role=ent.role or None,
            aliases=[a for a in dict.fromkeys(ent.aliases) if a.strip() and a != ent.name],
            types=[t for t in dict.fromkeys(x.strip().lower() for x in ent.labels) if t],
        )
    return out


def _procedures(event: LlmEvent, valid: set[str]) -> list[ProcedureDraft]:
    """The event's procedures with at least one step (steps cite known keys only)."""
    out: list[ProcedureDraft] = []
    for proc in event.procedures:
        steps = [
            StepDraft(text=st.text, sources=_known(st.sources, valid))
            for st in proc.steps
            if st.text.strip()
        ]
        if not steps:
            continue
        context = [
            ContextPointDraft(aspect=c.aspect, text=c.text)  # type: ignore[arg-type]
            for c in proc.context
            if c.text.strip()
        ]
        out.append(
            ProcedureDraft(name=proc.name, summary=proc.summary, steps=steps, context=context)
        )
    return out


def _facet(
    section: LlmSection, valid: set[str], chunks: dict[str, Chunk], ents: dict[str, EntityDraft]
) -> FacetDraft:
    points: dict[str, PointDraft] = {}
    for p in section.points:
        norm = normalise_text(p.text)
        if not norm or norm in points:
            continue
        sources = _known(p.sources, valid)
        evidence = " ".join(chunk_line(chunks[k]) for k in sources)
        points[norm] = PointDraft(
            search_text=p.text,
            sources=sources,
            description=evidence[:POINT_DESCRIPTION_MAX_CHARS] or None,
        )
    facet_entities: dict[str, EntityDraft] = {}
    for ref in section.entities:
        key = canonical_name(ref.name)
        if not key or key in facet_entities:
            continue
        known = ents.get(key)
        facet_entities[key] = EntityDraft(
            name=known.name if known else ref.name,
            description=known.description if known else None,
            entity_type=known.entity_type if known else None,
            role=ref.role or None,
        )
    sources = _known([*section.sources, *(k for p in points.values() for k in p.sources)], valid)
    return FacetDraft(
        facet_type=section.facet_type,
        search_text=section.title,
        anchor_text=section.content,
        description=section.content,
        points=list(points.values()),
        entities=list(facet_entities.values()),
        sources=sources,
    )


def _merge_same_title(facets: list[FacetDraft]) -> list[FacetDraft]:
    merged: dict[str, FacetDraft] = {}
    for facet in facets:
        key = normalise_text(facet.search_text)
        first = merged.get(key)
        if first is None:
            merged[key] = facet
            continue
        seen = {normalise_text(p.search_text) for p in first.points}
        merged[key] = first.model_copy(
            update={
                "anchor_text": f"{first.anchor_text}\n{facet.anchor_text}".strip(),
                "points": [
                    *first.points,
                    *(p for p in facet.points if normalise_text(p.search_text) not in seen),
                ],
                "entities": [
                    *first.entities,
                    *(
                        e
                        for e in facet.entities
                        if canonical_name(e.name)
                        not in {canonical_name(x.name) for x in first.entities}
                    ),
                ],
                "sources": list(dict.fromkeys([*first.sources, *facet.sources])),
            }
        )
    return list(merged.values())


def sectioned_summary(facets: Sequence[FacetDraft], max_chars: int = SUMMARY_MAX_CHARS) -> str:
    """The seed's 【title】content form, cut at a facet boundary (the first is always kept)."""
    parts: list[str] = []
    size = 0
    for facet in facets:
        part = f"【{facet.search_text}】{facet.anchor_text}"
        if parts and size + len(part) > max_chars:
            break
        parts.append(part[:max_chars])
        size += len(part) + 1
    return "\n".join(parts)


def to_drafts(reply: LlmExtraction, window: Window) -> list[EpisodeDraft]:
    """Turn a validated reply into episode drafts, with sources and anchors checked."""
    chunks = {c.key: c for c in window.chunks}
    valid = set(chunks)
    drafts: list[EpisodeDraft] = []
    for event in reply.events:
        ents = _entities(event)
        facets = _merge_same_title([_facet(s, valid, chunks, ents) for s in event.sections])
        facets = [restore_anchors(f, chunks) for f in facets]
        keys = _known([*event.sources, *(k for f in facets for k in f.sources)], valid)
        if not keys and len(reply.events) == 1:
            keys = window.keys
        facets = attach_uncited(facets, keys, chunks)
        drafts.append(
            EpisodeDraft(
                name=event.name,
                summary=sectioned_summary(facets),
                facets=facets,
                entities=list(ents.values()),
                procedures=_procedures(event, valid),
                sources=keys,
            )
        )
    return drafts


# ---------------------------------------------------------------------------------------------


class LlmExtractor:
    """Extracts episode drafts from a parsed document with an OpenAI-compatible chat model."""

    name = "llm"

    def __init__(self, client: LlmClient, *, max_chars_per_call: int = 12_000) -> None:
        self.client = client
        self.max_chars_per_call = max_chars_per_call

    def messages(self, doc: ParsedDocument, window: Window) -> list[dict[str, str]]:
        user = load_prompt(
            "extract_user",
            reference_time=window.reference_time.isoformat(timespec="minutes"),
            title=doc.title or doc.source,
            content_type=doc.content_type,
            lines=render_lines(window),
        )
        return [
            {"role": "system", "content": load_prompt("extract_system")},
            {"role": "user", "content": user},
        ]

    def _extract_window(
        self, doc: ParsedDocument, window: Window
    ) -> tuple[list[EpisodeDraft], Usage]:
        reply, usage = self.client.complete_json(
            self.messages(doc, window), LlmExtraction, "memflow_episodes"
        )
        return to_drafts(reply, window), usage

    def extract(self, doc: ParsedDocument) -> tuple[list[EpisodeDraft], Usage]:
        """Drafts for the whole document and the LLM usage it took; raises ExtractionError."""
        windows = plan_windows(doc, self.max_chars_per_call)
        if not windows:
            return [], Usage()
        if len(windows) == 1:
            results = [self._extract_window(doc, windows[0])]
        else:
            workers = min(len(windows), self.client.settings.max_concurrency)
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="memflow-llm") as pool:
                futures = [pool.submit(self._extract_window, doc, w) for w in windows]
                try:
                    results = [f.result() for f in futures]
                except BaseException:
                    for f in futures:
                        f.cancel()
                    raise
        # The model is not asked for times: a session's date, else the text's own title date.
        drafts = date_drafts([d for batch, _ in results for d in batch], doc)
        usage = sum((u for _, u in results), Usage())
        return drafts, usage


__all__ = [
    "LlmExtractor",
    "Window",
    "attach_uncited",
    "lost_anchors",
    "name_anchors",
    "numeric_anchors",
    "plan_windows",
    "restore_anchors",
    "sectioned_summary",
    "to_drafts",
]
