"""Import a dump into a new dataset (docs/export.md), all or nothing: one transaction stages the
records in temporary tables (a batch at a time, so memory stays flat), checks them, re-derives
the ids for the new dataset (:mod:`memflow.store.rekey`), writes every table with INSERT ...
SELECT, embeds the texts a dump without vectors lacks, and writes the vectors. A failure at any
point rolls all of it back, the dataset row included.

Written once as an operation (:mod:`memflow.db.steps`) for the sync and the async API.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memflow.bounds import check_dataset_name
from memflow.db.engine import sqlstate_of
from memflow.db.queries import q
from memflow.db.steps import Body, Op, Tx, sql_tx
from memflow.embed.base import Embedder, embed_passages_checked
from memflow.errors import (
    DatabaseError,
    EmbedderMismatch,
    EmbeddingDimensionMismatch,
    InvalidInput,
)
from memflow.store import citations
from memflow.store.datasets import dataset_uuid, validate_dataset_name
from memflow.store.dump import (
    RECORD_TYPES,
    TABLE_RECORDS,
    Clock,
    DumpFile,
    DumpProgressFn,
    DumpReader,
    Header,
    ImportReport,
    check_record,
)
from memflow.store.export import fetch_rows, scalar, statement
from memflow.store.rekey import rekey_body

BATCH_RECORDS = 1000  # records staged per statement...
BATCH_BYTES = 4 << 20  # ...or fewer when they are long (vectors): ~4 MB of JSON at most
VECTOR_LINES = 2000  # dump lines of vector rows written per statement (progress in between)


@contextmanager
def open_source(source: DumpFile) -> Iterator[DumpReader]:
    """A reader of ``source``: a path (read as bytes) or an open text or binary stream."""
    if not isinstance(source, str | os.PathLike):
        yield DumpReader(source)
        return
    path = Path(source)
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        raise InvalidInput(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InvalidInput(f"{path}: a directory, not a dump file") from None
    with fh:
        yield DumpReader(fh)


@dataclass
class _Import:
    """One import: where it writes and what it has seen so far."""

    name: str
    dataset_id: uuid.UUID
    header: Header
    keep_vectors: bool  # write the dump's vectors (else embed the texts here)
    embedder_name: str  # what the new dataset records
    clock: Clock
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(RECORD_TYPES, 0))
    batch: tuple[str, int, int] | None = None  # the record type and lines being staged


def import_op(
    embedder: Embedder,
    source: DumpFile,
    *,
    dataset: str | None = None,
    re_embed: bool = False,
    progress: DumpProgressFn | None = None,
) -> Op[ImportReport]:
    """Read the dump ``source`` into the new (or empty) dataset ``dataset`` (None: the name the
    dump gives). ``re_embed``: embed the texts with ``embedder`` even when the dump holds
    vectors."""
    if dataset is not None:
        validate_dataset_name(dataset)
    clock = Clock("import", progress)
    with open_source(source) as reader:
        header = reader.header()
        dataset = validate_dataset_name(dataset or header.dataset.name)
        target = yield sql_tx(
            lambda conn: conn.execute(q("import_target"), {"name": dataset}).one()
        )
        if target.dataset_id is None:  # a new dataset: its name follows the rules for new names
            check_dataset_name(dataset)
        keep = header.vectors and not re_embed
        if keep:
            _check_vectors(header, target.dim, embedder.name)
        job = _Import(
            dataset,
            target.dataset_id or dataset_uuid(dataset),
            header,
            keep,
            (header.embedder.name or embedder.name) if keep else embedder.name,
            clock,
        )
        try:
            report: ImportReport = yield Tx(
                lambda: _import_body(job, reader, embedder), job.dataset_id
            )
        except DatabaseError as exc:
            refused = _refused(job, exc)
            if refused is None:
                raise
            raise refused from exc
    return report


def _check_vectors(header: Header, store_dim: int, embedder_name: str) -> None:
    dumped = header.embedder
    if dumped.dim != store_dim:
        raise EmbeddingDimensionMismatch(
            f"the dump's vectors have {dumped.dim} dimensions ({dumped.name or 'unknown model'}), "
            f"this store holds {store_dim}: import it with --re-embed (re_embed=True) to embed "
            f"its texts with this store's embedder ({embedder_name}), or into a store of "
            f"{dumped.dim} dimensions"
        )
    if dumped.name is not None and dumped.name != embedder_name:
        raise EmbedderMismatch(
            f"the dump's vectors come from {dumped.name}, but this store was opened with "
            f"{embedder_name}: open it with that embedder (--embedder / MEMFLOW_EMBEDDER), or "
            "import with --re-embed (re_embed=True) to embed the texts with this one"
        )


def _refused(job: _Import, exc: DatabaseError) -> InvalidInput | None:
    """A value of the dump the database refused (a data or integrity error, which the checks
    before could not see: a number out of range, a constraint), with the lines being staged."""
    state = sqlstate_of(exc.__cause__) if exc.__cause__ is not None else None
    if not (state or "").startswith(("22", "23")):
        return None
    where = "the dump holds a record the database refused"
    if job.batch is not None:
        kind, first, last = job.batch
        where = f"lines {first}-{last}: the database refused a {kind} record there"
    return InvalidInput(f"{where} ({exc}); fix the record or export the dataset again")


def _import_body(job: _Import, reader: DumpReader, embedder: Embedder) -> Body[ImportReport]:
    ds = job.dataset_id
    yield statement("dataset_create", {"id": ds, "name": job.name, "embedder": job.embedder_name})
    claim = yield lambda conn: conn.execute(q("import_claim"), {"dataset_id": ds}).first()
    if claim is None:
        raise DatabaseError(f"dataset {job.name!r} changed during the import: retry it")
    if claim.used:
        raise InvalidInput(
            f"dataset {job.name!r} already holds memories: import into a new name "
            f"(--dataset NEW) or drop it first (memflow datasets --drop {job.name!r})"
        )
    if claim.embedder is None:
        yield statement("dataset_set_embedder", {"dataset_id": ds, "embedder": job.embedder_name})
    elif claim.embedder != job.embedder_name:
        raise EmbedderMismatch(
            f"dataset {job.name!r} records the embedder {claim.embedder}, the import's vectors "
            f"are {job.embedder_name}'s: import into a new name"
        )
    yield statement("import_stage")
    yield from _stage(job, reader)
    job.batch = None
    yield statement("import_stage_done")
    job.clock.emit("check", 0, None)
    problem = yield lambda conn: conn.execute(q("import_check")).first()
    if problem is not None:
        raise InvalidInput(f"line {problem.line}: {problem.problem}")
    rekeyed = 0
    if job.header.dataset.id != ds:
        rekeyed = yield from rekey_body(job.header.dataset.id, ds, job.clock)
    written = 0
    total = sum(job.counts[t] for t in TABLE_RECORDS)
    job.clock.emit("write", 0, total)
    for table in TABLE_RECORDS:
        yield statement(
            q(f"import_write_{table}"), {"dataset_id": ds, "strip": not job.keep_vectors}
        )
        written += job.counts[table]
        job.clock.emit("write", written, total, table)
    # (the stored citations of every node, from the rows just written: revision 0008)
    yield lambda conn: citations.refresh_dataset(conn, ds)
    embedded = yield from _embed_missing(job, embedder)
    yield from _write_vectors(job)
    job.clock.emit("done", sum(job.counts.values()), sum(job.counts.values()))
    return ImportReport(
        dataset=job.name,
        source_dataset=job.header.dataset.name,
        counts=dict(job.counts),
        vectors="imported" if job.keep_vectors else "embedded",
        embedded=embedded,
        rekeyed=rekeyed,
        bytes=reader.bytes,
        seconds=job.clock.elapsed(),
        stages=dict(job.clock.stages),
    )


def _stage(job: _Import, reader: DumpReader) -> Body[None]:
    """Every record of the dump into the staging tables, checked line by line; then the end
    record's counts against what was read."""
    buffers: dict[str, list[str]] = {t: [] for t in RECORD_TYPES}
    sizes = dict.fromkeys(RECORD_TYPES, 0)
    firsts = dict.fromkeys(RECORD_TYPES, 0)
    total = sum(job.header.counts.values()) or None
    end, end_line, read = None, 0, 0
    job.clock.emit("read", 0, total)
    for number, line in reader.records():
        if end is not None:
            raise InvalidInput(f"line {number}: a record after the end record (line {end_line})")
        rec = check_record(number, line, job.header)
        if rec.end is not None:
            end, end_line = rec.end, number
            continue
        kind = rec.type
        job.counts[kind] += 1
        read += 1
        buffers[kind].append(f"[{number},{line}]")
        firsts[kind] = firsts[kind] or number
        sizes[kind] += len(line)
        if len(buffers[kind]) >= BATCH_RECORDS or sizes[kind] >= BATCH_BYTES:
            yield _flush(job, kind, buffers[kind], firsts[kind], number)
            buffers[kind], sizes[kind], firsts[kind] = [], 0, 0
            job.clock.emit("read", read, total, kind)
    for kind, rows in buffers.items():
        if rows:
            yield _flush(job, kind, rows, firsts[kind], reader.last)
    job.clock.emit("read", read, total)
    if end is None:
        raise InvalidInput(
            f"the dump ends at line {reader.last} without its end record: it was cut short "
            "(an export that failed, or a partial copy); export the dataset again"
        )
    for kind in RECORD_TYPES:
        if end.counts.get(kind, 0) != job.counts[kind]:
            raise InvalidInput(
                f"line {end_line}: the end record counts {end.counts.get(kind, 0)} {kind} "
                f"records, the dump holds {job.counts[kind]}: it was cut or edited; export the "
                "dataset again"
            )


