"""Output assembly (retrieval.md section 8): results and context text in three display modes.

- ``summary``: ``[<time>] [<name>]\\n<summary>`` per episode, joined by ``\\n\\n---\\n\\n``.
- ``highly_related``: the evidence units (FacetPoints and facet texts with a score) of the result
  episodes, ranked by ``d(unit) + lambda * EpisodeScore(episode)``, packed into a token budget and
  grouped under their episode's header.
- ``detail``: the episode, its top facets with their points, and its top entities with edge texts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from memflow.recall.config import DisplayMode, RecallConfig
from memflow.recall.options import HIGHLY_RELATED_BUDGET
from memflow.recall.scoring import INF, BundleScorer, Evidence, RelationshipIndex
from memflow.recall.types import (
    Bundle,
    Citation,
    ContextUnit,
    GraphNode,
    Record,
    SearchResult,
    Subgraph,
    citations,
    source_keys,
    turn_keys,
)
from memflow.recall.unitrules import body_of, is_decision, is_small_talk
from memflow.text.tokens import TokenCounter, TokenCounterName, count_words
from memflow.text.tokens import token_counter as counter_of

SUMMARY_SEPARATOR = "\n\n---\n\n"
GROUP_SEPARATOR = "\n\n"
count_tokens = count_words  # the default counter (``SearchOptions.token_counter="words"``)


def _is_midnight(dt: datetime) -> bool:
    return (dt.hour, dt.minute, dt.second, dt.microsecond) == (0, 0, 0, 0)


def format_time(node: GraphNode) -> str | None:
    """The episode's mentioned time as a day, month, year or day range; else its created date."""
    start, end = node.time_start, node.time_end
    if start is None:
        return node.created_at.date().isoformat() if node.created_at else None
    if end is None or end <= start:
        return start.date().isoformat()
    if _is_midnight(start) and _is_midnight(end):
        if start.day == 1 and end.day == 1:
            months = (end.year - start.year) * 12 + end.month - start.month
            if months == 12 and start.month == 1:
                return str(start.year)
            if months == 1:
                return f"{start.year:04d}-{start.month:02d}"
        last = (end - timedelta(microseconds=1)).date()
        if last == start.date():
            return start.date().isoformat()
        return f"{start.date().isoformat()} – {last.isoformat()}"
    if end - start <= timedelta(days=1) and start.date() == end.date():
        return start.date().isoformat()
    return f"{start.date().isoformat()} – {end.date().isoformat()}"


def header(node: GraphNode | None, fallback: str = "") -> str:
    name = node.name if node is not None else fallback
    when = format_time(node) if node is not None else None
    return f"[{when}] [{name}]" if when else f"[{name}]"


def unit_header(node: GraphNode | None, config: RecallConfig) -> str:
    """The highly_related group header: ``[time] [name]``, or ``[time]`` alone when names are
    off (a rules-extracted name repeats the date and speakers that the turns already carry)."""
    if config.highly_related_names or node is None:
        return header(node)
    when = format_time(node)
    return f"[{when}]" if when else header(node)


def summary_context(node: GraphNode | None) -> str:
    body = (node.summary or "") if node is not None else ""
    return f"{header(node)}\n{body}".rstrip()


def facet_text(node: GraphNode) -> str:
    handle = node.search_text or node.name
    anchor = node.anchor_text or ""
    return f"{handle}: {anchor}" if anchor and anchor != handle else handle


def point_text(node: GraphNode) -> str:
    return node.search_text or node.name


# ------------------------------------------------------------------------------- highly_related


