"""One search over several datasets: the query embedded once, each dataset searched by the
one-dataset pipeline (:func:`memflow.recall.search.search_body`) in one read transaction, and
the results merged into one ranked list, each carrying its dataset.

Isolation. Row-level security shows a statement the rows of the dataset the transaction is bound
to (``memflow.dataset_id``, read by ``memflow.readable_dataset()`` in every policy). The
transaction starts bound to none; before each dataset's search it is re-bound to that dataset
(``bind_dataset``: ``set_config(..., true)``, local to the transaction), and every statement of
that search also passes the dataset's id. So at every moment exactly one dataset of the list is
bound, no statement can read two, and no dataset outside the list is ever bound. The policies
stay one-dataset: no migration, and the psql view of a dataset is unchanged.

Ranking. A score is a cost on the raw cosine-distance scale of the one embedder all the datasets
share (the bonuses are shares of a dataset's spread and never take a score below its best raw
distance), so results are merged on the score itself. Per-dataset normalisation (min-max, ranks)
would give every dataset's best result the same score: a dataset holding only weak matches would
tie with the one holding the answer. Equal scores (to 1e-9) go to the dataset listed first, then
to its own rank. The context is the datasets' contexts merged in the same order (each dataset's
own order kept; the units that only fill the room after all the others) and packed again into the
budget by :func:`memflow.recall.render.pack_indexes`.
"""

from __future__ import annotations

import dataclasses
import math
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection

from memflow import trace
from memflow.db.queries import q
from memflow.db.steps import Body, Op, Tx
from memflow.embed.base import Embedder
from memflow.errors import EmbedderMismatch, InvalidInput
from memflow.recall.budget import honour_budget
from memflow.recall.options import SearchOptions
from memflow.recall.plan import SearchPlan
from memflow.recall.render import GROUP_SEPARATOR, SUMMARY_SEPARATOR, fill_start, pack_indexes
from memflow.recall.rows import BaselineRows, EpisodicRows, Fetched, ProceduralRows
from memflow.recall.search import finish_rows, plan_search, search_body
from memflow.recall.types import ContextUnit, SearchResponse, SearchResult
from memflow.store.datasets import check_same_embedder, lookup_op, validate_dataset_name
from memflow.text.tokens import token_counter

# How one dataset's summary/detail context joins its result contexts, by mode.
_RESULT_SEPARATOR = {"episodic": SUMMARY_SEPARATOR, "procedural": "\n\n"}


@dataclass(frozen=True)
class Target:
    """One dataset of a search: its name (what results carry) and id (what binds)."""

    name: str
    dataset_id: uuid.UUID


def dataset_names(datasets: Sequence[str]) -> list[str]:
    """The names to search, each once, in the order given; InvalidInput for none."""
    if isinstance(datasets, str):
        raise InvalidInput(
            f"datasets must be a list of names, not the string {datasets!r}: "
            f"pass datasets=[{datasets!r}]"
        )
    names = list(dict.fromkeys(validate_dataset_name(n) for n in datasets))
    if not names:
        raise InvalidInput("no datasets given: pass at least one name, e.g. datasets=['notes']")
    return names


def check_one_embedder(recorded: Sequence[tuple[str, str | None]], mine: str) -> None:
    """Refuse datasets written with different embedders (the query is embedded once), or with
    another than this store's; a dataset that records none holds no vectors yet."""
    models = {name: emb for name, emb in recorded if emb is not None}
    if len(set(models.values())) > 1:
        listing = ", ".join(f"{name!r} ({emb})" for name, emb in models.items())
        raise EmbedderMismatch(
            f"the datasets {listing} hold vectors of different embedders, and one search embeds "
            "the query once: search them in separate calls, each with its dataset's embedder"
        )
    for name, emb in models.items():
        check_same_embedder(name, emb, mine)


def _bind(conn: Connection, dataset_id: uuid.UUID) -> None:
    conn.execute(q("bind_dataset"), {"dataset_id": str(dataset_id)})


def fetch_body(
    targets: Sequence[Target], plan: SearchPlan
) -> Body[list[tuple[SearchPlan, Fetched]]]:
    """The read transaction: each dataset's search body under its own binding. Each dataset
    gets a copy of ``plan`` (its own timings; the query vector is shared)."""
    out: list[tuple[SearchPlan, Fetched]] = []
    for target in targets:
        ds = target.dataset_id
        yield lambda conn, ds=ds: _bind(conn, ds)  # type: ignore[misc]
        mine = dataclasses.replace(plan, timings=dict(plan.timings))
        out.append((mine, (yield from search_body(ds, mine))))
    return out


def search_op(embedder: Embedder, query: str, options: SearchOptions) -> Op[SearchResponse]:
    """One search over ``options.datasets``: each looked up and checked for the one embedder,
    the query planned and embedded once, one read transaction, then each dataset's pure stages,
    the merge and the budget (with its spans: :func:`traced`)."""
    names = dataset_names(options.datasets or [])
    return traced(_search_op(embedder, names, query, options), names, options)


