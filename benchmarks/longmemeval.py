"""LongMemEval_S retrieval quality without an LLM (issues 26, 28 and 29).

Each item of a deterministic slice of LongMemEval_S (files numbered 43 or more; tune/test by
sha256(question_id) parity; per half, the first ``--per-type`` non-abstention items of each
question type in hash order: benchmarks/lme_data.py) is its own dataset ``lme-<question_id>``,
its haystack memorised one session document at a time (benchmarks/lme_store.py). The ingested
store and an embedding cache persist under ``--home`` (default ~/.cache/memflow-lme), so a
search-only run takes minutes. Every system searches each question once with ``now`` = the
question's date and the query vector cached; we measure evidence turn recall at 500 / 1,000 /
2,000 tokens of the packed highly_related context (by provenance), session recall@5, episode
recall@1/@5, "latest evidence first" and as-of on the questions about facts that change, and p50
search time without the query embedding.

    .venv/bin/python -m benchmarks.longmemeval                 # ingest what is missing, search
    .venv/bin/python -m benchmarks.longmemeval --search-only   # search the store as it is
    .venv/bin/python -m benchmarks.longmemeval --fresh         # re-ingest what other code wrote
    .venv/bin/python -m benchmarks.longmemeval --quick --out /tmp/lme-quick   # synthetic smoke
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import text

from benchmarks import common
from benchmarks.embed_cache import DiskCachedEmbedder
from benchmarks.lme_data import QUESTION_TYPES, Item, choose, ingest_order, session_of
from benchmarks.lme_report import markdown
from benchmarks.lme_store import prepare
from benchmarks.locomo import System, episode_recall, packed_keys, ranked_episodes, systems
from memflow.db import engine as dbe
from memflow.memory import Dataset, Memory
from memflow.recall.config import RecallConfig, chosen_on
from memflow.recall.options import SearchOptions
from memflow.recall.preprocess import preprocess
from memflow.recall.render import fill_start, pack_indexes
from memflow.recall.types import SearchResponse

# Where a copy of the per-question files is kept when ../shared/data has none (outside the
# repository: the data never enters it).
CACHED_DATA = Path.home() / ".cache" / "memflow-lme-data" / "longmemeval_s"


def default_data() -> Path:
    """``../shared/data/longmemeval_s`` seen from the repository, or from the nearest folder
    above it that has one (a worktree under /work/wt/ finds /work/shared), else
    ``~/.cache/memflow-lme-data/longmemeval_s`` when it exists."""
    for parent in common.REPO.parents:
        found = parent / "shared" / "data" / "longmemeval_s"
        if found.is_dir():
            return found
    if CACHED_DATA.is_dir():
        return CACHED_DATA
    return common.REPO.parent / "shared" / "data" / "longmemeval_s"


DATA = default_data()
DEFAULT_HOME = Path.home() / ".cache" / "memflow-lme"
BUDGETS = (500, 1000, 2000)
UNLIMITED = 10**6  # one search per question; each budget is packed from its ranked units
LATEST_BUDGET = 500
SYSTEMS = ("vector", "lexical", "vector+rules", "episodic")
# The slice: chosen from the measured ingest cost so that both halves' slices ingest in at most
# ~3 hours of CPU on the 2-core machine (docs/benchmarks/longmemeval.md, "Slice").
PER_TYPE = 1
UPDATE_TYPES = ("knowledge-update", "temporal-reasoning")
AS_OF_TYPES = ("knowledge-update",)


@dataclass
class Tally:
    evidence: dict[int, list[float]] = field(default_factory=lambda: {b: [] for b in BUDGETS})
    session5: list[float] = field(default_factory=list)
    episode1: list[float] = field(default_factory=list)
    episode5: list[float] = field(default_factory=list)
    coverage5: list[float] = field(default_factory=list)
    coverage10: list[float] = field(default_factory=list)
    ms_no_embed: list[float] = field(default_factory=list)
    latest_first: list[float] = field(default_factory=list)
    as_of_first: list[float] = field(default_factory=list)
    as_of_hidden: list[float] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for b in BUDGETS:
            self.evidence[b] += other.evidence[b]
        for name in (
            "session5",
            "episode1",
            "episode5",
            "coverage5",
            "coverage10",
            "ms_no_embed",
            "latest_first",
            "as_of_first",
            "as_of_hidden",
        ):
            getattr(self, name).extend(getattr(other, name))

    def row(self) -> dict[str, Any]:
        out: dict[str, Any] = {f"evidence_recall@{b}": _mean(v) for b, v in self.evidence.items()}
        out["session_recall@5"] = _mean(self.session5)
        out["episode_recall@1"] = _mean(self.episode1)
        out["episode_recall@5"] = _mean(self.episode5)
        out["episode_coverage@5"] = _mean(self.coverage5)
        out["episode_coverage@10"] = _mean(self.coverage10)
        lat = common.percentiles(self.ms_no_embed)
        out["p50_ms_no_embed"], out["p95_ms_no_embed"] = lat["p50"], lat["p95"]
        out["questions"] = len(self.episode1)
        if self.latest_first:
            out["latest_first"] = _mean(self.latest_first)
            out["latest_first_questions"] = len(self.latest_first)
        if self.as_of_first:
            out["as_of_first"] = _mean(self.as_of_first)
            out["as_of_later_hidden"] = _mean(self.as_of_hidden)
            out["as_of_questions"] = len(self.as_of_first)
        return out


def _mean(vals: Sequence[float]) -> float | None:
    return round(sum(vals) / len(vals), 4) if vals else None


# ------------------------------------------------------------------------------------- measuring


def context_order(resp: SearchResponse, budget: int) -> list[set[str]]:
    """The chunk keys of each unit packed into ``budget`` tokens, in the order the context shows
    them: rank order for the baselines; for episodic, grouped under each episode's header in the
    order the episodes first appear, the units that only fill the room after the others
    (memflow.recall.render.pack_units)."""
    units = resp.context_units
    shared = resp.mode == "episodic"
    items = [(u.episode_id, u.tokens, u.header_tokens) for u in units]
    fill_from = fill_start([u.fill for u in units])
    packed = pack_indexes(items, budget, shared_headers=shared, fill_from=fill_from)
    if shared:
        groups: dict[object, list[int]] = {}
        for i in packed:  # (the units that only fill the room form groups of their own)
            groups.setdefault((units[i].episode_id, units[i].fill), []).append(i)
        packed = [i for idxs in groups.values() for i in idxs]
    return [set(units[i].sources) for i in packed]


def first_position(order: Sequence[set[str]], keys: set[str]) -> int | None:
    return next((n for n, unit in enumerate(order) if unit & keys), None)


def update_sessions(item: Item) -> tuple[set[str], set[str], datetime] | None:
    """For a question about a fact that changed: the latest answer session's evidence keys, the
    older answer sessions' evidence keys, and an ``as_of`` time between the two latest answer
    dates. None when the evidence is not in two answer sessions with different dates."""
    dated = item.dated_answer_sessions()
    if len(dated) < 2 or dated[-1].date <= dated[0].date:
        return None
    latest = dated[-1]
    older = [s for s in dated if s.date < latest.date]
    ev = item.evidence_by_session()
    as_of = older[-1].date + (latest.date - older[-1].date) / 2
    return set(ev[latest.index]), {k for s in older for k in ev[s.index]}, as_of


def comes_first(order: Sequence[set[str]], wanted: set[str], other: set[str]) -> float:
    """1.0 when a unit citing ``wanted`` is in the context before any unit citing ``other``."""
    at = first_position(order, wanted)
    before = first_position(order, other)
    return float(at is not None and (before is None or at < before))


def _search(
    ds: Dataset, item: Item, system: System, now: datetime, as_of: datetime | None = None
) -> SearchResponse:
    return ds.search(
        item.question,
        mode=system.mode,
        display="highly_related",
        budget_tokens=UNLIMITED,
        config=RecallConfig(**system.config),
        now=now,
        as_of=as_of,
    )


def run_question(ds: Dataset, item: Item, system: System, episodes: dict[Any, int]) -> Tally:
    tally = Tally()
    t = time.perf_counter()
    resp = _search(ds, item, system, item.question_date)
    wall = (time.perf_counter() - t) * 1000
    tally.ms_no_embed.append(wall - resp.timings_ms.get("embed", 0.0))
    for b in BUDGETS if item.evidence else ():
        keys = packed_keys(resp, b)
        tally.evidence[b].append(sum(k in keys for k in item.evidence) / len(item.evidence))
    cited = {session_of(c.key) for r in resp.results[:5] for c in r.citations}
    tally.session5.append(float(bool(cited & item.answer_sessions)))
    by_rank = ranked_episodes(resp)
    ranked = [episodes.get(e) for e in by_rank]
    # Coverage (LoCoMo's episode recall): the share of the answer sessions in the top k, what a
    # question over several sessions needs.
    tally.coverage5.append(episode_recall(by_rank, episodes, item.answer_sessions, 5))
    tally.coverage10.append(episode_recall(by_rank, episodes, item.answer_sessions, 10))
    tally.episode1.append(float(bool(set(ranked[:1]) & item.answer_sessions)))
    tally.episode5.append(float(bool(set(ranked[:5]) & item.answer_sessions)))
    update = update_sessions(item) if item.question_type in UPDATE_TYPES else None
    if update is not None:
        latest, older, as_of = update
        tally.latest_first.append(comes_first(context_order(resp, LATEST_BUDGET), latest, older))
        if item.question_type in AS_OF_TYPES:
            past = _search(ds, item, system, as_of, as_of)
            order = context_order(past, LATEST_BUDGET)
            tally.as_of_first.append(comes_first(order, older, latest))
            tally.as_of_hidden.append(float(first_position(order, latest) is None))
    return tally


_EPISODE_KEYS = text(
    "SELECT DISTINCT nc.node_id, c.key FROM memflow.node_chunk nc "
    "JOIN memflow.node n ON n.dataset_id = nc.dataset_id AND n.id = nc.node_id "
    "JOIN memflow.chunk c ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id "
    "WHERE nc.dataset_id = :d AND n.kind = 'Episode'"
)


def episode_sessions(mem: Memory, ds: Dataset) -> dict[Any, int]:
    """Episode id -> session index, through provenance (an episode cites its session's turns)."""
    with dbe.transaction(mem.engine, ds.id) as conn:
        rows = conn.execute(_EPISODE_KEYS, {"d": ds.id}).all()
    out: dict[Any, int] = {}
    for r in rows:
        s = session_of(r.key)
        if s is not None:
            out[r.node_id] = min(s, out.get(r.node_id, s))
    return out


def evaluate(
    mem: Memory, slice_: dict[str, list[Item]], chosen: Sequence[System]
) -> tuple[dict[str, dict[str, dict[str, Tally]]], list[dict[str, Any]]]:
    """tallies[split][group][system] (group: "all" or a question type), per-item records."""
    groups = ("all", *QUESTION_TYPES)
    tallies = {
        split: {g: {s.name: Tally() for s in chosen} for g in groups}
        for split in ("tune", "test", "both")
    }
    records = []
    started, done = time.perf_counter(), 0
    total = sum(len(v) for v in slice_.values())
    for split, items in slice_.items():
        for item in items:
            ds = mem.dataset(item.dataset, create=False)
            episodes = episode_sessions(mem, ds)
            rec: dict[str, Any] = {
                "question_id": item.question_id,
                "split": split,
                "question_type": item.question_type,
            }
            for system in chosen:
                probe = run_question(ds, item, system, episodes)
                for sp in (split, "both"):
                    for g in ("all", item.question_type):
                        tallies[sp][g][system.name].add(probe)
                rec[system.name] = {k: v for k, v in probe.row().items() if "ms" not in k}
            records.append(rec)
            done += 1
            print(
                f"[longmemeval] searched {done}/{total} items "
                f"({time.perf_counter() - started:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
    return tallies, records


def embed_queries(embedder: DiskCachedEmbedder, items: Sequence[Item]) -> list[float]:
    """Every question's search text embedded once before the systems run (their latencies then
    exclude it); returns the milliseconds each took."""
    cfg = RecallConfig()
    took = []
    for item in items:
        pq = preprocess(
            item.question,
            item.question_date,
            SearchOptions().timezone,
            time_confidence_min=cfg.time_confidence_min,
        )
        t = time.perf_counter()
        embedder.embed_query(pq.vector_query)
        took.append((time.perf_counter() - t) * 1000)
    return took


# ------------------------------------------------------------------------------------------ main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--data", type=Path, default=None, help=f"item folder (default {DATA})")
    ap.add_argument(
        "--home",
        type=Path,
        default=None,
        help=f"store, embedding cache and ingest log (default {DEFAULT_HOME})",
    )
    ap.add_argument("--database-url", default=None, help="store in this PostgreSQL instead")
    ap.add_argument("--embedder", default="local", help="embedder spec (local, hash, ...)")
    ap.add_argument("--per-type", type=int, default=PER_TYPE, help="items per type and half")
    ap.add_argument("--split", choices=("tune", "test", "both"), default="both")
    ap.add_argument("--items", default="", help="only these question ids of the slice (a,b,...)")
    ap.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="embedding cache (default <home>/embeddings.sqlite)",
    )
    ap.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated system names")
    ap.add_argument(
        "--fresh", action="store_true", help="re-ingest the items written by other code"
    )
    ap.add_argument(
        "--keep-other",
        action="store_true",
        help="ingest only the missing items; keep those written by other code as they are",
    )
    ap.add_argument("--search-only", action="store_true", help="never ingest; search the store")
    ap.add_argument("--ingest-only", action="store_true", help="ingest, do not search")
    ap.add_argument(
        "--upgrade-store",
        action="store_true",
        help="let this tree migrate an existing store's schema",
    )
    common.page_args(ap, "longmemeval", common.DEFAULT_OUT)
    ap.add_argument(
        "--quick",
        action="store_true",
        help="smoke: a synthetic LongMemEval-shaped folder, hash embedder",
    )
    args = ap.parse_args(argv)
    if args.fresh and args.search_only:
        ap.error("--fresh and --search-only contradict each other")
    if args.quick:
        args.home = args.home or Path(tempfile.mkdtemp(prefix="lme-quick-"))
        if args.data is None:
            from benchmarks.lme_fixture import write_fixture

            args.data = args.home / "data"
            write_fixture(args.data)
        if args.embedder == "local":
            args.embedder = "hash"
        if args.out == common.DEFAULT_OUT:
            args.out = args.home / "out"
    args.data = args.data or DATA
    args.home = args.home or DEFAULT_HOME
    return args


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.render_only:
        return common.render_only(args.out, args.name, args.note, markdown)
    from memflow.embed.factory import make_embedder

    slice_ = choose(args.data, args.per_type)
    if args.split != "both":
        slice_ = {args.split: slice_[args.split]}
    if args.items:
        picked = {q.strip() for q in args.items.split(",") if q.strip()}
        slice_ = {k: [i for i in v if i.question_id in picked] for k, v in slice_.items()}
        unknown = picked - {i.question_id for v in slice_.values() for i in v}
        if unknown:
            raise SystemExit(f"--items: not in the slice: {', '.join(sorted(unknown))}")
    items = ingest_order(slice_)
    store = args.database_url or str(args.home / "store")
    new_store = args.database_url is None and not (args.home / "store").exists()
    cache_path = args.cache or args.home / "embeddings.sqlite"
    cache = DiskCachedEmbedder(make_embedder(args.embedder), cache_path)
    mem = Memory.open(
        args.database_url,
        home=args.home / "store",
        embedder=cache,
        auto_upgrade=bool(args.upgrade_store or new_store),
    )
    try:
        print(f"[longmemeval] {len(items)} items, store {store}", file=sys.stderr, flush=True)
        provenance = prepare(
            mem,
            cache,
            items,
            log=args.home / "ingest-log.jsonl",
            fresh=args.fresh,
            search_only=args.search_only,
            keep_other=args.keep_other,
        )
        if args.ingest_only:
            return provenance
        wanted = [s.strip() for s in args.systems.split(",") if s.strip()]
        chosen = [s for s in systems() if s.name in wanted]
        embed_ms = embed_queries(cache, items)
        tallies, records = evaluate(mem, slice_, chosen)
        res = results(args, tallies, records, chosen, provenance, slice_, embed_ms, store, argv)
        res["datasets"] = {i.question_id: mem.dataset(i.dataset).stats() for i in items}
        common.write_json(args.out / f"{args.name}.json", res)
        common.write_text(args.out / f"{args.name}.md", markdown(res))
        print(markdown(res), flush=True)
        return res
    finally:
        mem.close()
        cache.close()


def results(
    args: argparse.Namespace,
    tallies: dict[str, dict[str, dict[str, Tally]]],
    records: list[dict[str, Any]],
    chosen: Sequence[System],
    provenance: dict[str, Any],
    slice_: dict[str, list[Item]],
    embed_ms: list[float],
    store: str,
    argv: Sequence[str] | None = None,
) -> dict[str, Any]:
    default = RecallConfig()
    settings = {
        "data": "LongMemEval_S per-question files numbered >= 43"
        + (" (synthetic fixture)" if args.quick else ""),
        "data_folder": str(args.data),
        "embedder": args.embedder,
        "per_type": args.per_type,
        "split_rule": "tune when int(sha256(question_id)) is even, else test",
        "slice_rule": "per half, non-abstention items in sha256(question_id) order, the first "
        f"{args.per_type} of each question type",
        "budgets_tokens": list(BUDGETS),
        "token_count": "memflow.recall.render.count_tokens: whitespace words, CJK chars / 2",
        "now": "the question's question_date",
        "query_embedding_ms": common.percentiles(embed_ms),
        "recall_config_default": default.model_dump(),
        "recall_config_chosen_on": {k: chosen_on(k) for k in default.model_dump()},
        "database": "external" if args.database_url else "embedded",
        "store": store,
        "search_only": args.search_only,
    }
    return {
        "stamp": common.stamp(settings, __file__, argv),
        "splits": {
            split: {
                g: {name: t.row() for name, t in by_sys.items()}
                for g, by_sys in groups.items()
                if any(t.episode1 for t in by_sys.values())
            }
            for split, groups in tallies.items()
            if any(t.episode1 for t in groups["all"].values())
        },
        "slice": {
            split: [
                {
                    "question_id": i.question_id,
                    "question_type": i.question_type,
                    "sessions": len(i.sessions),
                    "words": i.words,
                }
                for i in items
            ]
            for split, items in slice_.items()
        },
        "items": records,
        "systems": {s.name: {"mode": s.mode, "about": s.about, "config": s.config} for s in chosen},
        "store": provenance,
        "notes": list(args.note),
    }


if __name__ == "__main__":
    main(sys.argv[1:])