@dataclass(slots=True, unsafe_hash=True)
class EvidenceUnit(Record):  # (not frozen: memflow.recall.types.Record)
    node_id: UUID
    episode_id: UUID
    text: str
    rank_score: float  # d(unit) + lambda * EpisodeScore(episode)
    is_point: bool
    replaced: bool = False  # a fact replaced as of the search's time (GraphNode.replaced_at)
    outdated_by: UUID | None = None  # a newer statement of the search (memflow.recall.present)
    small_talk: bool = False  # a greeting or thanks only (RecallConfig.small_talk_last)
    fill: bool = False  # past the relevance cut-off: fills the room only (RecallConfig.fill_budget)

    def reranked(self, rank_score: float) -> EvidenceUnit:
        # Positional construction: several times faster than dataclasses.replace (a search
        # moves ~80 units back, _repeats_back).
        return EvidenceUnit(
            self.node_id, self.episode_id, self.text, rank_score, self.is_point, self.replaced,
            self.outdated_by, self.small_talk, self.fill,
        )  # fmt: skip


def evidence_units(
    bundles: Sequence[Bundle],
    index: RelationshipIndex,
    evidence: Evidence,
    config: RecallConfig,
    extra_distance: Mapping[UUID, float] | None = None,
) -> list[EvidenceUnit]:
    """Scored points (and facets without points) of the bundles' episodes, best first, one per
    node and text.

    rank = d(unit) + rules(unit) - decision(unit) + t(facet) + lambda * EpisodeScore(episode) + mu * d(best point
    of the unit's facet), with ``d`` the raw cosine distance and ``t`` the facet title rule: a
    unit's own similarity decides, the episode's evidence and the unit's topic window break
    near-ties (docs/benchmarks/locomo.md).
    ``extra_distance`` holds points that were not recalled but fetched with their exact distance
    for the best episodes (``expand_episodes``). With ``relevance_cutoff``, units ranked more than
    that behind the best one are left out (not replaced facts: they are shown marked); with
    ``fill_budget`` they follow all the others instead, in rank order, marked ``fill``: packed
    only into the room the others leave (:func:`pack_indexes`)."""
    extra = extra_distance or {}
    node_hits, unit_adjust, nodes = evidence.node_hits, evidence.unit_adjust, index.nodes
    candidates: list[EvidenceUnit] = []
    for b in bundles:
        prior = config.episode_prior_lambda * b.score
        # A question about the present: the episode moved ahead of one it outdates; its units
        # keep their own ranks (the statements themselves are ordered below).
        for f in index.facets_by_episode.get(b.episode_id, []):
            points = index.points_by_facet.get(f, [])
            # The facet itself first when it is shown (or has no points), then its points.
            first_point = 1 if config.highly_related_facets or not points else 0
            members = points if first_point == 0 else [f, *points]
            facet_best = INF  # the least raw distance of its recalled points
            for p in points:
                hit = node_hits.get(p)
                if hit is not None and hit.distance < facet_best:
                    facet_best = hit.distance
            title = evidence.facet_adjust.get(f, 0.0)
            for i, node_id in enumerate(members):
                hit = node_hits.get(node_id)
                d = hit.distance if hit is not None else extra.get(node_id, INF)
                node = nodes.get(node_id)
                if d == INF or node is None:
                    continue
                is_point = i >= first_point
                own = d + unit_adjust.get(node_id, 0.0) if is_point else d
                body = body_of(node.search_text or node.name, node.speaker)
                if is_point and config.decision_bonus and is_decision(body):
                    own -= config.decision_bonus
                chat = is_point and config.small_talk_last and is_small_talk(body)
                window = facet_best if facet_best < INF else d
                text = point_text(node) if is_point else facet_text(node)
                rank = own + title + prior + config.facet_prior_mu * window
                replaced = node.replaced_at is not None
                candidates.append(
                    EvidenceUnit(
                        node_id, b.episode_id, text, rank, is_point, replaced, small_talk=chat
                    )
                )
    best: dict[UUID, EvidenceUnit] = {}
    for unit in candidates:
        cur = best.get(unit.node_id)
        if cur is None or unit.rank_score < cur.rank_score:
            best[unit.node_id] = unit
    _present_first(best, evidence, config.present_ahead)
    ordered = sorted(best.values(), key=_unit_order)
    # The repeat move only reorders: whether a unit is padding is judged on its own score (a
    # second statement of one note's section is a fact of its own, never cut for sharing it).
    own_score = {u.node_id: u.rank_score for u in ordered}
    if config.repeat_turn_penalty:
        ordered = _repeats_back(ordered, index, config.repeat_turn_penalty)
    seen: set[str] = set()
    out: list[EvidenceUnit] = []
    rest: list[EvidenceUnit] = []
    cutoff = config.relevance_cutoff
    for u in ordered:
        # Padding: far less relevant than the best unit. A replaced fact is exempt: its
        # penalties put it behind what replaced it, and the context shows it marked with its
        # validity (memflow.recall.temporal).
        far = (
            cutoff is not None and out and own_score[u.node_id] > own_score[out[0].node_id] + cutoff
        )
        if far and not u.replaced:
            if config.fill_budget:
                rest.append(replace(u, fill=True))
            continue
        if u.text not in seen:
            seen.add(u.text)
            out.append(u)
    for u in rest:
        if u.text not in seen:
            seen.add(u.text)
            out.append(u)
    return out


