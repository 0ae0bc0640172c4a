"""Fast iteration on LoCoMo ranking: record the SQL results once, re-rank them many times.

``record`` runs the SQL of the episodic search (``memflow.recall.search.retrieve_body``: recall hits
and the graph projection) once per question and pickles it with the preprocessed query. ``rank``
replays ``RecallConfig`` variants on the recording in pure Python (``respond``, the same code the
search runs after its SQL) and prints evidence recall @200/@500/@1000, overall and per category,
as ``benchmarks.locomo`` measures it: about 20 s per variant for the 1,536 questions instead of a
full run. Only the stages after the SQL can vary (bonuses, bundle scoring, unit ranking and
packing); a variant of ``wide_search_top_k``, ``ef_search`` or the projection caps needs a new
recording.

    python -m benchmarks.locomo_replay record                       # ~2 min, into ~/.cache/memflow-locomo
    python -m benchmarks.locomo_replay rank 'no_rules={"speaker_penalty": 0, "term_overlap_bonus": 0}'
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import common, locomo
from memflow.db.steps import Tx, run_tx
from memflow.memory import Memory
from memflow.recall.config import RecallConfig
from memflow.recall.options import SearchOptions
from memflow.recall.pipeline import respond
from memflow.recall.preprocess import PreprocessedQuery
from memflow.recall.search import plan_search, retrieve_body
from memflow.recall.types import Hit, Subgraph

DEFAULT_RECORDING = locomo.DEFAULT_HOME / "replay.pkl"


@dataclass
class Recorded:
    question: locomo.Question
    pq: PreprocessedQuery
    hits: list[Hit]
    graph: Subgraph
    sessions: dict[uuid.UUID, int]  # episode -> LoCoMo session (shared per conversation)
    split: str  # "tune" or "test" (benchmarks.locomo.split_of)


def record(
    mem: Memory, convs: Sequence[locomo.Conversation], max_questions: int | None = None
) -> list[Recorded]:
    out: list[Recorded] = []
    for conv in convs:
        ds = mem.dataset(f"locomo-{conv.sample_id}", create=False)
        sessions = locomo.episode_sessions(mem, ds)
        present = set(sessions.values())
        for q in [q for q in conv.questions if q.sessions <= present][:max_questions]:
            plan = plan_search(mem.embedder, q.text, SearchOptions(display="highly_related"))
            body = partial(retrieve_body, ds.id, plan)
            hits, graph, _ = run_tx(mem.engine, Tx(body))
            out.append(Recorded(q, plan.pq, hits, graph, sessions, locomo.split_of(conv)))
    return out


def evaluate(recorded: Sequence[Recorded], config: RecallConfig) -> dict[str, Any]:
    """Evidence recall of ``config``'s ranking at each budget and episode recall@1/@5, overall
    and per category."""
    keys = [f"evidence_recall@{b}" for b in locomo.BUDGETS] + [
        "episode_recall@1",
        "episode_recall@5",
    ]
    per: dict[str, dict[str, list[float]]] = {"overall": {k: [] for k in keys}}
    for r in recorded:
        graph = r.graph
        if config.expand_episodes == 0 and graph.unit_distances:
            # The recording holds the shipped expansion; without it, those points are no units.
            graph = replace(graph, unit_distances={})
        resp = respond(
            r.hits,
            graph,
            r.pq,
            config,
            SearchOptions(display="highly_related", budget_tokens=locomo.UNLIMITED),
        )
        eps = locomo.ranked_episodes(resp)
        values = [
            *(locomo.evidence_recall(locomo.packed_keys(resp, b), r.question.evidence)
              for b in locomo.BUDGETS),
            *(locomo.episode_recall(eps, r.sessions, r.question.sessions, k) for k in (1, 5)),
        ]  # fmt: skip
        cat = locomo.CATEGORIES[r.question.category]
        for group in ("overall", cat):
            for key, value in zip(keys, values, strict=True):
                per.setdefault(group, {k: [] for k in keys})[key].append(value)
    return {
        group: {k: round(float(np.mean(v)), 4) for k, v in vals.items()}
        | {"questions": len(vals[keys[0]])}
        for group, vals in per.items()
    }


def write_splits(
    recorded: Sequence[Recorded],
    variants: Sequence[tuple[str, RecallConfig]],
    name: str,
    recording: Path,
) -> dict[str, Any]:
    """Every variant on each half, written as docs/benchmarks/NAME.{json,md} (the ablation rows
    of locomo.md: what each part of the shipped ranking adds)."""
    out: dict[str, Any] = {"splits": {}, "variants": {}}
    for n, cfg in variants:
        out["variants"][n] = cfg.model_dump(exclude_defaults=True)
    for split in locomo.SPLITS:
        part = [r for r in recorded if r.split == split]
        if part:
            out["splits"][split] = {n: evaluate(part, cfg) for n, cfg in variants}
    st = common.stamp({"recording": recording.name, "questions": len(recorded)})
    out.update({k: st[k] for k in ("settings", "commit", "dirty", "date", "machine")})
    common.write_json(common.DEFAULT_OUT / f"{name}.json", out)
    cols = [f"evidence_recall@{b}" for b in locomo.BUDGETS] + [
        "episode_recall@1",
        "episode_recall@5",
    ]
    lines = [f"# LoCoMo ranking ablations (replay of `{name}`)", ""]
    for split, table in out["splits"].items():
        n = next(iter(table.values()))["overall"]["questions"]
        lines += [f"## {split.capitalize()} half ({n} questions)", ""]
        head = ["variant", *(c.replace("evidence_recall", "ev").replace("episode_recall", "ep")
                             for c in cols), "multi-hop ev@500"]  # fmt: skip
        rows = [
            [v, *(res["overall"][c] for c in cols), res["multi-hop"]["evidence_recall@500"]]
            for v, res in table.items()
        ]
        lines += [common.md_table(head, rows), ""]
    lines += ["## Variants", ""]
    lines += [f"- `{v}`: `{json.dumps(c)}`" for v, c in out["variants"].items()]
    lines += [
        "",
        "## Run",
        "",
        common.stamp_markdown(
            {k: out[k] for k in ("commit", "dirty", "date", "machine", "settings")}
        ),
    ]
    common.write_text(common.DEFAULT_OUT / f"{name}.md", "\n".join(lines) + "\n")
    return out


def parse_variant(text: str) -> tuple[str, RecallConfig]:
    name, _, overrides = text.partition("=")
    try:
        return name, RecallConfig(**json.loads(overrides or "{}"))
    except (json.JSONDecodeError, TypeError, ValueError) as exc:
        raise SystemExit(
            f"bad variant {text!r}: NAME={{json of RecallConfig fields}} ({exc})"
        ) from None


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = ap.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="run the SQL once per question and save it")
    rec.add_argument("--data", type=Path, default=locomo.DATA)
    rec.add_argument("--home", type=Path, default=locomo.DEFAULT_HOME)
    rec.add_argument("--database-url", default=None)
    rec.add_argument("--embedder", default="local")
    rec.add_argument("--conversations", type=int, default=None)
    rec.add_argument("--sessions", type=int, default=None)
    rec.add_argument("--questions", type=int, default=None)
    rec.add_argument("--recording", type=Path, default=DEFAULT_RECORDING)
    rec.add_argument(
        "--split", choices=("tune", "test", "all"), default="all", help="record only this half"
    )
    rank = sub.add_parser("rank", help="replay RecallConfig variants on a recording")
    rank.add_argument("variants", nargs="*", help="NAME='{\"field\": value}' (default: shipped)")
    rank.add_argument("--recording", type=Path, default=DEFAULT_RECORDING)
    rank.add_argument("--json", action="store_true", help="print the results as JSON")
    rank.add_argument(
        "--write",
        metavar="NAME",
        help="also write docs/benchmarks/NAME.{json,md}: every variant on the tune and the test half",
    )
    rank.add_argument(
        "--split",
        choices=("tune", "test", "all"),
        default="tune",
        help="the questions to replay: choose constants on tune only (default), report test",
    )
    args = ap.parse_args(argv)

    if args.command == "record":
        from memflow.embed.factory import make_embedder

        convs, _ = locomo.load(args.data)
        convs = [c for c in convs if args.split in ("all", locomo.split_of(c))]
        convs = convs[: args.conversations]
        embedder = locomo.CachedEmbedder(make_embedder(args.embedder))
        started = time.perf_counter()
        with Memory.open(args.database_url, home=args.home, embedder=embedder) as mem:
            locomo.ingest(mem, convs, args.sessions)
            recorded = record(mem, convs, args.questions)
        args.recording.parent.mkdir(parents=True, exist_ok=True)
        with args.recording.open("wb") as fh:
            pickle.dump(recorded, fh, protocol=pickle.HIGHEST_PROTOCOL)
        took = time.perf_counter() - started
        print(f"recorded {len(recorded)} questions in {took:.0f} s -> {args.recording}")
        return {"questions": len(recorded), "recording": str(args.recording)}

    with args.recording.open("rb") as fh:
        recorded = pickle.load(fh)  # a file this tool wrote
    variants = [parse_variant(v) for v in args.variants] or [("shipped", RecallConfig())]
    if args.write:
        return write_splits(recorded, variants, args.write, args.recording)
    if args.split != "all":
        recorded = [r for r in recorded if r.split == args.split]
    if not recorded:
        raise SystemExit(f"no recorded question in the {args.split} split of {args.recording}")
    results = {name: evaluate(recorded, cfg) for name, cfg in variants}
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        cats = [c for c in locomo.CATEGORIES.values() if c in next(iter(results.values()))]
        print(f"{'variant':32} {'@200':>6} {'@500':>6} {'@1000':>6} {'ep@1':>6} {'ep@5':>6}  "
              + " ".join(f"{c[:10]:>10}" for c in cats))  # fmt: skip
        for name, res in results.items():
            o = res["overall"]
            print(f"{name:32} " + " ".join(
                f"{o[f'evidence_recall@{b}']:6.3f}" for b in locomo.BUDGETS)
                + f" {o['episode_recall@1']:6.3f} {o['episode_recall@5']:6.3f}  " + " ".join(
                f"{res[c]['evidence_recall@500']:10.3f}" for c in cats))  # fmt: skip
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
