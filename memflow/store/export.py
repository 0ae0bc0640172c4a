"""Export a dataset as a dump (docs/export.md): one read-only REPEATABLE READ transaction, so the
dump is one consistent snapshot; each table is read through a cursor in batches of FETCH and
written out line by line, so memory stays flat whatever the size of the dataset.

Written once as an operation (:mod:`memflow.db.steps`) for the sync and the async API.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import IO, Any

from sqlalchemy import Connection, TextClause

from memflow.db.queries import q
from memflow.db.steps import Body, Op, Sql, Tx
from memflow.errors import InvalidInput, NotFound
from memflow.store.dump import (
    FORMAT,
    FORMAT_VERSION,
    RECORD_TYPES,
    Clock,
    DumpFile,
    DumpProgressFn,
    ExportReport,
)


def memflow_version() -> str:
    try:
        return version("memflow")
    except PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
        return "unknown"


class LineWriter:
    """Writes lines to a text or binary stream and counts the bytes."""

    def __init__(self, stream: IO[Any]) -> None:
        self.stream = stream
        self.binary = "b" in getattr(stream, "mode", "") or not hasattr(stream, "encoding")
        self.bytes = 0

    def line(self, text: str) -> None:
        data = (text + "\n").encode("utf-8")
        self.bytes += len(data)
        self.stream.write(data if self.binary else data.decode("utf-8"))


@contextmanager
def open_sink(sink: DumpFile) -> Iterator[tuple[LineWriter, str | None]]:
    """A writer on ``sink``. A path is written through a temporary file beside it and renamed
    when the export succeeds: a failed export leaves no file (nor half of one) behind."""
    if not isinstance(sink, str | os.PathLike):
        yield LineWriter(sink), None
        sink.flush()
        return
    path = Path(sink)
    if not path.parent.is_dir():
        raise InvalidInput(f"{path}: no such directory; create it or write the dump elsewhere")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        with tmp.open("wb") as fh:
            yield LineWriter(fh), str(path)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def statement(
    name: str | TextClause, params: Mapping[str, Any] | Sequence[Mapping[str, Any]] = ()
) -> Sql:
    """A step running the named statement ``name`` (or one from :func:`q`) with ``params`` (a
    sequence: once per item)."""
    clause = q(name) if isinstance(name, str) else name
    return lambda conn: conn.execute(clause, params or {})


def scalar(name: str, params: Mapping[str, Any] | None = None) -> Sql:
    """A step returning the one value of the named statement ``name`` (an int)."""
    return lambda conn: int(conn.execute(q(name), dict(params or {})).scalar_one())


def fetch_rows(conn: Connection) -> list[Any]:
    """The next batch of the open ``memflow_dump`` cursor (empty at its end)."""
    return list(conn.execute(q("dump_fetch")).all())


def _fetch_lines(conn: Connection) -> list[str]:
    return [r.line for r in fetch_rows(conn)]


def export_op(
    dataset_id: uuid.UUID,
    name: str,
    sink: DumpFile,
    *,
    with_vectors: bool = False,
    progress: DumpProgressFn | None = None,
) -> Op[ExportReport]:
    """Write dataset ``dataset_id`` (named ``name``) to ``sink``, with its vectors or without."""
    clock = Clock("export", progress)
    with open_sink(sink) as (out, path):
        report: ExportReport = yield Tx(
            lambda: _export_body(dataset_id, name, out, with_vectors, clock)
        )
    report.path = path
    return report


def _export_body(
    ds: uuid.UUID, name: str, out: LineWriter, with_vectors: bool, clock: Clock
) -> Body[ExportReport]:
    params = {"dataset_id": ds, "with_vectors": with_vectors}
    yield statement("export_snapshot")  # before any other statement of the transaction
    yield statement("bind_dataset", {"dataset_id": str(ds)})
    yield statement("export_utc")
    head = yield lambda conn: conn.execute(q("export_header"), params).first()
    if head is None:
        raise NotFound(f"no dataset named {name!r}: list them with `memflow datasets`")
    counts = yield lambda conn: dict(conn.execute(q("export_counts"), params).one()._mapping)
    total = sum(counts.values())
    header = {
        "type": "header",
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "memflow_version": memflow_version(),
        "schema_revision": head.revision,
        "exported_at": datetime.now(UTC).isoformat(),
        "dataset": {
            "name": head.name,
            "id": str(head.id),
            "created_at": head.created_at.isoformat(),
        },
        "embedder": {"name": head.embedder, "dim": head.dim},
        "vectors": with_vectors,
        "counts": counts,
    }
    out.line(json.dumps(header, ensure_ascii=False, default=str))
    written: dict[str, int] = {}
    done = 0
    clock.emit("read", 0, total)
    for record in RECORD_TYPES:
        yield statement(q(f"export_{record}"), params)
        written[record] = 0
        while lines := (yield _fetch_lines):
            for line in lines:
                out.line(line)
            written[record] += len(lines)
            done += len(lines)
            clock.emit("read", done, total, record)
        yield statement("dump_close")
    out.line(json.dumps({"type": "end", "counts": written}))
    clock.emit("done", done, total)
    return ExportReport(name, written, with_vectors, out.bytes, clock.elapsed())


__all__ = [
    "LineWriter",
    "export_op",
    "fetch_rows",
    "memflow_version",
    "open_sink",
    "scalar",
    "statement",
]