def _unit_order(u: EvidenceUnit) -> tuple[bool, float, bool, str]:
    return (u.small_talk, round(u.rank_score, 9), not u.is_point, u.text)


def _repeats_back(
    ordered: Sequence[EvidenceUnit], index: RelationshipIndex, penalty: float
) -> list[EvidenceUnit]:
    """``ordered`` with every point that cites only turns a unit ahead of it already cites
    (another piece of one long turn) moved back by ``penalty``: a budget then holds more turns.
    Units without provenance keep their place."""
    cited: set[tuple[Any, str]] = set()
    out: list[EvidenceUnit] = []
    moved = False
    for u in ordered:
        node = index.nodes.get(u.node_id)
        keys = turn_keys(node.sources) if node is not None else frozenset()
        if u.is_point and keys and keys <= cited:
            u = u.reranked(u.rank_score + penalty)
            moved = True
        cited |= keys
        out.append(u)
    # (nothing moved: ``ordered`` is already in order, and sorting it again keeps it)
    return sorted(out, key=_unit_order) if moved else out


def _present_first(best: dict[UUID, EvidenceUnit], evidence: Evidence, step: float) -> None:
    """A question about the present (``evidence.outdated``): each statement a newer one of the
    search outdates is marked possibly outdated, and when it answers the question the newer
    takes the place of the first unit of its episode, just ahead of it: the context, grouped by
    episode in the order of their first units, then reads the newer value first. ``step``
    (``RecallConfig.present_ahead``) must survive the nine-place rounding of the unit order."""
    if not evidence.outdated:
        return
    first: dict[UUID, float] = {}
    for u in best.values():
        first[u.episode_id] = min(u.rank_score, first.get(u.episode_id, INF))
    for older, later in evidence.outdated.items():
        old = best.get(older)
        if old is None:
            continue
        if later.marked and not old.replaced:
            best[older] = old = replace(old, text=later.mark(old.text), outdated_by=later.newer)
        if not later.near:
            continue
        # The newer (with its source's other answers, "taken up") just ahead, in order.
        seq = [p for p in (later.order or (later.newer,)) if p in best]
        for i, p in enumerate(seq):
            new = best[p]
            ahead = first[old.episode_id] - step * (len(seq) - i) / len(seq)
            if new.rank_score > ahead:
                best[p] = replace(new, rank_score=ahead)
                first[new.episode_id] = min(first[new.episode_id], ahead)


# The packing rule's budget ladder starts at RecallConfig.pack_ladder_floor (the default where a
# caller packs without a config: benchmarks, tests).
_FLOOR: int = RecallConfig.model_fields["pack_ladder_floor"].default


def budget_ladder(budget: int, floor: int = _FLOOR) -> list[int]:
    """The 1-2-5 points from ``floor`` up to ``budget``, ascending (50, 100, 200, 500, 1000 …
    from a floor of 50)."""
    points: list[int] = []
    scale = 1
    while True:
        for digit in (1, 2, 5):
            point = digit * scale
            if point > budget:
                return points
            if point >= floor:
                points.append(point)
        scale *= 10


