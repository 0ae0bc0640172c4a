"""LoCoMo retrieval quality without an LLM (benchmarks.md section 1).

Each conversation of ``../shared/data/locomo10.json`` becomes a dataset ``locomo-<sample_id>``;
each session is memorised as one dialog document with its date. For the questions of categories
1-4, every system runs on the same database with the same embedder, and we measure evidence recall
at context budgets of 200 / 500 / 1,000 tokens (``memflow.recall.render.count_tokens``), episode
recall@1/3/5/10 and search latency.

    .venv/bin/python -m benchmarks.locomo            # full run, writes docs/benchmarks/locomo.*
    .venv/bin/python -m benchmarks.locomo --quick    # 1 conversation, a few sessions (smoke)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import text

from benchmarks import common
from benchmarks.locomo_page import BUDGETS, KS, markdown
from memflow.db import engine as dbe
from memflow.embed.base import Embedder, Matrix, Vector
from memflow.ingest.options import MemorizeOptions
from memflow.ingest.parse import parse_input
from memflow.memory import Dataset, Memory
from memflow.recall.config import DisplayMode, RecallConfig, SearchMode
from memflow.recall.options import DEFAULTS
from memflow.recall.preprocess import PreprocessedQuery, preprocess
from memflow.recall.render import fill_start, pack_indexes
from memflow.recall.types import SearchResponse
from memflow.text.document import ParsedDocument

DATA = common.shared_data("locomo10.json")
DEFAULT_HOME = Path.home() / ".cache" / "memflow-locomo"
UNLIMITED = 10**6  # one search per question; each budget is packed from its ranked units
# Evaluation discipline: constants are chosen on the tune half (the first five conversations of
# the file, in file order) and reported on both; the test half is never used to choose anything.
SPLITS = ("tune", "test")
TUNE_CONVERSATIONS = 5
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_KEY = re.compile(r"^D(\d+):(\d+)$")
_LOOSE_KEY = re.compile(r"^D:?(\d+):(\d+)$")


# ------------------------------------------------------------------------------------------ data


@dataclass(frozen=True)
class Question:
    sample_id: str
    text: str
    category: int
    evidence: tuple[str, ...]  # validated turn keys, "D<session>:<turn>"

    @property
    def sessions(self) -> set[int]:
        return {session_of(k) for k in self.evidence}


@dataclass
class Conversation:
    sample_id: str
    sessions: list[tuple[int, str, list[dict[str, str]]]]  # (number, date text, turns)
    questions: list[Question] = field(default_factory=list)
    position: int = 0  # in the file: the first TUNE_CONVERSATIONS are the tune half

    @property
    def turn_keys(self) -> set[str]:
        return {t["id"] for _, _, turns in self.sessions for t in turns}

    def turn_texts(self) -> dict[str, str]:
        return {t["id"]: turn_text(t) for _, _, turns in self.sessions for t in turns}


def split_of(conv: Conversation) -> str:
    return "tune" if conv.position < TUNE_CONVERSATIONS else "test"


def session_of(key: str) -> int:
    m = _KEY.match(key)
    if m is None:
        raise ValueError(f"not a LoCoMo turn key: {key!r}")
    return int(m.group(1))


def split_evidence(raw: Iterable[str], known: set[str]) -> tuple[tuple[str, ...], list[str]]:
    """Evidence turn keys from the dataset's strings ("D8:6; D9:17" holds two), validated
    against the conversation's turns; returns (keys, rejected fragments)."""
    keys: list[str] = []
    bad: list[str] = []
    for item in raw:
        for part in re.split(r"[;,\s]+", str(item)):
            m = _LOOSE_KEY.match(part.strip())
            if not part.strip():
                continue
            if m is not None:  # "D:11:26" and "D30:05" name D11:26 and D30:5
                part = f"D{int(m.group(1))}:{int(m.group(2))}"
            if part in known:
                if part not in keys:
                    keys.append(part)
            else:
                bad.append(part)
    return tuple(keys), bad


def turn_text(turn: dict[str, Any]) -> str:
    body = str(turn.get("text") or "").strip()
    caption = str(turn.get("blip_caption") or "").strip()
    if caption:
        body = f"{body} [shares a photo: {caption}]".strip()
    return body