def _search_op(
    embedder: Embedder, names: list[str], query: str, options: SearchOptions
) -> Op[SearchResponse]:
    found = []
    for name in names:
        found.append((yield from lookup_op(name, embedder.name, create=False)))
    check_one_embedder([(d.name, d.embedder) for d in found], embedder.name)
    targets = [Target(d.name, d.id) for d in found]
    plan = plan_search(embedder, query, options.model_copy(update={"datasets": None}))
    fetched = yield Tx(lambda: fetch_body(targets, plan), read=True)
    responses = [finish_rows(mine, got) for mine, got in fetched]
    merged = merge([t.name for t in targets], responses, plan)
    return honour_budget(merged, plan.options.budget_tokens)


# -------------------------------------------------------------------------------------- spans

# ``timings_ms`` holds the stages in the order they ran: the query's (before the transaction),
# then those of the transaction, then the pure ones after it, which start with the first of
# _AFTER; a stage the transaction gains (any name) lands in its group.
_BEFORE = ("preprocess", "embed")
_AFTER = ("index", "score", "render", "merge")


def traced(
    op: Op[SearchResponse], datasets: Sequence[str], options: SearchOptions
) -> Op[SearchResponse]:
    """``op`` (a search of ``datasets``) with its spans when tracing is on (:mod:`memflow.trace`,
    docs/traces.md): ``memflow.search`` under the caller's span, and a child per stage of the
    response's ``timings_ms`` placed in the phase that ran it, plus what no stage measured:
    ``lookup`` (each dataset looked up), ``plan`` (before the stages), ``transaction`` (the rest of
    the search's transaction: connection, binding, the cited documents, commit) and ``finish``."""
    attrs: trace.Attrs = {"memflow.datasets": list(datasets), "memflow.search.top_k": options.top_k}
    if len(datasets) == 1:
        attrs["memflow.dataset"] = datasets[0]
    return trace.op_spans("memflow.search", op, attrs, _describe)


def _describe(
    resp: SearchResponse, phases: list[trace.Phase]
) -> tuple[trace.Attrs, list[trace.Interval]]:
    start, end = phases[0].start, phases[-1].end
    txs = [p for p in phases if p.kind == "tx"]
    stages = [(k, v) for k, v in resp.timings_ms.items() if k != "total"]
    attrs: trace.Attrs = {
        "memflow.search.mode": resp.mode,
        "memflow.search.display": resp.display,
        "memflow.search.results": len(resp.results),
        "memflow.search.context_units": len(resp.context_units),
        **_row_counts(txs[-1].value if txs else None),
    }
    if not txs:  # (no search ran)
        return attrs, trace.end_to_end(stages, start, end)
    search, lookups = txs[-1], txs[:-1]
    out = [trace.Interval("lookup", p.start, p.end) for p in lookups]
    begin = lookups[-1].end if lookups else start
    cut = next((i for i, (k, _) in enumerate(stages) if k in _AFTER), len(stages))
    ran = stages[:cut]
    before = trace.end_to_end(
        [s for s in ran if s[0] in _BEFORE], begin, search.start, backwards=True
    )
    inside = trace.end_to_end([s for s in ran if s[0] not in _BEFORE], search.start, search.end)
    after = trace.end_to_end(stages[cut:], search.end, end)
    out += _rest("plan", begin, before[0].start if before else search.start) + before + inside
    out += _rest("transaction", inside[-1].end if inside else search.start, search.end) + after
    return attrs, out + _rest("finish", after[-1].end if after else search.end, end)


def _rest(name: str, start: int, end: int) -> list[trace.Interval]:
    """What no stage measured between ``start`` and ``end``, as a span (none when empty)."""
    return [trace.Interval(name, start, end)] if end > start else []


def _row_counts(fetched: object) -> trace.Attrs:
    """The rows the search's transaction returned, summed over the datasets."""
    each = [f for _, f in fetched] if isinstance(fetched, list) else [fetched]
    counts: dict[str, int] = {}
    for f in each:
        if not isinstance(f, Fetched):
            continue
        rows = f.rows
        if isinstance(rows, EpisodicRows):
            got = {
                "hits": len(rows.hits),
                "nodes": len(rows.graph.nodes),
                "edges": len(rows.graph.edges),
            }
        elif isinstance(rows, BaselineRows):
            got = {"units": len(rows.units)}
        elif isinstance(rows, ProceduralRows):
            got = {"procedures": len(rows.procedures)}
        for k, v in got.items():
            counts[k] = counts.get(k, 0) + v
    return {f"memflow.search.rows.{k}": v for k, v in counts.items()}


# ------------------------------------------------------------------------------------- merging


def _tagged(name: str, resp: SearchResponse) -> SearchResponse:
    return resp.model_copy(
        update={
            "results": [r.model_copy(update={"dataset": name}) for r in resp.results],
            "context_units": [u.model_copy(update={"dataset": name}) for u in resp.context_units],
        }
    )


@dataclass
class _Block:
    """A piece of one dataset's context (an episode group, a unit line, a result context)."""

    key: float
    source: int  # index of the dataset in the list
    pos: int
    text: str
    units: list[ContextUnit]

    @property
    def fill(self) -> bool:
        """Units that only fill the room (``ContextUnit.fill``): merged after all the others."""
        return bool(self.units) and all(u.fill for u in self.units)