def pack_indexes(
    items: Sequence[tuple[object, int, int]],
    budget: int,
    *,
    shared_headers: bool = True,
    floor: int = _FLOOR,
    fill_from: int | None = None,
) -> list[int]:
    """The packing rule of every context (the library and benchmarks/locomo.py call it): which of
    ``items`` (group, tokens, header tokens), in rank order, go into ``budget`` tokens. A group's
    header is paid by its first packed item (``shared_headers``) or by every item. Returns the
    packed indexes in rank order.

    Monotonic: whatever is packed at a budget is packed at every larger one. Plain greedy packing
    (skip what does not fit) is not: at a larger budget, long units skipped before fit and push
    out the short ones after them. The rule: greedy at each point of :func:`budget_ladder`, each
    point extending the set of the one below it (nothing is removed); past the last point, the
    longest rank-order prefix of the remaining items that fits (stop at the first that does not).
    Proof: for budgets between the same two points the prefix grows with the budget; the prefix
    at a budget below the next point is what the greedy pass at that point takes first.

    ``fill_from``: the items from this index on only fill the room the ones before it leave. They
    are packed (by the same rule, into that room, their groups' headers paid again) only when
    every item before it is packed, so what comes first is what it is without them. Still
    monotonic: once every earlier item is packed it stays packed, with the same cost, and the
    room only grows with the budget."""
    cut = len(items) if fill_from is None else fill_from
    packed, used = _pack(items[:cut], budget, shared_headers, floor)
    if len(packed) < cut or cut == len(items):
        return packed
    rest, _ = _pack(items[cut:], budget - used, shared_headers, floor)
    return [*packed, *(cut + i for i in rest)]


def _pack(
    items: Sequence[tuple[object, int, int]], budget: int, shared_headers: bool, floor: int
) -> tuple[list[int], int]:
    """:func:`pack_indexes` without fill: the packed indexes and the tokens they cost."""
    opened: set[object] = set()
    packed: list[bool] = [False] * len(items)
    used = 0

    def extend(limit: int, *, stop: bool) -> None:
        nonlocal used
        for i, (group, tokens, header_tokens) in enumerate(items):
            if packed[i]:
                continue
            cost = tokens + (0 if shared_headers and group in opened else header_tokens)
            if used + cost > limit:
                if stop:
                    return
                continue
            used += cost
            opened.add(group)
            packed[i] = True

    for point in budget_ladder(budget, floor):
        extend(point, stop=False)
    extend(budget, stop=True)
    return [i for i, done in enumerate(packed) if done], used


def fill_start(fill: Sequence[bool]) -> int | None:
    """The index of the first unit that only fills the room (``fill_from`` of
    :func:`pack_indexes`), None when there is none."""
    return next((i for i, f in enumerate(fill) if f), None)


def pack_units(
    units: Sequence[EvidenceUnit],
    headers: Mapping[UUID, str],
    budget_tokens: int,
    counter: TokenCounter = count_tokens,
    floor: int = _FLOOR,
) -> list[tuple[UUID, list[EvidenceUnit]]]:
    """The units :func:`pack_indexes` packs, grouped by episode (an episode's header is paid by
    its first unit), in group order. The units that only fill the room (``EvidenceUnit.fill``, a
    suffix of ``units``) form groups of their own after the others."""
    items = [(u.episode_id, counter(u.text), counter(headers.get(u.episode_id, ""))) for u in units]
    fill_from = fill_start([u.fill for u in units])
    groups: dict[tuple[UUID, bool], list[EvidenceUnit]] = {}
    for i in pack_indexes(items, budget_tokens, floor=floor, fill_from=fill_from):
        groups.setdefault((units[i].episode_id, units[i].fill), []).append(units[i])
    return [(e, group) for (e, _), group in groups.items()]


# ---------------------------------------------------------------------------------------- detail


def _ranked(
    ids: Sequence[UUID], cost: Mapping[UUID, float], label: Mapping[UUID, str]
) -> list[UUID]:
    return sorted(ids, key=lambda i: (round(cost.get(i, INF), 9), label.get(i, "")))