def load(path: Path, categories: Sequence[int] = (1, 2, 3, 4)) -> tuple[list[Conversation], int]:
    """Conversations with their questions; also the number of rejected evidence fragments."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    out: list[Conversation] = []
    rejected = 0
    for item in raw:
        conv = item["conversation"]
        numbers = sorted(
            int(k.split("_")[1])
            for k in conv
            if re.fullmatch(r"session_\d+", k) and isinstance(conv[k], list)
        )
        sessions = []
        for n in numbers:
            turns = [
                {"id": t["dia_id"], "speaker": t["speaker"], "text": turn_text(t)}
                for t in conv[f"session_{n}"]
                if turn_text(t)
            ]
            sessions.append((n, str(conv.get(f"session_{n}_date_time") or ""), turns))
        c = Conversation(str(item["sample_id"]), sessions, position=len(out))
        known = c.turn_keys
        for qa in item["qa"]:
            if int(qa["category"]) not in categories:
                continue
            keys, bad = split_evidence(qa.get("evidence", []), known)
            rejected += len(bad)
            if keys:
                c.questions.append(Question(c.sample_id, qa["question"], int(qa["category"]), keys))
        out.append(c)
    return out, rejected


# ---------------------------------------------------------------------------------------- ingest


class CachedEmbedder:
    """Vectors memoised by text: segmentation and the writer embed the same turns, and every
    system searches with the same query (embedded once, before the systems run: see
    ``embed_queries``)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self._cache: dict[str, Vector] = {}
        self._queries: dict[str, Vector] = {}

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            for t, v in zip(missing, self.inner.embed_passages(missing), strict=True):
                self._cache[t] = v
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])

    def embed_query(self, text: str) -> Vector:
        got = self._queries.get(text)
        if got is None:
            got = self._queries[text] = self.inner.embed_query(text)
        return got


def preprocessed(text: str, cfg: RecallConfig) -> PreprocessedQuery:
    """A question as the search preprocesses it with ``cfg`` (no reference time)."""
    return preprocess(
        text,
        None,
        DEFAULTS.timezone,
        time_confidence_min=cfg.time_confidence_min,
        short_query_chars=cfg.short_query_chars,
    )


def embed_queries(embedder: CachedEmbedder, convs: Sequence[Conversation]) -> list[float]:
    """Embed every question's search text once (milliseconds per query): the systems then
    search with cached vectors, so their latencies exclude the query embedding."""
    cfg = RecallConfig()
    took = []
    for conv in convs:
        for q in conv.questions:
            pq = preprocessed(q.text, cfg)
            t = time.perf_counter()
            embedder.embed_query(pq.vector_query)
            took.append((time.perf_counter() - t) * 1000)
    return took


def session_json(conv: Conversation, number: int, date: str, turns: list[dict[str, str]]) -> str:
    session: dict[str, Any] = {"messages": turns}
    if date:
        session["started_at"] = date
    title = f"{conv.sample_id} session {number}"
    return json.dumps({"title": title, "sessions": [session]}, ensure_ascii=False)


def session_documents(conv: Conversation, max_sessions: int | None) -> list[ParsedDocument]:
    """One dialog document per session, dated by the session's date text."""
    docs: list[ParsedDocument] = []
    for number, date, turns in conv.sessions[:max_sessions]:
        body = session_json(conv, number, date, turns)
        src = f"locomo/{conv.sample_id}/session_{number}"
        docs += parse_input(body, source=src, content_type="conversation")
    return docs


def ingest(
    mem: Memory, convs: Sequence[Conversation], max_sessions: int | None, derived: bool = True
) -> float:
    """Memorise every session with the rules extractor, without routing (one session = one
    episode). Idempotent: sessions already stored are skipped. ``derived``: MemorizeOptions'
    derived_vectors (edge vectors from their ends' vectors)."""
    started = time.perf_counter()
    for i, conv in enumerate(convs, start=1):
        ds = mem.dataset(f"locomo-{conv.sample_id}")
        report = ds.memorize(
            session_documents(conv, max_sessions),
            extractor="rules",
            routing=False,
            options=MemorizeOptions(derived_vectors=derived),
        )
        print(
            f"  ingest {i}/{len(convs)} {conv.sample_id}: {len(report.written)} sessions written, "
            f"{len(report.skipped)} already stored ({time.perf_counter() - started:.0f} s)",
            flush=True,
        )
    return time.perf_counter() - started


