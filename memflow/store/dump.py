"""The dump format of ``memflow export`` / ``memflow import-dump`` (docs/export.md).

One JSON object a line: a header, then typed records, then an end record with the counts. A record
of a table holds that table's columns by name (no ``dataset_id``: the importing store writes its
own); a ``vector`` record holds one row of a per-field embedding table, its ``embedding`` present
only in a dump written with vectors. The record shapes are derived from the table definitions
(:func:`memflow.db.schema.build_metadata`), so a column added to the schema is a field of its
record, and the checks below are the tables' own types and nullability.

This module is pure: it reads and checks lines, and holds what export and import report.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import IO, Annotated, Any, Literal, Union

from pgvector.sqlalchemy import Vector
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    create_model,
)
from sqlalchemy import Boolean, DateTime, Float, Integer, LargeBinary, Text
from sqlalchemy.dialects.postgresql import JSONB, TSVECTOR
from sqlalchemy.dialects.postgresql import UUID as PgUUID

from memflow.db.schema import COLLECTIONS, NODE_KINDS, RELATIONSHIPS, build_metadata
from memflow.errors import InvalidInput
from memflow.ids import text_hash

# Where a dump is written to or read from: a path, or an open text or binary file.
DumpFile = IO[str] | IO[bytes] | str | os.PathLike[str]
FORMAT = "memflow-dump"
FORMAT_VERSION = 1
# The record types in the order a dump holds them (parents before what refers to them).
TABLE_RECORDS = (
    "document",
    "chunk",
    "node",
    "edge",
    "node_source",
    "edge_source",
    "node_chunk",
    "change_log",
)
RECORD_TYPES = (*TABLE_RECORDS, "vector")
_NOT_EXPORTED = {"dataset_id", "tsv"}  # the importing dataset's id; a generated column
_STRICT = ConfigDict(extra="forbid", strict=True)
HexHash = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{32}$")]
# Columns whose values a CHECK constraint limits: the record says which, with the line.
_CHOICES: dict[tuple[str, str], tuple[str, ...]] = {
    ("node", "kind"): NODE_KINDS,
    ("edge", "relationship"): RELATIONSHIPS,
}


def _python_type(table: str, column: Any) -> Any:
    choices = _CHOICES.get((table, column.name))
    if choices:
        return Literal[choices]
    kind = column.type
    for sql_type, py in (
        (PgUUID, uuid.UUID),
        (DateTime, datetime),
        (Boolean, bool),
        (Integer, int),
        (Float, float),
        (JSONB, dict[str, Any]),
        (LargeBinary, HexHash),
        (Text, str),
    ):
        if isinstance(kind, sql_type):
            return py
    raise TypeError(f"no dump type for {table}.{column.name} ({kind!r})")  # pragma: no cover


def _table_models() -> dict[str, type[BaseModel]]:
    tables = build_metadata(1).tables
    models: dict[str, type[BaseModel]] = {}
    for name in TABLE_RECORDS:
        fields: dict[str, Any] = {"type": (Literal[name], ...)}
        for col in tables[f"memflow.{name}"].columns:
            if col.name in _NOT_EXPORTED or isinstance(col.type, TSVECTOR | Vector):
                continue
            py = _python_type(name, col)
            fields[col.name] = (py, ...) if not col.nullable else (py | None, None)
        models[name] = create_model(f"{name.title()}Record", __config__=_STRICT, **fields)
    return models


class VectorRecord(BaseModel):
    """One row of a per-field embedding table (``collection``: its name, e.g. Episode_summary)."""

    model_config = _STRICT
    type: Literal["vector"]
    collection: Literal[tuple(c.name for c in COLLECTIONS)]  # type: ignore[valid-type]
    node_id: uuid.UUID | None = None  # every collection but Edge_text
    text_hash: HexHash
    text: str
    embedding: list[float] | None = None


class DumpDataset(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    id: uuid.UUID
    created_at: datetime | None = None


class DumpEmbedder(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str | None = None  # the model the dataset's vectors come from (None: never recorded)
    dim: int = Field(ge=1)


class Header(BaseModel):
    """The first line of a dump."""

    model_config = ConfigDict(extra="allow")
    type: Literal["header"]
    format: Literal["memflow-dump"]
    format_version: int
    memflow_version: str
    schema_revision: str | None = None
    exported_at: datetime
    dataset: DumpDataset
    embedder: DumpEmbedder
    vectors: bool
    counts: dict[str, int] = Field(default_factory=dict)


class EndRecord(BaseModel):
    """The last line: how many records of each type the dump holds (a shorter file was cut)."""

    model_config = _STRICT
    type: Literal["end"]
    counts: dict[str, int]


TABLE_MODELS = _table_models()


def _record_adapter() -> TypeAdapter[Any]:
    """One parser for every record line, choosing the model by its ``type``."""
    members: Any = Union[(*TABLE_MODELS.values(), VectorRecord, EndRecord)]
    return TypeAdapter(Annotated[members, Field(discriminator="type")])


RECORD = _record_adapter()


def _problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"][1:] if p != "function-after")
    if first["type"] == "union_tag_invalid":
        kinds = ", ".join(repr(t) for t in (*RECORD_TYPES, "end"))
        return f"unknown record type {first['input'].get('type')!r} (one of {kinds})"
    if first["type"] == "union_tag_not_found":
        return "a record without its 'type'"
    if first["type"] == "json_invalid":
        return f"not JSON ({first['msg']})"
    if first["type"] == "model_type":
        return "not a JSON object"
    record = f"{first['loc'][0]} record" if first["loc"] else "record"
    if first["type"] == "missing":
        return f"{record} lacks its field {where!r}"
    if first["type"] == "extra_forbidden":
        return f"{record} has an unknown field {where!r} (docs/export.md lists the fields)"
    name = f", field {where!r}" if where else ""
    return f"{record}{name}: {first['msg'][:1].lower()}{first['msg'][1:]}"


def parse_header(number: int, line: str) -> Header:
    """The header line, checked: its format and a version this memflow reads."""
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"line {number}: not a memflow dump (not JSON: {exc.msg}); write one with "
            "`memflow export --dataset NAME > dump.jsonl`"
        ) from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT or raw.get("type") != "header":
        raise InvalidInput(
            f"line {number}: not a memflow dump (its first line is no memflow-dump header); "
            "write one with `memflow export --dataset NAME > dump.jsonl`"
        )
    version = raw.get("format_version")
    if version != FORMAT_VERSION:
        raise InvalidInput(
            f"line {number}: dump format version {version!r}, this memflow reads version "
            f"{FORMAT_VERSION}: import it with the memflow that wrote it "
            f"({raw.get('memflow_version', 'unknown')}) or upgrade this one"
        )
    try:
        return Header.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InvalidInput(f"line {number}: the header's {where!r}: {first['msg']}") from None


@dataclass
class CheckedRecord:
    """A record line that passed its checks: its type and the line as read."""

    type: str
    line: str
    end: EndRecord | None = None


def check_record(number: int, line: str, header: Header) -> CheckedRecord:
    """One record line, checked against its type's shape (InvalidInput naming the line)."""
    try:
        rec = RECORD.validate_json(line)
    except ValidationError as exc:
        raise InvalidInput(f"line {number}: {_problem(exc)}") from None
    where = f"line {number}"
    if isinstance(rec, EndRecord):
        return CheckedRecord("end", line, rec)
    if isinstance(rec, VectorRecord):
        if (rec.collection == "Edge_text") != (rec.node_id is None):
            need = "has no node_id" if rec.collection == "Edge_text" else "needs its node_id"
            raise InvalidInput(f"{where}: a {rec.collection} vector {need}")
        if rec.embedding is None and header.vectors:
            raise InvalidInput(f"{where}: no embedding, but the header says the dump has vectors")
        if rec.embedding is not None and not header.vectors:
            raise InvalidInput(f"{where}: an embedding, but the header says the dump has none")
        if rec.embedding is not None and len(rec.embedding) != header.embedder.dim:
            raise InvalidInput(
                f"{where}: an embedding of {len(rec.embedding)} dimensions; the header says "
                f"{header.embedder.dim}"
            )
        _check_hash(where, rec.text, rec.text_hash)
    elif rec.type == "edge":
        _check_hash(where, rec.edge_text, rec.text_hash)
    return CheckedRecord(rec.type, line)