_SPACES = re.compile(r"\s+")
_SECTION_LABEL = re.compile(r"^【[^】]*】")


def _covered(text: str, pieces: Sequence[str]) -> bool:
    """Whether ``text`` says nothing beyond ``pieces`` (whitespace and punctuation aside)."""
    rest = _SPACES.sub(" ", text)
    for piece in sorted(pieces, key=len, reverse=True):
        if piece:
            rest = rest.replace(_SPACES.sub(" ", piece).strip(), " ")
    return not any(ch.isalnum() for ch in rest)


def detail_context(e: UUID, scorer: BundleScorer) -> str:
    """The episode's header, its summary lines the facets below do not repeat (a line is left
    out when its text is said below or its "【title】" is a facet shown below), its best facets
    (the title, the facet text only where its points do not already say it, then the points) and
    its best entities with their edge texts: each fact once."""
    index, config = scorer.index, scorer.config
    nodes = index.nodes
    facets = index.facets_by_episode.get(e, [])
    facet_cost = {f: scorer.facet_cost(f).cost for f in facets}
    labels = {i: (n.search_text or n.name) for i, n in nodes.items()}
    blocks: list[list[str]] = []
    said: list[str] = []
    for f in _ranked(facets, facet_cost, labels)[: config.detail_max_facets]:
        if f not in nodes:
            continue
        points = index.points_by_facet.get(f, [])
        point_cost = {p: scorer.ev.unit(p) for p in points}
        texts = [
            point_text(nodes[p])
            for p in _ranked(points, point_cost, labels)[: config.detail_max_points]
            if p in nodes
        ]
        handle = nodes[f].search_text or nodes[f].name
        anchor = nodes[f].anchor_text or ""
        title = handle if not texts or _covered(anchor, [*texts, handle]) else facet_text(nodes[f])
        blocks.append([f"## {title}", *(f"- {t}" for t in texts)])
        said += [handle, anchor if title != handle or not texts else "", *texts]
    node = nodes.get(e)
    titles = {block[0][3:].split(": ", 1)[0] for block in blocks}
    summary = [
        line
        for line in ((node.summary or "") if node is not None else "").splitlines()
        if line.strip()
        and not _covered(_SECTION_LABEL.sub("", line), said)
        and not ((m := _SECTION_LABEL.match(line)) and m.group(0)[1:-1] in titles)
    ]
    lines = [header(node), *summary, *(line for block in blocks for line in block)]
    entities = index.entities_by_episode.get(e, [])
    entity_cost = {en: scorer.entity_cost(en) for en in entities}
    shown = [en for en in _ranked(entities, entity_cost, labels) if en in nodes]
    if shown and config.detail_max_entities:
        lines.append("Entities:")
        for en in shown[: config.detail_max_entities]:
            edges = sorted(index.edges_between(e, en), key=lambda x: x.edge_text)
            lines.append(f"- {edges[0].edge_text if edges else nodes[en].name}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------- assembly


def _episode_blocks(
    bundles: Sequence[Bundle],
    contexts: Mapping[UUID, str],
    budget_tokens: int | None,
    counter: TokenCounter = count_tokens,
    floor: int = _FLOOR,
) -> str:
    """Whole episode contexts in rank order; with a budget, the ones :func:`pack_indexes` packs
    (as ``highly_related`` packs units)."""
    blocks = [contexts[b.episode_id] for b in bundles]
    if budget_tokens is None:
        return SUMMARY_SEPARATOR.join(blocks)
    items = [(i, counter(block), 0) for i, block in enumerate(blocks)]
    packed = pack_indexes(items, budget_tokens, floor=floor)
    return SUMMARY_SEPARATOR.join(blocks[i] for i in packed)


def result_citations(bundle: Bundle, nodes: Mapping[UUID, GraphNode]) -> list[Citation]:
    """The provenance of a result: the chunks of its best point, else of its best facet, else
    the episode's first chunk (the projection reads one for every Episode)."""
    for node_id in (bundle.best_point_id, bundle.best_facet_id, bundle.episode_id):
        node = nodes.get(node_id) if node_id is not None else None
        if node is not None and node.sources:
            return citations(node.sources)
    return []


def render(
    bundles: Sequence[Bundle],
    subgraph: Subgraph,
    display: DisplayMode,
    config: RecallConfig,
    *,
    evidence: Evidence,
    index: RelationshipIndex | None = None,
    budget_tokens: int | None = None,
    token_counter: TokenCounterName = "words",
    units_out: list[ContextUnit] | None = None,
    unit_bundles: Sequence[Bundle] | None = None,
) -> tuple[list[SearchResult], str]:
    """SearchResults (in bundle order, ranks from 1) and the response-level context text.

    ``units_out``, when given, receives the evidence units packed into a ``highly_related``
    context (rank order, with their chunk keys) so callers can check provenance.
    ``unit_bundles`` (default ``bundles``) are the episodes whose units ``highly_related`` ranks."""
    index = index or RelationshipIndex.build(subgraph)
    nodes = subgraph.nodes
    counter = counter_of(token_counter)
    contexts: dict[UUID, str]
    if display == "summary":
        contexts = {b.episode_id: summary_context(nodes.get(b.episode_id)) for b in bundles}
        context = _episode_blocks(
            bundles, contexts, budget_tokens, counter, config.pack_ladder_floor
        )
    elif display == "highly_related":
        pool = bundles if unit_bundles is None else unit_bundles
        headers = {b.episode_id: unit_header(nodes.get(b.episode_id), config) for b in pool}
        units = evidence_units(pool, index, evidence, config, subgraph.unit_distances)
        budget = budget_tokens or HIGHLY_RELATED_BUDGET
        groups = pack_units(units, headers, budget, counter, config.pack_ladder_floor)
        if units_out is not None:
            packed = {u.node_id for _, group in groups for u in group}
            units_out.extend(
                ContextUnit(
                    node_id=u.node_id,
                    episode_id=u.episode_id,
                    kind="FacetPoint" if u.is_point else "Facet",
                    sources=source_keys(nodes[u.node_id].sources) if u.node_id in nodes else [],
                    citations=citations(nodes[u.node_id].sources) if u.node_id in nodes else [],
                    tokens=counter(u.text),
                    header_tokens=counter(headers.get(u.episode_id, "")),
                    outdated_by=u.outdated_by,
                    fill=u.fill,
                )
                for u in units
                if u.node_id in packed
            )
        blocks = ["\n".join([headers[e], *(u.text for u in group)]) for e, group in groups]
        context = GROUP_SEPARATOR.join(blocks)
        lines: dict[UUID, list[str]] = {}
        for e, group in groups:  # a result's context: its episode's packed units, fill included
            lines.setdefault(e, [headers[e]]).extend(u.text for u in group)
        contexts = {e: "\n".join(text) for e, text in lines.items()}
    else:
        scorer = BundleScorer(index, evidence, config)
        contexts = {b.episode_id: detail_context(b.episode_id, scorer) for b in bundles}
        context = _episode_blocks(
            bundles, contexts, budget_tokens, counter, config.pack_ladder_floor
        )
    results = [
        SearchResult(
            rank=i,
            episode_id=b.episode_id,
            name=nodes[b.episode_id].name if b.episode_id in nodes else "",
            score=b.score,
            best_path=b.best_path,
            best_facet_id=b.best_facet_id,
            best_point_id=b.best_point_id,
            best_entity_id=b.best_entity_id,
            path=b.path,
            context=contexts.get(b.episode_id, ""),
            time=format_time(nodes[b.episode_id]) if b.episode_id in nodes else None,
            citations=result_citations(b, nodes),
        )
        for i, b in enumerate(bundles, start=1)
    ]
    return results, context


__all__ = [
    "EvidenceUnit",
    "budget_ladder",
    "count_tokens",
    "detail_context",
    "evidence_units",
    "fill_start",
    "format_time",
    "header",
    "pack_indexes",
    "pack_units",
    "render",
    "result_citations",
    "summary_context",
]