def episode_sessions(mem: Memory, ds: Dataset) -> dict[uuid.UUID, int]:
    """Episode id -> LoCoMo session number, through provenance (node_chunk -> chunk key)."""
    sql = text(
        "SELECT nc.node_id, min(c.key) AS key FROM memflow.node_chunk nc "
        "JOIN memflow.node n ON n.dataset_id = nc.dataset_id AND n.id = nc.node_id "
        "JOIN memflow.chunk c ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id "
        "WHERE nc.dataset_id = :d AND n.kind = 'Episode' GROUP BY nc.node_id"
    )
    with dbe.transaction(mem.engine, ds.id) as conn:
        rows = conn.execute(sql, {"d": ds.id}).all()
    return {r.node_id: session_of(r.key) for r in rows if _KEY.match(r.key)}


def supersessions(mem: Memory, convs: Sequence[Conversation]) -> dict[str, Any]:
    """FacetPoints the write path closed as replaced, per conversation. LoCoMo labels no fact as
    changing, so each one is a candidate false supersession (issue 12): listed old -> new."""
    sql = text(
        "SELECT o.search_text AS old, n.search_text AS new FROM memflow.node o "
        "JOIN memflow.node n ON n.dataset_id = o.dataset_id AND n.id = o.superseded_by "
        "WHERE o.dataset_id = :d AND o.kind = 'FacetPoint' ORDER BY o.search_text"
    )
    count = text("SELECT count(*) FROM memflow.node WHERE dataset_id = :d AND kind = 'FacetPoint'")
    per: dict[str, dict[str, int]] = {}
    listed: list[dict[str, str]] = []
    for conv in convs:
        ds = mem.dataset(f"locomo-{conv.sample_id}")
        with dbe.transaction(mem.engine, ds.id) as conn:
            points = int(conn.execute(count, {"d": ds.id}).scalar_one())
            rows = conn.execute(sql, {"d": ds.id}).all()
        per[conv.sample_id] = {"points": points, "superseded": len(rows)}
        listed += [{"conversation": conv.sample_id, "old": r.old, "new": r.new} for r in rows]
    points = sum(v["points"] for v in per.values())
    return {
        "points": points,
        "superseded": len(listed),
        "rate": round(len(listed) / points, 5) if points else 0.0,
        "conversations": per,
        "supersessions": listed,
    }


# -------------------------------------------------------------------------------------- systems


@dataclass(frozen=True)
class System:
    name: str
    mode: SearchMode
    about: str
    config: dict[str, Any] = field(default_factory=dict)
    display: DisplayMode = "highly_related"


def systems() -> list[System]:
    """The baselines, the shipped default and the ablations that show what each part adds."""
    d = RecallConfig()
    no_rules = {"speaker_penalty": 0.0, "term_overlap_bonus": 0.0, "question_turn_penalty": 0.0}
    return [
        System("vector", "vector", "plain pgvector top-k over turns (FacetPoints)"),
        System("lexical", "lexical", "Postgres full-text search over turns (chunks)"),
        System(
            "vector+rules",
            "vector",
            "vector with episodic's query-aware unit rules (speaker, shared terms, questions)",
            {"vector_unit_rules": True},
        ),
        System("episodic", "episodic", "shipped default: Dataset.search(q) with RecallConfig()"),
        System(
            "episodic/summary",
            "episodic",
            "display=summary: whole episode summaries in rank order (evidence by text, see above)",
            display="summary",
        ),
        System(
            "episodic/detail",
            "episodic",
            "display=detail: episode trees (best facets and points) in rank order (by text)",
            display="detail",
        ),
        System(
            "episodic/no_corroboration",
            "episodic",
            "EpisodeScore = the cheapest chain only (no second point, window or summary terms)",
            {
                "second_point_weight": 0.0,
                "facet_support_weight": 0.0,
                "summary_support_weight": 0.0,
            },
        ),
        System(
            "episodic/no_expansion",
            "episodic",
            "units only from the wide recall (no points fetched for the best episodes)",
            {"expand_episodes": 0},
        ),
        System(
            "episodic/no_episode_prior",
            "episodic",
            "lambda = mu = 0: units ranked by their own distance and rules only",
            {"episode_prior_lambda": 0.0, "facet_prior_mu": 0.0},
        ),
        System(
            "episodic/no_unit_rules",
            "episodic",
            "the query-aware unit rules off (in the units and in the point chains)",
            no_rules,
        ),
        System(
            "episodic/no_entity_specificity",
            "episodic",
            "entity chains pay no extra for entities linked to many episodes",
            {"entity_generic_cost": 0.0},
        ),
        System(
            f"episodic/lambda={d.episode_prior_lambda / 4:g}",
            "episodic",
            "a quarter of the episode prior in the unit ranking",
            {"episode_prior_lambda": d.episode_prior_lambda / 4},
        ),
    ]


