"""``memflow demo``: memorise the bundled sample memos and conversation, then search them."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from memflow.cli.base import GRAPH, command, counts_text, emit, open_memory
from memflow.cli.memorize import add_progress_option
from memflow.ingest.progress import renderer

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
QUESTIONS = (
    "API 流式返回改造有哪些约束？",
    "When is the read cut-over to PostgreSQL planned?",
    "What is the confirmation code of the Lisbon flights?",
    "Who reviews schema changes in the orders migration?",
)
HOW_TO = "How do we roll back a release?"  # asked with mode="procedural"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="memorise bundled sample memos and a conversation, then run a few searches",
        description="Memorises two engineering memos (Chinese, English), a release runbook and a "
        "two-session conversation into a dataset (default 'demo') with the rules extractor, then "
        "prints searches with their evidence paths and the runbook's steps (procedural mode). "
        "Runs on the embedded PostgreSQL unless --database-url is given.",
    )
    common(p)
    p.set_defaults(dataset="demo")
    p.add_argument("--reset", action="store_true", help="drop the demo dataset first")
    add_progress_option(p)
    p.set_defaults(handler="demo")


def _say(args: argparse.Namespace, text: str) -> None:
    if not args.json:
        print(text, flush=True)


@command("demo")
def _demo(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    _say(args, "memflow demo — episodic memory in PostgreSQL + pgvector\n")
    with open_memory(args) as mem:
        where = "embedded PostgreSQL" if mem.server is not None else "PostgreSQL"
        _say(args, f"store: {where} ({mem.url.split('?')[0]}), embedder {mem.embedder.name}")
        if args.reset:
            mem.drop_dataset(args.dataset)
        ds = mem.dataset(args.dataset)
        paths = sorted(str(p) for p in SAMPLES.iterdir() if p.suffix in {".md", ".json"})
        report = ds.memorize(
            paths, extractor="rules", on_progress=renderer(args.progress, sys.stderr)
        )
        _say(args, f"\nmemorised into dataset {args.dataset!r}:")
        for doc in report.documents:
            name = Path(doc.source).name
            if doc.status == "written":
                counts = counts_text(doc, GRAPH[:-1])
                _say(args, f"  {name:34} written: {counts}")
            else:
                _say(
                    args,
                    f"  {name:34} {doc.status}"
                    + (" (already memorised)" if doc.status == "skipped" else f": {doc.error}"),
                )
        answers = []
        for question in QUESTIONS:
            resp = ds.search(question, top_k=3)
            evidence = ds.search(question, top_k=3, display="highly_related", budget_tokens=60)
            answers.append(
                {
                    "question": question,
                    "response": resp.model_dump(mode="json"),
                    "evidence": evidence.context,
                }
            )
            if args.json:
                continue
            print(f"\nQ: {question}")
            for r in resp.results:
                print(
                    f"   {r.rank}. {r.name}  (cost {r.score:.3f}, lower is better; via {r.best_path})"
                )
            if resp.results:
                chain = " <- ".join(
                    f"{s.node_kind}: {s.text[:40]}"
                    for s in reversed(resp.results[0].path)
                    if s.kind == "node"
                )
                print(f"   evidence path: {chain}")
            print("   evidence:")
            for line in evidence.context.splitlines():
                if line.strip():
                    print(f"     {line[:110]}")
        how = ds.search(HOW_TO, top_k=1, mode="procedural")
        if not args.json:
            print(f"\nQ: {HOW_TO}  (mode procedural)")
            for line in how.context.splitlines():
                print(f"   {line}")
        elapsed = time.perf_counter() - started
    emit(
        args,
        {
            "dataset": args.dataset,
            "documents": report.to_json()["documents"],
            "searches": answers,
            "procedure": how.model_dump(mode="json"),
            "seconds": round(elapsed, 2),
        },
        f"\ndone in {elapsed:.1f} s. Try:\n"
        f'  memflow search "what did Ana and Ben book?" --dataset {args.dataset} --explain\n'
        f"  memflow stats --dataset {args.dataset}\n"
        f"  memflow procedures --dataset {args.dataset}\n"
        f'  psql "$(memflow db url)" -c "select tree from memflow.episode_tree where dataset = \'{args.dataset}\'"',
    )
    sys.stdout.flush()
