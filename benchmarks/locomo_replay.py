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
    python -m benchmarks.locomo_replay rank --ablations --write locomo-ablations
    python -m benchmarks.locomo_replay choose relevance_cutoff none,0.1,0.2 --write locomo-cutoff

``--write NAME`` writes docs/benchmarks/NAME.{json,md}; the page is :func:`markdown` of the json.
``choose`` picks a constant on the tune half by a fixed rule (:func:`choose`) and only then
measures the test half at the value chosen.
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
            hits, graph, *_ = run_tx(mem.engine, Tx(body))
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


# What each part of the shipped ranking adds (docs/benchmarks/locomo-ablations.md): the
# variants, each a RecallConfig override of the shipped default.
ABLATIONS: dict[str, dict[str, Any]] = {
    "shipped": {},
    "no_corroboration": {
        "second_point_weight": 0.0,
        "facet_support_weight": 0.0,
        "summary_support_weight": 0.0,
    },
    "no_window_support": {"facet_support_weight": 0.0},
    "no_second_point": {"second_point_weight": 0.0},
    "no_summary_support": {"summary_support_weight": 0.0},
    "no_expansion": {"expand_episodes": 0},
    "no_episode_prior": {"episode_prior_lambda": 0.0},
    "no_unit_rules": {
        "speaker_penalty": 0.0,
        "term_overlap_bonus": 0.0,
        "question_turn_penalty": 0.0,
    },
    "no_entity_specificity": {"entity_generic_cost": 0.0},
}
COLS = [f"evidence_recall@{b}" for b in locomo.BUDGETS] + ["episode_recall@1", "episode_recall@5"]
# The order in which ``choose`` compares two values of a constant on the tune half.
CHOICE_ORDER = (
    "evidence_recall@500",
    "evidence_recall@200",
    "evidence_recall@1000",
    "episode_recall@1",
)


def load_recording(path: Path) -> tuple[list[Recorded], dict[str, Any] | None]:
    """The recorded questions and the stamp of the run that recorded them (None for a
    recording written before recordings carried one)."""
    with path.open("rb") as fh:
        saved = pickle.load(fh)  # a file this tool wrote
    if isinstance(saved, dict):
        return list(saved["recorded"]), saved.get("stamp")
    return list(saved), None


def _recording_facts(path: Path, rec_stamp: dict[str, Any] | None) -> dict[str, Any]:
    keep = ("commit", "dirty", "date", "command")
    return {"file": path.name, "stamp": {k: rec_stamp.get(k) for k in keep} if rec_stamp else None}


def write_result(out: dict[str, Any], name: str, out_dir: Path) -> dict[str, Any]:
    common.write_json(out_dir / f"{name}.json", out)
    common.write_text(out_dir / f"{name}.md", markdown(out))
    return out


def variants_on_halves(
    recorded: Sequence[Recorded],
    variants: Sequence[tuple[str, RecallConfig]],
    settings: dict[str, Any],
) -> dict[str, Any]:
    """Every variant on each half (``rank --write``: the ablations of locomo.md)."""
    out: dict[str, Any] = {
        "stamp": common.stamp(settings, __file__),
        "kind": "variants",
        "splits": {},
        "variants": {n: cfg.model_dump(exclude_defaults=True) for n, cfg in variants},
    }
    for split in locomo.SPLITS:
        part = [r for r in recorded if r.split == split]
        if part:
            out["splits"][split] = {n: evaluate(part, cfg) for n, cfg in variants}
    return out


def _order_key(res: dict[str, Any]) -> tuple[float, ...]:
    return tuple(float(res["overall"][k]) for k in CHOICE_ORDER)


def choose(
    recorded: Sequence[Recorded],
    field: str,
    values: Sequence[Any],
    settings: dict[str, Any],
) -> dict[str, Any]:
    """Choose ``field`` among ``values`` on the tune half, then measure the test half at the
    value chosen only. The rule, fixed before any figure is seen: the highest tune-half figures
    compared in ``CHOICE_ORDER``; on a tie the shipped value when it is among the best, else
    the largest value (None, no limit, counting as the largest)."""
    shipped = RecallConfig().model_dump()[field]
    tune = [r for r in recorded if r.split == "tune"]
    test = [r for r in recorded if r.split == "test"]
    if not tune:
        raise SystemExit("the recording holds no tune-half question: record --split tune or all")
    curve = [(v, evaluate(tune, RecallConfig(**{field: v}))) for v in values]
    best = max(_order_key(res) for _, res in curve)
    tied = [v for v, res in curve if _order_key(res) == best]
    chosen = shipped if shipped in tied else max(tied, key=lambda v: (v is None, v or 0))
    out: dict[str, Any] = {
        "stamp": common.stamp(settings, __file__),
        "kind": "choice",
        "field": field,
        "shipped": shipped,
        "values": list(values),
        "rule": f"highest tune-half {' then '.join(CHOICE_ORDER)}; on a tie the shipped value, "
        "else the largest (None = no limit)",
        "tune": [{"value": v, **res} for v, res in curve],
        "chosen": chosen,
        "splits": {
            split: evaluate(part, RecallConfig(**{field: chosen}))
            for split, part in (("tune", tune), ("test", test))
            if part
        },
    }
    return out


