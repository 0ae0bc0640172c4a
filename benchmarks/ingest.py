"""Ingest throughput (benchmarks.md §3).

1. Storage side: synthetic episode drafts (~5 facets x ~4 points, ~5 entities shared with a Zipf
   degree) written with ``Dataset.add_episodes`` (plan + one transaction per document), with every
   vector computed beforehand (a lookup embedder serves them): nodes, edges and embeddings per
   second, the cost of planning and writing without the embedding model.
2. End to end: ``Dataset.memorize`` of synthetic two-speaker dialogs (plus the bundled samples)
   with the rules extractor and the local embedder (multilingual-e5-small; ``--quick`` uses the
   hash embedder): documents and turns per second.
3. Peak RSS of the process (``ru_maxrss``) and the RSS after each phase.
4. Long inputs, before and after (:mod:`benchmarks.ingest_long`): a generated long-turn chat and
   Markdown journal memorised by the base commit's code (``--base-tree``, a ``git worktree``) and
   by this tree's, side by side in one run. ``--long-only`` runs just this section, into its own
   ``ingest-long.json`` and ``ingest-long.md`` (one run, one stamp per file).

Run: ``python -m benchmarks.ingest [--quick] [--out DIR] [--base-tree DIR [--long-only]]``.
Each page is :func:`markdown` of its json; notes reach it only through ``--note``.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import common, ingest_long
from benchmarks.synth import WORDS as _WORDS
from memflow.drafts import EntityDraft, EpisodeDraft, FacetDraft, PointDraft
from memflow.embed.base import Embedder, Matrix, Vector
from memflow.embed.hash import HashEmbedder
from memflow.memory import Memory

_PEOPLE = ("Ana", "Ben", "Ines", "Kenji", "Lola", "Omar", "Priya", "Sven", "Tara", "Wei")
_PLACES = ("Lisbon", "Berlin", "Osaka", "Toronto", "Nairobi", "Lima", "Oslo", "Seoul")
TARGET_NODES_PER_S = 2000.0


class LookupEmbedder:
    """Vectors computed before the timed phase; unknown texts fall back to the hash embedder."""

    def __init__(self, vectors: dict[str, Vector], dim: int = 384) -> None:
        self.vectors = vectors
        self.fallback = HashEmbedder(dim)
        self.dim = dim
        self.name = self.fallback.name  # the store records the embedder; keep it compatible
        self.misses = 0

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        out = []
        for t in texts:
            v = self.vectors.get(t)
            if v is None:
                self.misses += 1
                v = self.fallback.embed_passages([t])[0]
            out.append(v)
        return np.stack(out)

    def embed_query(self, text: str) -> Vector:
        return self.fallback.embed_query(text)


def _words(rng: np.random.Generator, n: int) -> str:
    return " ".join(_WORDS[int(i)] for i in rng.integers(0, len(_WORDS), n))


def synthetic_drafts(
    rng: np.random.Generator, doc: int, episodes: int, entity_pool: int
) -> list[EpisodeDraft]:
    weights = 1.0 / np.arange(1, entity_pool + 1, dtype=np.float64) ** 1.1
    weights /= weights.sum()
    out = []
    for e in range(episodes):
        tag = f"{doc}.{e}"
        names = sorted({f"Entity {int(i)}" for i in rng.choice(entity_pool, 5, p=weights)})
        ents = [EntityDraft(name=n, entity_type="thing", role="mentioned") for n in names]
        facets = []
        for f in range(int(np.clip(rng.poisson(5), 2, 9))):
            points = [
                PointDraft(search_text=f"{_words(rng, 12)} ({tag}.{f}.{p})", sources=[])
                for p in range(int(np.clip(rng.poisson(4), 1, 8)))
            ]
            facets.append(
                FacetDraft(
                    search_text=f"{_words(rng, 3)} {tag}.{f}",
                    anchor_text=_words(rng, 20),
                    points=points,
                    entities=[ents[int(rng.integers(len(ents)))]],
                )
            )
        out.append(
            EpisodeDraft(
                name=f"{_words(rng, 3)} {tag}",
                summary=f"{_words(rng, 16)} {tag}.",
                facets=facets,
                entities=ents,
            )
        )
    return out


def _draft_texts(drafts: list[EpisodeDraft]) -> list[str]:
    from memflow.store.plan import plan_drafts

    # Texts do not depend on the dataset: any id gives the same embed and edge texts.
    plan = plan_drafts(uuid.UUID(int=0), drafts)
    return [e.text for e in plan.embeds] + list(plan.edge_texts().values())


def storage_phase(url: str, docs: int, episodes_per_doc: int, bulk: bool) -> dict[str, Any]:
    rng = np.random.default_rng(11)
    pool = max(20, docs * episodes_per_doc // 2)
    batches = [synthetic_drafts(rng, d, episodes_per_doc, pool) for d in range(docs)]
    hasher = HashEmbedder(384)
    texts = list(dict.fromkeys(t for b in batches for t in _draft_texts(b)))
    vectors = dict(zip(texts, hasher.embed_passages(texts), strict=True))
    emb = LookupEmbedder(vectors)
    totals = {"episodes": 0, "facets": 0, "facet_points": 0, "entities": 0, "edges": 0}
    embeddings = 0
    with Memory.open(url, embedder=emb) as mem:
        ds = mem.dataset("bench-ingest-storage")
        started = time.perf_counter()
        if bulk:
            results = ds.import_episodes(batches)
        else:
            results = [ds.add_episodes(drafts) for drafts in batches]
        seconds = time.perf_counter() - started
        for res in results:
            for k in totals:
                totals[k] += res.counts.get(k, 0)
            embeddings += res.embeddings
        stats = ds.stats()
    nodes = totals["episodes"] + totals["facets"] + totals["facet_points"] + totals["entities"]
    return {
        "method": "Dataset.import_episodes (bulk)" if bulk else "Dataset.add_episodes per document",
        "documents": docs,
        "episodes_per_document": episodes_per_doc,
        "seconds": round(seconds, 3),
        "nodes": nodes,
        "edges": totals["edges"],
        "embeddings": embeddings,
        "nodes_per_s": round(nodes / seconds, 1),
        "edges_per_s": round(totals["edges"] / seconds, 1),
        "embeddings_per_s": round(embeddings / seconds, 1),
        "rows_per_s": round((nodes + totals["edges"] + embeddings) / seconds, 1),
        "embedder_misses": emb.misses,
        "stored": stats,
    }


def synthetic_dialog(rng: np.random.Generator, n: int, turns: int) -> str:
    a, b = (str(x) for x in rng.choice(_PEOPLE, 2, replace=False))
    place = str(rng.choice(_PLACES))
    day = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=int(rng.integers(0, 600)))
    lines = []
    for t in range(turns):
        who = a if t % 2 == 0 else b
        topic = _words(rng, 2)
        lines.append(
            f"{who}: About the {topic} in {place}, we agreed on {_words(rng, 6)} "
            f"before {day:%B} {int(rng.integers(1, 28))} (dialog {n}, turn {t})."
        )
    return "\n".join(lines) + "\n"


def e2e_phase(url: str, embedder: Embedder, docs: int, turns: int) -> dict[str, Any]:
    rng = np.random.default_rng(5)
    inputs: list[str | Path] = [synthetic_dialog(rng, i, turns) for i in range(docs)]
    samples = sorted((common.REPO / "memflow" / "samples").glob("*"))
    inputs += samples
    with Memory.open(url, embedder=embedder) as mem:
        ds = mem.dataset("bench-ingest-e2e")
        started = time.perf_counter()
        report = ds.memorize(inputs, extractor="rules", raise_on_error=False)
        seconds = time.perf_counter() - started
        stats = ds.stats()
    written = report.written
    chunk_turns = docs * turns
    return {
        "embedder": embedder.name,
        "documents": len(written),
        "failed": len(report.failed),
        "failures": [f"{d.source}: {d.error}"[:300] for d in report.failed],
        "dialog_documents": docs,
        "turns": chunk_turns,
        "samples": [p.name for p in samples],
        "seconds": round(seconds, 3),
        "documents_per_s": round(len(written) / seconds, 3),
        "turns_per_s": round(chunk_turns / seconds, 2),
        "embeddings": sum(d.embeddings for d in written),
        "stored": stats,
    }


def _notes(data: dict[str, Any]) -> list[str]:
    return ["", "## Notes", "", *[f"- {n}" for n in data["notes"]]] if data.get("notes") else []


def markdown(data: dict[str, Any]) -> str:
    if "storage" not in data:  # --long-only: ingest-long.json
        return "\n".join(
            [
                "# Ingest of long inputs, before and after",
                "",
                f"Produced by `{data['stamp'].get('command') or 'python -m benchmarks.ingest'}`.",
                "",
                *ingest_long.markdown_section(data["long_inputs"], data["stamp"]),
                *_notes(data),
            ]
        )
    e = data["end_to_end"]
    out = [
        "# Ingest throughput",
        "",
        f"Produced by `{data['stamp'].get('command') or 'python -m benchmarks.ingest'}`.",
        "",
        common.stamp_markdown(data["stamp"]),
        "",
        "## Storage side",
        "",
    ]
    out.append(
        "Synthetic drafts (~5 facets x ~4 points, ~5 entities with a Zipf degree), vectors "
        "computed beforehand (no model in the timed loop), each method on its own empty database: "
        "`Dataset.add_episodes` per document (one transaction each, HNSW indexes and foreign keys "
        "maintained row by row) and `Dataset.import_episodes` (one transaction, indexes rebuilt "
        "and foreign keys checked once at the end; the time includes the rebuild)."
    )
    rows = [data["storage"], *([data["storage_bulk"]] if "storage_bulk" in data else [])]
    out += ["", common.md_table(
        ["method", "documents", "nodes", "edges", "embeddings", "seconds", "nodes/s", "edges/s",
         "embeddings/s"],
        [[r.get("method", "Dataset.add_episodes per document"), r["documents"], r["nodes"],
          r["edges"], r["embeddings"], r["seconds"], r["nodes_per_s"], r["edges_per_s"],
          r["embeddings_per_s"]] for r in rows],
    ), ""]  # fmt: skip
    for r in rows:
        verdict = "PASS" if r["nodes_per_s"] >= TARGET_NODES_PER_S else "MISS"
        out.append(
            f"- {verdict}: target >= {TARGET_NODES_PER_S:,.0f} nodes/s "
            f"({r.get('method', 'per document')}: {r['nodes_per_s']:,.0f})"
        )
    out.append("")
    out += ["## End to end (`Dataset.memorize`, rules extractor)", ""]
    out.append(common.md_table(
        ["embedder", "documents", "turns", "embeddings", "seconds", "documents/s", "turns/s"],
        [[e["embedder"], e["documents"], e["turns"], e["embeddings"], e["seconds"],
          e["documents_per_s"], e["turns_per_s"]]],
    ))  # fmt: skip
    out += ["", "## Memory", "", common.md_table(
        ["peak RSS MB", "RSS after storage MB", "RSS after end to end MB"],
        [[data["peak_rss_mb"], data["rss_mb"]["after_storage"], data["rss_mb"]["after_end_to_end"]]],
    )]  # fmt: skip
    if data.get("long_inputs"):
        out += ["", *ingest_long.markdown_section(data["long_inputs"])]
    out += _notes(data)
    if e["failed"]:
        out += ["", f"{e['failed']} input(s) failed and are not counted:", ""]
        out += [f"- {f}" for f in e["failures"]]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description="memflow ingest throughput benchmark")
    ap.add_argument(
        "--database-url", help="server to create a scratch database on (default: embedded)"
    )
    ap.add_argument(
        "--home", type=Path, help="embedded server home (default ~/.cache/memflow-bench)"
    )
    ap.add_argument("--quick", action="store_true", help="tiny smoke run (the test suite uses it)")
    ap.add_argument("--embedder", help="end-to-end embedder spec (default local; quick: hash)")
    ap.add_argument("--documents", type=int, help="storage-side documents")
    ap.add_argument("--dialogs", type=int, help="end-to-end dialog documents")
    ap.add_argument("--turns", type=int, default=24, help="turns per dialog")
    ap.add_argument("--keep", action="store_true", help="keep the scratch database")
    common.page_args(ap, "ingest", common.DEFAULT_OUT)
    ap.add_argument("--base-tree", type=Path, help="base commit's worktree: runs the long inputs")
    ap.add_argument("--long-only", action="store_true", help="only the long inputs section")
    ap.add_argument("--long-sessions", type=int, default=3, help="long-turn chat sessions")
    ap.add_argument("--long-exchanges", type=int, default=4, help="question/answer pairs each")
    ap.add_argument("--journal-kb", type=int, default=300, help="size of the generated journal")
    ap.add_argument(
        "--locomo-sessions",
        type=int,
        default=0,
        help="also LoCoMo's first N sessions (short turns)",
    )
    args = ap.parse_args(argv)
    if args.long_only:
        return _long_only(args, argv)
    if args.render_only:
        return common.render_only(args.out, args.name, args.note, markdown)
    docs = args.documents or (3 if args.quick else 100)
    per_doc = 2 if args.quick else 10
    dialogs = args.dialogs or (2 if args.quick else 20)
    turns = 6 if args.quick else args.turns
    from memflow.embed.factory import make_embedder

    embedder = make_embedder(args.embedder or ("hash" if args.quick else "local"))
    settings = {"quick": args.quick, "storage_documents": docs, "episodes_per_document": per_doc,
                "dialogs": dialogs, "turns_per_dialog": turns, "embedder": embedder.name}  # fmt: skip
    admin = common.server_url(args.database_url, args.home)
    rss: dict[str, float] = {"start": common.rss_mb()}
    with common.scratch_database(admin, "mfbench_ingest_bulk", keep=args.keep) as url:
        bulk = storage_phase(url, docs, per_doc, bulk=True)
    with common.scratch_database(admin, "mfbench_ingest", keep=args.keep) as url:
        storage = storage_phase(url, docs, per_doc, bulk=False)
        rss["after_storage"] = common.rss_mb()
        e2e = e2e_phase(url, embedder, dialogs, turns)
        rss["after_end_to_end"] = common.rss_mb()
        settings["server"] = common.server_facts(url)
    data: dict[str, Any] = {
        "storage": storage,
        "storage_bulk": bulk,
        "end_to_end": e2e,
        "peak_rss_mb": common.peak_rss_mb(),
        "rss_mb": rss,
        "targets": {
            "nodes_per_s >= 2000": storage["nodes_per_s"] >= TARGET_NODES_PER_S,
            "bulk nodes_per_s >= 2000": bulk["nodes_per_s"] >= TARGET_NODES_PER_S,
        },
        "stamp": common.stamp(settings, __file__, argv),
        "notes": list(args.note),
    }
    if args.base_tree:
        data["long_inputs"] = _long(args, admin)
    common.write_json(args.out / f"{args.name}.json", data)
    common.write_text(args.out / f"{args.name}.md", markdown(data))
    return data


def _long(args: argparse.Namespace, admin: str) -> dict[str, Any]:
    work = args.out / ".work" if args.quick else Path("/tmp") / "memflow-bench-long"
    return ingest_long.long_phase(
        admin,
        args.base_tree,
        work,
        args.long_sessions,
        args.long_exchanges,
        args.journal_kb,
        args.locomo_sessions,
    )


def _long_only(args: argparse.Namespace, argv: Sequence[str] | None) -> dict[str, Any]:
    """Run the long inputs alone, into ingest-long.json and ingest-long.md."""
    if not args.base_tree:
        raise SystemExit("--long-only needs --base-tree (a worktree of the base commit)")
    settings = {"long_sessions": args.long_sessions, "long_exchanges": args.long_exchanges,
                "journal_kb": args.journal_kb, "locomo_sessions": args.locomo_sessions,
                "embedder": "local:multilingual-e5-small"}  # fmt: skip
    st = common.stamp(settings, __file__, argv)
    admin = common.server_url(args.database_url, args.home)
    data = {"stamp": st, "long_inputs": _long(args, admin), "notes": list(args.note)}
    common.write_json(args.out / "ingest-long.json", data)
    common.write_text(args.out / "ingest-long.md", markdown(data))
    return data


if __name__ == "__main__":
    main(sys.argv[1:])