def _flush(job: _Import, kind: str, rows: list[str], first: int, last: int) -> Any:
    job.batch = (kind, first, last)
    params = {"batch": "[" + ",".join(rows) + "]", "keep_vectors": job.keep_vectors}
    return statement(q(f"import_stage_{kind}"), params)


def _embed_missing(job: _Import, embedder: Embedder) -> Body[int]:
    """Embed the distinct texts whose vectors the dump lacks (or all, with re_embed)."""
    total = yield scalar("import_texts_count")
    if not total:
        return 0
    yield statement("import_texts")
    done = 0
    job.clock.emit("embed", 0, total)
    while rows := (yield fetch_rows):
        vectors = embed_passages_checked(embedder, [r.text for r in rows])
        params = [
            {"text_hash": r.text_hash, "embedding": v} for r, v in zip(rows, vectors, strict=True)
        ]
        yield statement("import_embedding_insert", params)
        done += len(rows)
        job.clock.emit("embed", done, total)
    yield statement("dump_close")
    return done


def _write_vectors(job: _Import) -> Body[None]:
    span = yield lambda conn: conn.execute(q("import_vector_span")).one()
    if not span.n:
        return
    done = 0
    job.clock.emit("vectors", 0, span.n)
    for lo in range(span.first - 1, span.last, VECTOR_LINES):
        params = {"dataset_id": job.dataset_id, "lo": lo, "hi": lo + VECTOR_LINES}
        done += yield scalar("import_write_vectors", params)
        job.clock.emit("vectors", done, span.n)


__all__ = ["import_op", "open_source"]