def _head() -> list[str]:
    return [c.replace("evidence_recall", "ev").replace("episode_recall", "ep") for c in COLS] + [
        "multi-hop ev@500"
    ]


def _cells(res: dict[str, Any]) -> list[str]:
    """The figures of a row to four decimals, as evaluated (the choice compares them so)."""
    multi_hop = res.get("multi-hop", {}).get("evidence_recall@500")
    values = [res["overall"][c] for c in COLS] + [multi_hop]
    return [f"{v:.4f}" if v is not None else "" for v in values]


def markdown(out: dict[str, Any]) -> str:
    """The page of a ``--write`` result (variants on both halves, or a choice)."""
    st = out["stamp"]
    rec = st["settings"].get("recording", {})
    rec_st = rec.get("stamp") or {}
    made = f"`{st.get('command') or 'python -m benchmarks.locomo_replay'}`"
    lines: list[str]
    if out["kind"] == "choice":
        field = out["field"]
        lines = [
            f"# LoCoMo: `{field}` chosen on the tune half",
            "",
            f"Produced by {made}: a replay of the recorded episodic searches "
            f"(`benchmarks/locomo_replay.py`). Rule: {out['rule']}. Shipped before: "
            f"`{json.dumps(out['shipped'])}`; **chosen: `{json.dumps(out['chosen'])}`**.",
            "",
            f"## Tune half, every value ({out['tune'][0]['overall']['questions']} questions)",
            "",
            common.md_table(
                [field, *_head()],
                [[json.dumps(row["value"]), *_cells(row)] for row in out["tune"]],
            ),
            "",
            f"## Both halves at the chosen value ({field} = {json.dumps(out['chosen'])})",
            "",
            common.md_table(
                ["half", "questions", *_head()],
                [[s, r["overall"]["questions"], *_cells(r)] for s, r in out["splits"].items()],
            ),
        ]
    else:
        lines = [
            "# LoCoMo ranking ablations (replay)",
            "",
            f"Produced by {made}: each variant is the shipped `RecallConfig` with the fields "
            "below changed, replayed on the recorded searches of the LoCoMo store "
            "(`benchmarks/locomo_replay.py`; only the stages after the SQL vary).",
        ]
        for split, table in out["splits"].items():
            n = next(iter(table.values()))["overall"]["questions"]
            lines += ["", f"## {split.capitalize()} half ({n} questions)", ""]
            rows = [[v, *_cells(res)] for v, res in table.items()]
            lines.append(common.md_table(["variant", *_head()], rows))
        lines += ["", "## Variants", ""]
        lines += [f"- `{v}`: `{json.dumps(c)}`" for v, c in out["variants"].items()]
    lines += [
        "",
        "## Run",
        "",
        f"Recording `{rec.get('file')}` made at `{str(rec_st.get('commit') or 'unknown')[:12]}`"
        + (" (with uncommitted changes)" if rec_st.get("dirty") else "")
        + f" by `{rec_st.get('command') or 'python -m benchmarks.locomo_replay record'}`.",
        "",
        common.stamp_markdown(st),
    ]
    return "\n".join(lines) + "\n"


def parse_variant(text: str) -> tuple[str, RecallConfig]:
    name, _, overrides = text.partition("=")
    try:
        return name, RecallConfig(**json.loads(overrides or "{}"))
    except (json.JSONDecodeError, TypeError, ValueError) as exc:
        raise SystemExit(
            f"bad variant {text!r}: NAME={{json of RecallConfig fields}} ({exc})"
        ) from None