def _check_hash(where: str, text: str, given: str) -> None:
    if text_hash(text).hex() != given:
        raise InvalidInput(
            f"{where}: text_hash {given} is not the hash of its text (memflow.ids.text_hash): "
            "the record was edited; export the dataset again"
        )


class DumpReader:
    """The lines of a dump (text or UTF-8 bytes), numbered from 1, blank ones skipped; counts
    the bytes read. ``header()`` reads the first line, ``records()`` the rest."""

    def __init__(self, lines: Iterable[str | bytes]) -> None:
        self._lines = enumerate(lines, start=1)
        self.bytes = 0
        self.last = 0  # the number of the last line read

    def _next(self) -> tuple[int, str] | None:
        for number, raw in self._lines:
            self.last = number
            if isinstance(raw, bytes):
                self.bytes += len(raw)
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InvalidInput(
                        f"line {number}: not UTF-8 ({exc.reason} at byte {exc.start})"
                    ) from None
            else:
                self.bytes += len(raw.encode("utf-8"))
                text = raw
            text = text.strip()
            if text:
                return number, text
        return None

    def header(self) -> Header:
        first = self._next()
        if first is None:
            raise InvalidInput(
                "the dump is empty: write one with `memflow export --dataset NAME > dump.jsonl`"
            )
        return parse_header(*first)

    def records(self) -> Iterator[tuple[int, str]]:
        while (item := self._next()) is not None:
            yield item