# ------------------------------------------------------------------------------------- measuring


@dataclass
class Tally:
    evidence: dict[int, list[float]] = field(default_factory=lambda: {b: [] for b in BUDGETS})
    episode: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in KS})
    ms: list[float] = field(default_factory=list)
    ms_no_embed: list[float] = field(default_factory=list)

    def row(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for b, vals in self.evidence.items():
            out[f"evidence_recall@{b}"] = _mean(vals)
        for k, vals in self.episode.items():
            out[f"episode_recall@{k}"] = _mean(vals)
        lat = common.percentiles(self.ms)
        out["p50_ms"], out["p95_ms"] = lat["p50"], lat["p95"]
        lat = common.percentiles(self.ms_no_embed)
        out["p50_ms_no_embed"], out["p95_ms_no_embed"] = lat["p50"], lat["p95"]
        out["questions"] = len(self.ms)
        return out


def _mean(vals: Sequence[float]) -> float:
    return round(float(np.mean(vals)), 4) if vals else float("nan")


def packed_keys(resp: SearchResponse, budget: int) -> set[str]:
    """The chunk keys of the units the system packs into ``budget`` tokens.

    The search ran once with an unlimited budget, so ``context_units`` are all its units in rank
    order; this replays the system's own packing rule (memflow.recall.render.pack_indexes: a
    group header is paid once per episode for episodic, on every line for the baselines) for
    each budget."""
    units = resp.context_units
    items = [(u.episode_id, u.tokens, u.header_tokens) for u in units]
    keys: set[str] = set()
    fill_from = fill_start([u.fill for u in units])
    shared = resp.mode == "episodic"
    for i in pack_indexes(items, budget, shared_headers=shared, fill_from=fill_from):
        keys.update(units[i].sources)
    return keys


def evidence_recall(keys: set[str], evidence: Sequence[str]) -> float:
    """Share of the evidence turns that support a unit of the packed context (provenance)."""
    return sum(1 for k in evidence if k in keys) / len(evidence)


def ranked_episodes(resp: SearchResponse) -> list[uuid.UUID]:
    """Episodes best first: the bundles for episodic, else the episodes of the ranked units."""
    if resp.mode == "episodic":
        return [r.episode_id for r in resp.results]
    seen: dict[uuid.UUID, None] = {}
    for unit in resp.context_units:
        if unit.episode_id is not None:
            seen.setdefault(unit.episode_id, None)
    return list(seen)


def episode_recall(
    episodes: Sequence[uuid.UUID], sessions: dict[uuid.UUID, int], wanted: set[int], k: int
) -> float:
    found = {sessions.get(e) for e in episodes[:k]}
    return sum(1 for s in wanted if s in found) / len(wanted)


def _norm(text: str) -> str:
    return " ".join(text.split())


def text_recall(context: str, evidence: Sequence[str], texts: dict[str, str]) -> float:
    """Share of the evidence turns whose own text appears in the context (display modes without
    per-unit provenance: summary, detail)."""
    ctx = _norm(context)
    return sum(1 for k in evidence if texts.get(k) and _norm(texts[k]) in ctx) / len(evidence)


def run_question(
    ds: Dataset,
    q: Question,
    system: System,
    sessions: dict[uuid.UUID, int],
    tally: Tally,
    texts: dict[str, str],
) -> None:
    cfg = RecallConfig(**system.config)
    if system.display != "highly_related":
        # Whole episode blocks: one search per budget, evidence found by text containment.
        for budget in BUDGETS:
            t = time.perf_counter()
            r = ds.search(
                q.text, mode=system.mode, display=system.display, budget_tokens=budget, config=cfg
            )
            if budget == 500:
                resp, wall = r, (time.perf_counter() - t) * 1000
            tally.evidence[budget].append(text_recall(r.context, q.evidence, texts))
    else:
        t = time.perf_counter()
        resp = ds.search(
            q.text, mode=system.mode, display="highly_related", budget_tokens=UNLIMITED, config=cfg
        )
        wall = (time.perf_counter() - t) * 1000
        for budget in BUDGETS:
            tally.evidence[budget].append(evidence_recall(packed_keys(resp, budget), q.evidence))
    tally.ms.append(wall)
    tally.ms_no_embed.append(wall - resp.timings_ms.get("embed", 0.0))
    eps = ranked_episodes(resp)
    for k in KS:
        tally.episode[k].append(episode_recall(eps, sessions, q.sessions, k))


def evaluate(
    mem: Memory,
    convs: Sequence[Conversation],
    chosen: Sequence[System],
    max_questions: int | None = None,
) -> tuple[dict[str, Tally], dict[int, dict[str, Tally]], dict[str, dict[str, Tally]]]:
    """Every system on every question; tallies overall, per category and per split."""
    overall = {s.name: Tally() for s in chosen}
    by_cat = {c: {s.name: Tally() for s in chosen} for c in CATEGORIES}
    by_split = {name: {s.name: Tally() for s in chosen} for name in SPLITS}
    by_split_cat = {
        (name, c): {s.name: Tally() for s in chosen} for name in SPLITS for c in CATEGORIES
    }
    started = time.perf_counter()
    done = 0
    for conv in convs:
        ds = mem.dataset(f"locomo-{conv.sample_id}", create=False)
        sessions = episode_sessions(mem, ds)
        texts = conv.turn_texts()
        present = set(sessions.values())
        questions = [q for q in conv.questions if q.sessions <= present][:max_questions]
        for q in questions:
            for system in chosen:
                tallies = (
                    overall[system.name],
                    by_cat[q.category][system.name],
                    by_split[split_of(conv)][system.name],
                    by_split_cat[(split_of(conv), q.category)][system.name],
                )
                probe = Tally()
                run_question(ds, q, system, sessions, probe, texts)
                for tally in tallies:
                    _merge(tally, probe)
            done += 1
            if done % 100 == 0:
                print(f"  {done} questions ({time.perf_counter() - started:.0f} s)", flush=True)
    return overall, by_cat, {**by_split, **{f"{k[0]}/{k[1]}": v for k, v in by_split_cat.items()}}


def _merge(into: Tally, part: Tally) -> None:
    for b in BUDGETS:
        into.evidence[b] += part.evidence[b]
    for k in KS:
        into.episode[k] += part.episode[k]
    into.ms += part.ms
    into.ms_no_embed += part.ms_no_embed


# ---------------------------------------------------------------------------------------- output


def results_json(
    overall: dict[str, Tally],
    by_cat: dict[int, dict[str, Tally]],
    by_split: dict[str, dict[str, Tally]],
    chosen: Sequence[System],
    settings: dict[str, Any],
    argv: Sequence[str] | None = None,
) -> dict[str, Any]:
    return {
        "stamp": common.stamp(settings, __file__, argv),
        "overall": {name: t.row() for name, t in overall.items()},
        "splits": {
            split: {name: t.row() for name, t in tallies.items()}
            for split, tallies in by_split.items()
            if "/" not in split and any(t.ms for t in tallies.values())
        },
        "splits_by_category": {
            split: {
                f"{c} {CATEGORIES[c]}": {n: t.row() for n, t in by_split[f"{split}/{c}"].items()}
                for c in CATEGORIES
                if any(t.ms for t in by_split[f"{split}/{c}"].values())
            }
            for split in SPLITS
            if any(t.ms for t in by_split[split].values())
        },
        "by_category": {
            f"{c} {CATEGORIES[c]}": {name: t.row() for name, t in tallies.items()}
            for c, tallies in by_cat.items()
        },
        "systems": {s.name: {"mode": s.mode, "about": s.about, "config": s.config} for s in chosen},
    }


# ------------------------------------------------------------------------------------------ main


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--home", type=Path, default=DEFAULT_HOME, help="embedded server home")
    ap.add_argument("--database-url", default=None, help="use this PostgreSQL instead")
    ap.add_argument("--embedder", default="local", help="embedder spec (local, hash, ...)")
    ap.add_argument("--conversations", type=int, default=None, help="first N conversations")
    ap.add_argument("--sessions", type=int, default=None, help="first N sessions of each")
    ap.add_argument("--questions", type=int, default=None, help="first N questions of each")
    ap.add_argument("--systems", default="", help="comma-separated system names (default all)")
    ap.add_argument("--out", type=Path, default=common.DEFAULT_OUT)
    ap.add_argument("--name", default="locomo", help="result file stem under --out")
    ap.add_argument("--quick", action="store_true", help="smoke: 1 conversation, 3 sessions")
    ap.add_argument("--llm", action="store_true", help="also run the LLM-judged protocol")
    ap.add_argument("--note", action="append", default=[], help="a note for the page (repeatable)")
    ap.add_argument(
        "--embed-edge-texts",
        action="store_true",
        help="ingest with derived_vectors off (every edge text embedded, as before issue 14)",
    )
    ap.add_argument(
        "--render-only",
        action="store_true",
        help="rewrite NAME.md from NAME.json (with --note): nothing is run",
    )
    args = ap.parse_args(argv)
    if args.render_only:
        return common.render_only(args.out, args.name, args.note, markdown)
    if args.quick:
        args.conversations = args.conversations or 1
        args.sessions = args.sessions or 3
        args.questions = args.questions or 20
        if args.embedder == "local":
            args.embedder = "hash"
    from memflow.embed.factory import make_embedder

    convs, rejected = load(args.data)
    convs = convs[: args.conversations]
    embedder = CachedEmbedder(make_embedder(args.embedder))
    mem = Memory.open(args.database_url, home=args.home, embedder=embedder)
    try:
        print(
            f"ingest {len(convs)} conversations into {args.database_url or args.home}", flush=True
        )
        ingest_s = ingest(mem, convs, args.sessions, derived=not args.embed_edge_texts)
        wanted = {s.strip() for s in args.systems.split(",") if s.strip()}
        chosen = [s for s in systems() if not wanted or s.name in wanted]
        embed_ms = embed_queries(embedder, convs)
        print(f"search with {', '.join(s.name for s in chosen)}", flush=True)
        overall, by_cat, by_split = evaluate(mem, convs, chosen, args.questions)
        settings = {
            "data": str(args.data.name),
            "embedder": embedder.name,
            "conversations": len(convs),
            "sessions_per_conversation": args.sessions or "all",
            "questions_per_conversation": args.questions or "all",
            "categories": [1, 2, 3, 4],
            "rejected_evidence_fragments": rejected,
            "budgets_tokens": list(BUDGETS),
            "token_count": "memflow.recall.render.count_tokens: whitespace words, CJK chars / 2",
            "display": "highly_related",
            "episode_recall": "share of the evidence sessions whose episode is in the top k",
            "query_embedding_ms": common.percentiles(embed_ms),
            "latency": "per search, with the query vector cached (embedded once per question "
            "before the systems run; its cost is query_embedding_ms)",
            "recall_config_default": RecallConfig().model_dump(),
            "splits": f"tune = the first {TUNE_CONVERSATIONS} conversations of the file, test = the rest",
            "ingest_seconds_this_run": round(ingest_s, 1),
            "derived_vectors": not args.embed_edge_texts,
            "database": "external" if args.database_url else "embedded",
        }
        res = results_json(overall, by_cat, by_split, chosen, settings, argv)
        res["supersessions"] = supersessions(mem, convs)
        res["notes"] = list(args.note)
        if args.llm:
            from benchmarks.locomo_llm import run_llm_protocol

            res["llm_judged"] = run_llm_protocol(mem, convs, args.questions)
        common.write_json(args.out / f"{args.name}.json", res)
        common.write_text(args.out / f"{args.name}.md", markdown(res))
        print(markdown(res), flush=True)
        return res
    finally:
        mem.close()


if __name__ == "__main__":
    main(sys.argv[1:])