def compare(before: Sequence[Recorded], after: Sequence[Recorded]) -> dict[str, Any]:
    """Do two recordings hold the same search, question by question: the same preprocessed
    query, recall hits (distances included) and projected subgraph? (A change that should change
    no result: record before and after it, then compare.)"""

    def key(r: Recorded) -> tuple[str, str]:
        return (r.question.sample_id, r.question.text)

    old = {key(r): r for r in before}
    differ: dict[str, list[str]] = {"query": [], "hits": [], "graph": []}
    for r in after:
        o = old.get(key(r))
        if o is None:
            continue
        for part, same in (("query", o.pq == r.pq), ("hits", o.hits == r.hits),
                           ("graph", o.graph == r.graph)):  # fmt: skip
            if not same:
                differ[part].append(f"{r.question.sample_id}: {r.question.text}")
    both = sum(1 for r in after if key(r) in old)
    return {
        "questions_before": len(before),
        "questions_after": len(after),
        "compared": both,
        "identical": both - len({q for qs in differ.values() for q in qs}),
        "differ": {part: len(qs) for part, qs in differ.items()},
        "examples": {part: qs[:5] for part, qs in differ.items() if qs},
    }


def parse_value(text: str) -> Any:
    """A constant's value on the command line: JSON, with ``none`` for None."""
    return None if text.strip().lower() in ("none", "null") else json.loads(text)


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
    rank.add_argument(
        "--ablations", action="store_true", help="the committed ablation variants (ABLATIONS)"
    )
    rank.add_argument("--json", action="store_true", help="print the results as JSON")
    rank.add_argument(
        "--split",
        choices=("tune", "test", "all"),
        default="tune",
        help="the questions to replay: choose constants on tune only (default), report test",
    )
    pick = sub.add_parser("choose", help="choose a constant on the tune half, then measure test")
    pick.add_argument("field", help="a RecallConfig field")
    pick.add_argument("values", help="comma-separated values (JSON; none for None)")
    again = sub.add_parser("render", help="rewrite NAME.md from NAME.json (nothing is replayed)")
    again.add_argument("name", help="a result written by --write NAME")
    again.add_argument("--out", type=Path, default=common.DEFAULT_OUT)
    same = sub.add_parser("compare", help="do two recordings hold the same SQL results?")
    same.add_argument("before", type=Path)
    same.add_argument("after", type=Path)
    for p in (rank, pick):
        p.add_argument("--recording", type=Path, default=DEFAULT_RECORDING)
        p.add_argument(
            "--write",
            metavar="NAME",
            help="write NAME.{json,md} under --out: every variant (rank) on both halves",
        )
        p.add_argument("--out", type=Path, default=common.DEFAULT_OUT)
    args = ap.parse_args(argv)

    if args.command == "record":
        from memflow.embed.factory import make_embedder

        convs, _ = locomo.load(args.data)
        convs = [c for c in convs if args.split in ("all", locomo.split_of(c))]
        convs = convs[: args.conversations]
        embedder = locomo.CachedEmbedder(make_embedder(args.embedder))
        started = time.perf_counter()
        settings = {"split": args.split, "embedder": embedder.name, "data": args.data.name}
        rec_stamp = common.stamp(settings, __file__, argv)
        with Memory.open(args.database_url, home=args.home, embedder=embedder) as mem:
            locomo.ingest(mem, convs, args.sessions)
            recorded = record(mem, convs, args.questions)
        args.recording.parent.mkdir(parents=True, exist_ok=True)
        with args.recording.open("wb") as fh:
            saved = {"stamp": rec_stamp, "recorded": recorded}
            pickle.dump(saved, fh, protocol=pickle.HIGHEST_PROTOCOL)
        took = time.perf_counter() - started
        print(f"recorded {len(recorded)} questions in {took:.0f} s -> {args.recording}")
        return {"questions": len(recorded), "recording": str(args.recording)}

    if args.command == "render":
        return common.render_only(args.out, args.name, [], markdown)
    if args.command == "compare":
        res = compare(load_recording(args.before)[0], load_recording(args.after)[0])
        print(json.dumps(res, indent=2, ensure_ascii=False))
        return res
    recorded, rec_stamp = load_recording(args.recording)
    settings = {
        "recording": _recording_facts(args.recording, rec_stamp),
        "questions": len(recorded),
    }
    if args.command == "choose":
        values = [parse_value(v) for v in args.values.split(",")]
        res = choose(recorded, args.field, values, settings)
        if args.write:
            return write_result(res, args.write, args.out)
        print(markdown(res))
        return res
    variants = [parse_variant(v) for v in args.variants]
    if args.ablations:
        variants += [(n, RecallConfig(**c)) for n, c in ABLATIONS.items()]
    variants = variants or [("shipped", RecallConfig())]
    if args.write:
        return write_result(variants_on_halves(recorded, variants, settings), args.write, args.out)
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
