"""``memflow memorize`` and ``memflow forget``."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memflow.bounds import escape_unsafe
from memflow.cli.base import GRAPH, command, counts_text, emit, escaping, open_memory, plural
from memflow.cli.filters import add_metadata_option, add_scope_option, json_object, scope_of
from memflow.errors import NotFound
from memflow.ingest.options import CONTENT_TYPE_CHOICES, EXTRACTOR_CHOICES, MemorizeOptions
from memflow.ingest.parse import SPEAKER_KEYS, TEXT_EXTENSIONS
from memflow.ingest.progress import PROGRESS_MODES, renderer
from memflow.ingest.report import DocumentReport, MemorizeReport
from memflow.store.forget import ForgetReport


def _iso(value: str) -> datetime:
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not an ISO-8601 time, e.g. 2024-05-08 or 2024-05-08T13:56:00Z"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: Any) -> None:
    p = sub.add_parser(
        "memorize",
        help="memorise files, directories or stdin ('-') into a dataset",
        description="Parse, extract, route and store each input document in one transaction. "
        "Memorizing the same content again is skipped. Exits 1 when any document failed. "
        f"A directory is read recursively: files ending in {', '.join(TEXT_EXTENSIONS)} (hidden "
        'ones skipped). Conversations are JSON: a list of messages, {"messages": [...]} or '
        '{"sessions": [{"messages": [...]}, ...]}; a message has "text" (or "content"), '
        f'its speaker in one of {", ".join(SPEAKER_KEYS)}, and optionally "ts" and "id". '
        "Dialog text is one 'Name: text' turn per line.",
    )
    common(p)
    p.add_argument("paths", nargs="+", metavar="PATH", help="file, directory, or - for stdin")
    defaults = MemorizeOptions()  # the one source of memorize's defaults
    p.add_argument("--content-type", choices=CONTENT_TYPE_CHOICES, default=defaults.content_type)
    p.add_argument(
        "--extractor",
        choices=EXTRACTOR_CHOICES,
        default=defaults.extractor,
        help="auto = llm when MEMFLOW_LLM_MODEL is set, else rules",
    )
    p.add_argument(
        "--reference-time",
        type=_iso,
        default=None,
        metavar="ISO",
        help="anchors relative dates (default: the file's modification time / session dates)",
    )
    p.add_argument(
        "--routing",
        choices=("auto", "on", "off"),
        default="auto",
        help="merge into existing episodes (auto: for texts, not for dialog sessions)",
    )
    add_scope_option(p)
    add_metadata_option(p)
    add_progress_option(p)
    p.set_defaults(handler="memorize")

    p = sub.add_parser(
        "forget",
        help="remove a document (and what only it supported) or one episode",
    )
    common(p)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--document", metavar="ID", help="document id (memorize --json prints it)")
    which.add_argument("--episode", metavar="ID", help="episode id (memflow show lists them)")
    p.set_defaults(handler="forget")


def add_progress_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--progress",
        choices=PROGRESS_MODES,
        default="auto",
        help="progress on stderr: auto = a bar on a terminal, else a plain line every 5 s; "
        "json = one event per line (for tools); none",
    )


def _line(d: DocumentReport) -> str:
    if d.status == "failed":
        error = str(d.error)
        named = error.startswith(f"{d.source}: ")  # the error names the file already
        return f"failed   {error if named else f'{d.source}: {error}'}"
    if d.status == "skipped":
        return f"skipped  {d.source} (already memorised as document {d.id})"
    merged = f", merged into {d.merged} existing" if d.merged else ""
    return f"written  {d.source}: {counts_text(d)}{merged} ({d.seconds:.2f} s)"


def memorize_text(report: MemorizeReport) -> str:
    """The summary for stdout: written and skipped documents, then the totals (failures go to
    stderr, see ``failure_text``)."""
    t = report.totals()
    lines = [_line(d) for d in report.documents if d.status != "failed"]
    lines.append(
        f"{t['written']} written, {t['skipped']} skipped, {t['failed']} failed; "
        f"{t['embeddings']} new embeddings, {t['llm_calls']} LLM calls, {t['tokens']} tokens"
    )
    return "\n".join(lines)


def failure_text(report: MemorizeReport) -> str:
    """One line per failed document and what the exit status means; empty when none failed."""
    failed = [_line(d) for d in report.documents if d.status == "failed"]
    if not failed:
        return ""
    n = len(failed)
    return "\n".join(
        [*failed, f"memflow: {n} document{'s' if n != 1 else ''} failed (exit status 1)"]
    )


@command("memorize")
def _memorize(args: argparse.Namespace) -> int:
    sources: list[Any] = [p if p == "-" else Path(p) for p in args.paths]
    routing = {"auto": None, "on": True, "off": False}[args.routing]
    on_progress = renderer(args.progress, escaping(sys.stderr))
    with open_memory(args) as mem:
        options = MemorizeOptions(
            content_type=args.content_type,
            extractor=args.extractor,
            reference_time=args.reference_time,
            routing=routing,
            raise_on_error=False,
            scope=scope_of(args.scope),
            metadata=json_object(args.metadata, "--metadata"),
        )
        try:
            ds, created = mem.dataset(args.dataset, create=False), False
        except NotFound:
            ds, created = mem.dataset(args.dataset), True
        try:
            report = ds.memorize(sources, options=options, on_progress=on_progress)
        except BaseException:  # interrupted (Ctrl-C) or failed: leave no empty dataset behind
            if created:
                mem.drop_dataset(args.dataset, only_if_empty=True)
            raise
        if created and not report.totals()["written"]:
            mem.drop_dataset(args.dataset, only_if_empty=True)  # a run that wrote nothing
    emit(args, report.to_json(), memorize_text(report))
    failures = failure_text(report)
    if failures:
        print(escape_unsafe(failures, "\n"), file=sys.stderr)
    return 0 if report.ok else 1


def forget_text(r: ForgetReport) -> str:
    what = f"episode {r.episode_id}" if r.episode_id else f"document {r.document_ids[0]}"
    removed = counts_text(r, ("documents", "chunks", *GRAPH))
    text = f"forgot {what}: removed {removed}"
    return text + (f"; restored {plural(r.restored, 'merged node')}" if r.restored else "")


@command("forget")
def _forget(args: argparse.Namespace) -> None:
    with open_memory(args) as mem:
        ds = mem.dataset(args.dataset, create=False)
        report = ds.forget(document_id=args.document, episode_id=args.episode)
    emit(args, report.to_json(), forget_text(report))


__all__ = ["add_progress_option", "forget_text", "memorize_text", "register"]