def _unit_blocks(i: int, resp: SearchResponse) -> list[_Block]:
    """A ``highly_related`` context cut into its episode groups (episodic) or unit lines
    (baselines), each keyed by its episode's score; a block of no listed episode takes the key
    before it, so each dataset keeps its own order in the merge."""
    units = resp.context_units
    if resp.mode == "episodic":
        parts = resp.context.split(GROUP_SEPARATOR) if resp.context else []
        # (the units that only fill the room form groups of their own: memflow.recall.render)
        runs = list(dict.fromkeys((u.episode_id, u.fill) for u in units))
        order = [e for e, _ in runs]
        grouped = [[u for u in units if (u.episode_id, u.fill) == run] for run in runs]
    else:
        parts = resp.context.split("\n") if resp.context else []
        order, grouped = [u.episode_id for u in units], [[u] for u in units]
    if len(parts) != len(order):  # a unit's text holds the separator: keep the context whole
        parts, order, grouped = [resp.context], [None], [list(units)]
    scores = {r.episode_id: r.score for r in resp.results}
    key = resp.results[0].score if resp.results else math.inf
    blocks = []
    for pos, (text, episode, members) in enumerate(zip(parts, order, grouped, strict=True)):
        key = max(key, scores.get(episode, key)) if episode is not None else key
        blocks.append(_Block(key, i, pos, text, members))
    return blocks


def _result_blocks(
    results: Sequence[SearchResult], responses: Sequence[SearchResponse], names: Sequence[str]
) -> list[_Block]:
    """Summary and detail: the merged results' own contexts, in rank order."""
    blocks = []
    for r in results:
        i = names.index(r.dataset or "")
        units = [u for u in responses[i].context_units if u.episode_id == r.episode_id]
        if r.context:
            blocks.append(_Block(r.score, i, r.rank, r.context, units))
    return blocks


def merge(
    names: Sequence[str], responses: Sequence[SearchResponse], plan: SearchPlan
) -> SearchResponse:
    """One response from the datasets' responses (in the order of ``names``): results ranked
    by score, the contexts merged and packed into the budget (see the module docstring)."""
    tagged = [_tagged(n, r) for n, r in zip(names, responses, strict=True)]
    if len(tagged) == 1:
        return tagged[0]
    t = time.perf_counter()
    ranked = sorted(
        ((r, i) for i, resp in enumerate(tagged) for r in resp.results),
        key=lambda ri: (round(ri[0].score, 9), ri[1], ri[0].rank),
    )
    results = [
        r.model_copy(update={"rank": n})
        for n, (r, _) in enumerate(ranked[: plan.options.top_k], start=1)
    ]
    mode, display = plan.options.mode, plan.options.display
    if display == "highly_related" and mode != "procedural":
        blocks = sorted(
            (b for i, resp in enumerate(tagged) for b in _unit_blocks(i, resp)),
            key=lambda b: (b.fill, round(b.key, 9), b.source, b.pos),
        )
        budget = plan.options.budget_tokens
        separator = GROUP_SEPARATOR if mode == "episodic" else "\n"
    else:
        blocks = _result_blocks(results, tagged, names)
        budget, separator = plan.options.budget_tokens, _RESULT_SEPARATOR.get(mode, "\n")
    if budget is not None:
        counter = token_counter(plan.options.token_counter)
        items = [(n, counter(b.text), 0) for n, b in enumerate(blocks)]
        fill_from = fill_start([b.fill for b in blocks])
        kept = pack_indexes(items, budget, floor=plan.cfg.pack_ladder_floor, fill_from=fill_from)
        blocks = [blocks[n] for n in kept]
    timings = _timings(tagged, plan)
    timings["merge"] = round((time.perf_counter() - t) * 1000, 3)
    timings["total"] = round(sum(v for k, v in timings.items() if k != "total"), 3)
    return SearchResponse(
        query=tagged[0].query,
        mode=mode,
        display=display,
        results=results,
        timings_ms=timings,
        context=separator.join(b.text for b in blocks),
        context_units=[u for b in blocks for u in b.units],
        preprocessed=tagged[0].preprocessed,
        notes=list(
            dict.fromkeys(f"{n}: {x}" for n, r in zip(names, tagged, strict=True) for x in r.notes)
        ),
        token_counter=plan.options.token_counter,
    )


def _timings(responses: Sequence[SearchResponse], plan: SearchPlan) -> dict[str, float]:
    """Each stage's time summed over the datasets; the query was preprocessed and embedded once."""
    out: dict[str, float] = {}
    for resp in responses:
        for k, v in resp.timings_ms.items():
            out[k] = round(out.get(k, 0.0) + v, 3)
    out.update({k: v for k, v in plan.timings.items() if k in ("preprocess", "embed")})
    return out


__all__ = [
    "Target",
    "check_one_embedder",
    "dataset_names",
    "fetch_body",
    "merge",
    "search_op",
    "traced",
]