# ------------------------------------------------------------------ progress and reports

Stage = Literal["read", "check", "rekey", "write", "embed", "vectors", "done"]


@dataclass(frozen=True)
class DumpProgress:
    """Where an export or import is. ``stage``: read (records read from the store and written
    to the dump, or read from the dump and staged), then for an import: check, rekey (ids
    derived for a new name), write (tables written), embed (texts embedded), vectors (vector
    rows written, their indexes updated); last, done. ``done`` and ``total`` count records
    (texts while embedding, passes while rekeying); ``total`` is None when unknown."""

    operation: Literal["export", "import"]
    stage: Stage
    done: int
    total: int | None
    elapsed: float
    detail: str = ""

    def describe(self) -> str:
        share = f" {100.0 * self.done / self.total:5.1f}%" if self.total else ""
        count = f" {self.done}/{self.total}" if self.total is not None else ""
        count = count or (f" {self.done}" if self.done else "")
        what = f" {self.detail}" if self.detail else ""
        return f"{self.operation} {self.stage}{share}{count}{what} ({self.elapsed:.1f} s)"

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)


DumpProgressFn = Callable[[DumpProgress], None]


class Clock:
    """Emits :class:`DumpProgress` events for one operation (nothing without a callback)."""

    def __init__(self, operation: Literal["export", "import"], fn: DumpProgressFn | None) -> None:
        self.operation, self.fn = operation, fn
        self.started = time.perf_counter()
        self.stages: dict[str, float] = {}
        self._stage: str | None = None
        self._since = self.started

    def elapsed(self) -> float:
        return round(time.perf_counter() - self.started, 3)

    def emit(self, stage: Stage, done: int, total: int | None, detail: str = "") -> None:
        """Report progress; a stage's time runs from its first event to the next stage's."""
        now = time.perf_counter()
        if stage != self._stage:
            if self._stage is not None:
                self.stages[self._stage] = round(
                    self.stages.get(self._stage, 0.0) + now - self._since, 3
                )
            self._stage, self._since = stage, now
        if self.fn is not None:
            self.fn(DumpProgress(self.operation, stage, done, total, self.elapsed(), detail))


@dataclass
class ExportReport:
    """What an export wrote: records per type, whether with vectors, bytes and seconds."""

    dataset: str
    counts: dict[str, int]
    vectors: bool
    bytes: int
    seconds: float
    path: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ImportReport:
    """What an import wrote into ``dataset``: records per type; ``vectors``: "imported" (the
    dump's) or "embedded" (``embedded`` texts by this store's embedder); ``rekeyed``: ids
    re-derived for the new dataset (0 when its id is the source's); seconds per stage."""

    dataset: str
    source_dataset: str
    counts: dict[str, int]
    vectors: Literal["imported", "embedded"]
    embedded: int
    rekeyed: int
    bytes: int
    seconds: float
    stages: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "RECORD_TYPES",
    "TABLE_MODELS",
    "TABLE_RECORDS",
    "CheckedRecord",
    "Clock",
    "DumpFile",
    "DumpProgress",
    "DumpProgressFn",
    "DumpReader",
    "EndRecord",
    "ExportReport",
    "Header",
    "ImportReport",
    "VectorRecord",
    "check_record",
    "parse_header",
]
