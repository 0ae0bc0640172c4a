"""``memflow export`` and ``memflow import-dump``: a dataset to a dump and back (docs/export.md)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, TextIO

from memflow.cli.base import command, emit, open_memory, plural
from memflow.cli.memorize import add_progress_option
from memflow.errors import InvalidInput
from memflow.store.dump import DumpProgress, DumpProgressFn, ExportReport, ImportReport

_ABOUT = "docs/export.md describes the format: a header line, then one JSON record a line."


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: Any) -> None:
    p = sub.add_parser(
        "export",
        help="write a dataset to a dump (JSON lines): documents, chunks, graph, provenance, "
        "history, optionally vectors",
        description="Write everything dataset --dataset holds as one consistent snapshot: its "
        "documents (scope, metadata, versions), chunks, nodes, edges with their edge texts, "
        "provenance, validity and change history, and its vector rows (their embeddings with "
        "--with-vectors). The dump goes to stdout (redirect it) or to --output FILE; read it "
        "back with `memflow import-dump`. The summary goes to stderr when the dump is on stdout "
        f"(as JSON with --json), else to stdout. {_ABOUT}",
    )
    common(p)
    p.add_argument(
        "--with-vectors",
        action="store_true",
        help="include the embeddings: the import then embeds nothing and answers searches "
        "exactly as this store does (it needs the same embedder); without them the import "
        "embeds the texts with its own",
    )
    p.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        default=None,
        help="write the dump to FILE (whole, or not at all if the export fails) instead of stdout",
    )
    add_progress_option(p)
    p.set_defaults(handler="export")

    p = sub.add_parser(
        "import-dump",
        help="read a dump (from memflow export) into a new dataset, all or nothing",
        description="Read the dump FILE ('-' for stdin) into a new (or empty) dataset in one "
        "transaction: a dump that is cut short or inconsistent is refused with the line at "
        "fault, and nothing is written. The dump's vectors are kept when it has them and this "
        "store's embedder is the one that made them (else the import refuses; --re-embed embeds "
        "the texts instead). Under another name than the dump's, ids are derived again for the "
        f"new name, so later memorize calls find what was imported. {_ABOUT}",
    )
    common(p, dataset=False)
    p.add_argument("file", metavar="FILE", help="the dump, or - for stdin")
    p.add_argument(
        "--dataset",
        "-d",
        default=None,
        help="the new dataset's name (default: the name in the dump); it must not hold anything",
    )
    p.add_argument(
        "--re-embed",
        action="store_true",
        help="embed the texts with this store's embedder even when the dump has vectors (to "
        "move a dataset to another model)",
    )
    add_progress_option(p)
    p.set_defaults(handler="import_dump")


def dump_renderer(mode: str, stream: TextIO) -> DumpProgressFn | None:
    """Progress for ``--progress``: a redrawn line on a terminal (auto), a plain line every
    5 s and at each stage (auto off a terminal), every event as JSON, or none."""
    if mode == "auto":
        mode = "bar" if stream.isatty() else "plain"
    if mode == "none":
        return None
    every = {"bar": 0.125, "plain": 5.0}.get(mode, 0.0)
    last: dict[str, Any] = {"at": -float("inf"), "stage": None}

    def show(e: DumpProgress) -> None:
        now = time.monotonic()
        if e.stage == last["stage"] and e.stage != "done" and now - last["at"] < every:
            return
        last.update(at=now, stage=e.stage)
        if mode == "json":
            stream.write(e.to_json() + "\n")
        elif mode == "bar":
            stream.write("\r" + e.describe().ljust(79) + ("\n" if e.stage == "done" else ""))
        else:
            stream.write(e.describe() + "\n")
        stream.flush()

    return show


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MB" if n >= 2**20 else f"{n / 2**10:.1f} KB"


_NOUNS = {"node_source": "node source", "edge_source": "edge source", "change_log": "change"}


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(
        plural(n, _NOUNS.get(kind, kind).replace("_", " ")) for kind, n in counts.items() if n
    )


def export_text(r: ExportReport) -> str:
    vectors = "with vectors" if r.vectors else "without vectors"
    where = f" to {r.path}" if r.path else ""
    return (
        f"exported dataset {r.dataset!r}{where} ({vectors}): {_counts(r.counts)}; "
        f"{_size(r.bytes)} in {r.seconds:.1f} s"
    )


def import_text(r: ImportReport) -> str:
    named = f" (exported as {r.source_dataset!r})" if r.source_dataset != r.dataset else ""
    vectors = (
        "the dump's vectors kept"
        if r.vectors == "imported"
        else f"{r.embedded} texts embedded by this store's embedder"
    )
    ids = f"; {r.rekeyed} ids derived for the new name" if r.rekeyed else ""
    return (
        f"imported dataset {r.dataset!r}{named}: {_counts(r.counts)}; {vectors}{ids}; "
        f"{_size(r.bytes)} in {r.seconds:.1f} s"
    )


@command("export")
def _export(args: argparse.Namespace) -> None:
    to_stdout = args.output in (None, "-")
    if to_stdout and sys.stdout.isatty():
        raise InvalidInput(
            "the dump would be printed on this terminal: redirect it "
            f"(memflow export --dataset {args.dataset} > dump.jsonl) or pass --output FILE"
        )
    progress = dump_renderer(args.progress, sys.stderr)
    with open_memory(args) as mem:
        ds = mem.dataset(args.dataset, create=False)
        sink = sys.stdout.buffer if to_stdout else args.output
        sys.stdout.flush()
        report = ds.export(sink, with_vectors=args.with_vectors, progress=progress)
    if not to_stdout:
        emit(args, report.to_json(), export_text(report))
    elif args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False), file=sys.stderr)
    else:
        print(export_text(report), file=sys.stderr)


def _recorded_vectors(path: str) -> str | None:
    """The embedder spec of a dump file's vectors (None: none, or not readable here: the
    import itself says what is wrong)."""
    from memflow.embed.factory import spec_for_name

    try:
        with open(path, "rb") as fh:
            head = json.loads(fh.readline())
    except (OSError, ValueError):
        return None
    if not isinstance(head, dict) or not head.get("vectors"):
        return None
    embedder = head.get("embedder")
    return spec_for_name(embedder.get("name")) if isinstance(embedder, dict) else None


@command("import_dump")
def _import_dump(args: argparse.Namespace) -> None:
    chosen = args.embedder is not None or os.environ.get("MEMFLOW_EMBEDDER")
    if args.file != "-" and not chosen and not args.re_embed:
        args.embedder = _recorded_vectors(args.file)  # the model the dump's vectors come from
    progress = dump_renderer(args.progress, sys.stderr)
    source = sys.stdin.buffer if args.file == "-" else args.file
    with open_memory(args) as mem:
        report = mem.import_dump(
            source, dataset=args.dataset, re_embed=args.re_embed, progress=progress
        )
    emit(args, report.to_json(), import_text(report))


__all__ = ["dump_renderer", "export_text", "import_text", "register"]
