"""What ``memorize`` takes in, resolved into documents before anything is written
(:func:`resolve_inputs`), once per call: the facades, the service and the CLI hand the resolved
documents on (an :class:`InputDocument` passes through unchanged).

What ``source`` may be:

- a :class:`~memflow.text.document.ParsedDocument` (used as is; the benchmark path);
- an ``os.PathLike`` (``Path``): a file or a directory (read recursively), which must exist;
- ``bytes``: the content of one input;
- ``str``: ``"-"`` reads stdin; a string naming an existing file or directory is that path; a
  one-line string that ends with a known text extension (``notes.md``) but does not exist is an
  error (a mistyped path is never memorised as text); any other string is the text itself;
- an :class:`InputDocument` (already resolved);
- a list of any of these.

The document id is derived from the content (so memorizing the same content again is detected
before any extraction or embedding and reported as ``skipped``): for files and raw input it is
the hash of the decoded input, the detected content type, the part index (a JSON list of
conversations gives several documents) and the explicit reference time if one was given; for a
ParsedDocument it is the hash of everything but its ``source``. A file's modification time is the
reference time of text and Markdown documents when none is given (it anchors relative dates).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memflow.errors import InvalidInput, MemflowError
from memflow.ids import content_hash
from memflow.ingest.parse import TEXT_EXTENSIONS, decode_input, iter_sources, parse_input
from memflow.text.document import ParsedDocument


@dataclass
class InputDocument:
    """One document to memorise, or the error that kept an input from becoming one."""

    source: str
    doc: ParsedDocument | None = None
    content_hash: str | None = None
    error: MemflowError | None = None
    # One file or named input that gave one document: re-memorising the source edited is its
    # next version (memflow.store.temporal). Parts of a multi-document input never are.
    versioned: bool = False


Source = str | bytes | os.PathLike[str] | ParsedDocument | InputDocument


def _is_path_like_text(text: str) -> bool:
    one_line = "\n" not in text and len(text) < 4096
    return one_line and text.strip().lower().endswith(TEXT_EXTENSIONS)


def _input_hash(text: str, doc: ParsedDocument, part: int, explicit: datetime | None) -> str:
    key = {
        "input": content_hash(text),
        "content_type": doc.content_type,
        "part": part,
        "reference_time": explicit.isoformat() if explicit else None,
    }
    return content_hash(json.dumps(key, sort_keys=True))


def parsed_document_hash(doc: ParsedDocument) -> str:
    return content_hash(doc.model_dump_json(exclude={"source"}))


DEFAULT_MAX_DOCUMENT_BYTES = 4 * 1024 * 1024


def max_document_bytes() -> int:
    """Largest input memorised as one document (``MEMFLOW_MAX_DOCUMENT_BYTES``, default 4 MiB).

    One document is one transaction and every sentence becomes an embedded point: a 10 MB text
    would hold a transaction open for many minutes. Split big inputs (by chapter, by day)."""
    raw = os.environ.get("MEMFLOW_MAX_DOCUMENT_BYTES")
    try:
        return int(raw) if raw else DEFAULT_MAX_DOCUMENT_BYTES
    except ValueError:
        raise InvalidInput(
            f"MEMFLOW_MAX_DOCUMENT_BYTES must be a number of bytes, got {raw!r}"
        ) from None


def _check_size(data: str | bytes, name: str) -> None:
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    limit = max_document_bytes()
    if size > limit:
        raise InvalidInput(
            f"{name}: {size / 1048576:.1f} MiB is more than memflow memorises as one document "
            f"({limit / 1048576:.1f} MiB): split it into smaller files (by chapter, by day) or raise "
            "MEMFLOW_MAX_DOCUMENT_BYTES"
        )


def _parse_raw(
    data: str | bytes,
    name: str,
    *,
    content_type: str,
    reference_time: datetime | None,
    filename: str | None = None,
    mtime: datetime | None = None,
) -> list[InputDocument]:
    try:
        _check_size(data, name)
        text = decode_input(data, name)
        docs = parse_input(
            text,
            source=name,
            content_type=content_type,
            reference_time=reference_time,
            filename=filename,
        )
    except MemflowError as exc:
        return [InputDocument(name, error=exc)]
    out = []
    for i, doc in enumerate(docs):
        if (
            reference_time is None
            and mtime is not None
            and doc.content_type in ("text", "markdown")
        ):
            doc = doc.model_copy(update={"reference_time": mtime})
        out.append(
            InputDocument(
                doc.source, doc, _input_hash(text, doc, i, reference_time), versioned=len(docs) == 1
            )
        )
    return out


def _read_paths(raw: str, **kw: Any) -> list[InputDocument]:
    try:
        found = iter_sources([raw])
    except MemflowError as exc:
        return [InputDocument("<stdin>" if raw == "-" else raw, error=exc)]
    out: list[InputDocument] = []
    for src in found:
        filename = None if src.name == "<stdin>" else src.name
        mtime = None if filename is None else src.mtime
        out += _parse_raw(src.data, src.name, filename=filename, mtime=mtime, **kw)
    return out


def resolve_inputs(
    source: Source | Sequence[Source],
    *,
    content_type: str = "auto",
    reference_time: datetime | None = None,
) -> list[InputDocument]:
    """Turn ``source`` (see the module docstring) into documents, never raising per input."""
    items: Sequence[Source] = (
        list(source) if isinstance(source, list | tuple) else [source]  # type: ignore[list-item]
    )
    if not items:
        raise InvalidInput("nothing to memorize: pass a path, a text, or a ParsedDocument")
    ref = (
        reference_time.replace(tzinfo=UTC)
        if reference_time and not reference_time.tzinfo
        else reference_time
    )
    kw: dict[str, Any] = {"content_type": content_type, "reference_time": ref}
    out: list[InputDocument] = []
    for item in items:
        if isinstance(item, InputDocument):
            out.append(item)
        elif isinstance(item, ParsedDocument):
            out.append(InputDocument(item.source, item, parsed_document_hash(item)))
        elif isinstance(item, bytes):
            out += _parse_raw(item, "<bytes>", **kw)
        elif isinstance(item, os.PathLike):
            out += _read_paths(os.fspath(item), **kw)
        elif isinstance(item, str):
            if item == "-" or ("\n" not in item and _exists(item)):
                out += _read_paths(item, **kw)
            elif _is_path_like_text(item):
                out.append(
                    InputDocument(item, error=InvalidInput(f"{item}: no such file or directory"))
                )
            else:
                out += _parse_raw(item, "<text>", **kw)
        else:
            raise InvalidInput(
                f"cannot memorize a {type(item).__name__}: pass a path, str, bytes or ParsedDocument"
            )
    return out


def _exists(text: str) -> bool:
    try:
        return bool(text.strip()) and len(text) < 4096 and Path(text).exists()
    except (OSError, ValueError):
        return False


__all__ = [
    "DEFAULT_MAX_DOCUMENT_BYTES",
    "InputDocument",
    "Source",
    "max_document_bytes",
    "parsed_document_hash",
    "resolve_inputs",
]
