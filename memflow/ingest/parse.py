"""Parse raw inputs (text, Markdown, dialog text, conversation JSON, drafts) into documents.

Every problem with the input is an :class:`~memflow.errors.InvalidInput` whose message says what
to fix. The result is pure data (:mod:`memflow.text.document`); nothing here touches a database.
"""

from __future__ import annotations

import json
import os
import re
import sys
import unicodedata
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple, cast, get_args

from memflow.bounds import (
    MALFORMED,
    MAX_NAME_CHARS,
    check_text,
    check_time,
    from_epoch,
    load_json,
)
from memflow.errors import InvalidInput
from memflow.text.dating import DocumentHead, document_head, source_dated, title_time
from memflow.text.document import Chunk, ContentType, ParsedDocument, Session
from memflow.text.sentences import shorten, speaker_label, text_units
from memflow.text.timestamps import parse_timestamp

TEXT_EXTENSIONS = (".txt", ".md", ".markdown", ".json", ".dialog", ".log")
MAX_INPUT_BYTES = 50 * 1024 * 1024
# The keys a conversation message may name its speaker by, in order of preference.
SPEAKER_KEYS = ("speaker", "role", "name", "from", "sender", "author")
_CONTENT_TYPES: tuple[ContentType, ...] = get_args(ContentType)

# "[ts] Speaker: message" (ASCII colon needs a space after it, so "http://" or "10:30" never match).
_DIALOG_LINE = re.compile(
    r"^\s*(?:\[(?P<ts>[^\]\n]{1,40})\]\s*)?"
    r"(?P<speaker>[^\W\d_][^:：\n\[\]]{0,39}?)\s*(?::\s+|：\s*)(?P<text>\S.*)$"
)
_MD_SIGNAL = re.compile(r"^\s{0,3}(#{1,6}\s+\S|```|~~~|\|.*\|\s*$|[-*+]\s+\S)", re.MULTILINE)
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?=\S)")
_JSON_CLAIM = re.compile(r'"(sessions|messages|speaker|role)"\s*:')


class SourceInput(NamedTuple):
    name: str
    data: bytes
    mtime: datetime


# ---------------------------------------------------------------- decoding and detection


def decode_input(data: str | bytes, source: str) -> str:
    """Bytes -> text (UTF-8, BOM allowed); rejects binary data, invalid UTF-8 and empty input."""
    if isinstance(data, bytes):
        if len(data) > MAX_INPUT_BYTES:
            raise InvalidInput(
                f"{source}: input is {len(data)} bytes, over the 50 MB limit; split it"
            )
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            text = data.decode("utf-16")
        else:
            nul = data.find(b"\x00")
            if nul >= 0:
                raise InvalidInput(
                    f"{source}: looks like binary data (NUL byte at offset {nul}); "
                    "memorize text, Markdown, dialog or conversation JSON files"
                )
            try:
                text = data.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise InvalidInput(
                    f"{source}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset "
                    f"{exc.start}); convert the file to UTF-8, e.g. iconv -f GBK -t UTF-8"
                ) from exc
    else:
        text = check_text(data, source)
    text = text.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise InvalidInput(f"{source}: the input is empty; give it some text to memorize")
    sample = text[:20000]
    control = sum(
        1
        for ch in sample
        if (unicodedata.category(ch) == "Cc" and ch not in "\t\n\f") or ch == "\ufffd"
    )
    if control > 0.1 * len(sample):
        raise InvalidInput(
            f"{source}: mostly non-text characters ({control} of {len(sample)}); "
            "memorize text, Markdown, dialog or conversation JSON"
        )
    return text


def _looks_like_dialog(text: str) -> bool:
    """m_flow's rule: >= 35 % of the lines are turns, >= 2 speakers, and one speaker repeats."""
    lines = [ln for ln in text.split("\n") if ln.strip()]
    speakers: Counter[str] = Counter()
    for line in lines:
        m = _DIALOG_LINE.match(line)
        if m and len(m.group("speaker").split()) <= 4:
            speakers[m.group("speaker").strip()] += 1
    matched = sum(speakers.values())
    return matched >= 0.35 * len(lines) and len(speakers) >= 2 and max(speakers.values()) >= 2


def _json_kind(obj: Any) -> ContentType | None:
    def is_message(m: Any) -> bool:
        return isinstance(m, dict) and ("text" in m or "content" in m)

    def is_draft(d: Any) -> bool:
        return isinstance(d, dict) and "name" in d and "summary" in d

    if isinstance(obj, dict):
        if "sessions" in obj or "messages" in obj:
            return "conversation"
        if is_draft(obj) or "episodes" in obj:
            return "draft"
    elif isinstance(obj, list) and obj:
        if all(
            is_message(m) or (isinstance(m, dict) and {"messages", "sessions"} & m.keys())
            for m in obj
        ):
            return "conversation"
        if all(is_draft(d) for d in obj):
            return "draft"
    return None


def _load_json(text: str, source: str) -> Any:
    """The JSON of a conversation or drafts, checked by memflow.bounds (depth, NUL, lone
    surrogates, numbers)."""
    hint = (
        '; a conversation is {{"sessions": [{{"started_at": ISO-8601, "messages": '
        '[{{"speaker": ..., "text": ...}}]}}]}}'
    )
    return load_json(text, source, malformed=MALFORMED + hint)


def _parses_as_json(text: str) -> bool | None:
    """True when ``text`` is JSON, False when it is not, None when it is JSON memflow cannot
    read (nested too deep, an integer of thousands of digits): load_json says why."""
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    except (RecursionError, ValueError):
        return None
    return True


def detect_content_type(text: str, filename: str | None = None) -> ContentType:
    """Guess what ``text`` is: conversation/draft JSON, dialog text, Markdown or plain text."""
    stripped = text.lstrip()
    name = (filename or "").lower()
    if stripped[:1] in ("{", "[") or name.endswith(".json"):
        try:
            kind = _json_kind(json.loads(text))
        except json.JSONDecodeError:
            kind = None
            if name.endswith(".json") or _JSON_CLAIM.search(text[:5000]):
                return "conversation"  # parse_input reports where the JSON is broken
        except (RecursionError, ValueError):
            return "conversation"  # JSON too deep or too long to read: parse_input says so
        if kind is not None:
            return kind
    if _looks_like_dialog(text):
        return "dialog"
    if name.endswith((".md", ".markdown")) or len(_MD_SIGNAL.findall(text)) >= 2:
        return "markdown"
    if _MD_HEADING.match(stripped):  # a note that opens with "# Title" is Markdown
        return "markdown"
    return "text"


# ---------------------------------------------------------------- times


def parse_when(
    value: str, reference: datetime | None = None, *, what: str = "the time"
) -> datetime | None:
    """A message's or session's time in any common format (:mod:`memflow.text.timestamps`),
    within memflow's time range (memflow.bounds; else InvalidInput naming ``what``)."""
    when = parse_timestamp(value, reference)
    return None if when is None else check_time(when, what)


# ---------------------------------------------------------------- builders


def _title(text: str, fallback: str) -> str:
    first = next((ln.strip() for ln in text.split("\n") if ln.strip()), fallback)
    return shorten(_MD_HEADING.sub("", first), 80)  # a name, without the "# " marker


def _text_document(
    text: str,
    kind: ContentType,
    source: str,
    ref: datetime,
    filename: str | None,
    head: DocumentHead | None = None,
) -> ParsedDocument:
    body = head.body if head is not None else text
    units, heading = text_units(body, markdown=kind == "markdown")
    if not units:
        raise InvalidInput(
            f"{source}: no statements found; the input holds only markup or code fences"
        )
    chunks = [
        Chunk(index=i, key=f"s{i}", text=u.text, section=u.section) for i, u in enumerate(units)
    ]
    stem = Path(filename).stem if filename else ""
    title = (
        (head.title if head is not None else None)
        or heading
        or (_title(body, stem) if kind == "text" else stem)
        or _title(body, source)
    )
    # Each statement's source date: its heading's, the head's, the title's, the file name's.
    written = head.written if head is not None else None
    chunks = source_dated(chunks, [title, Path(source).name], ref, written=written)
    return ParsedDocument(
        source=source, title=title, content_type=kind, text=text, reference_time=ref, chunks=chunks
    )


def _speaker_title(chunks: list[Chunk]) -> str:
    return (
        speaker_label(list(dict.fromkeys(c.speaker for c in chunks if c.speaker))) or "conversation"
    )


def _dialog_document(
    text: str, source: str, ref: datetime | None, head: DocumentHead | None = None
) -> ParsedDocument:
    turns: list[list[Any]] = []  # [speaker, text, timestamp]
    if head is not None:
        text = head.body
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        m = _DIALOG_LINE.match(line)
        if m and len(m.group("speaker").split()) <= 4:
            what = f"{source}: the time on line {number}"
            ts = parse_when(m.group("ts"), ref, what=what) if m.group("ts") else None
            turns.append([m.group("speaker").strip(), m.group("text").strip(), ts])
        elif turns:
            turns[-1][1] += " " + line.strip()
        else:
            turns.append([None, line.strip(), None])
    # Undated turns were said on the day the dialog gives itself (its head, its file name).
    own = head.written if head is not None else None
    if own is None and (named := title_time(Path(source).name, ref or datetime.now(UTC))):
        own = named.start
    started = (
        next((t[2] for t in turns if t[2] is not None), None) or own or ref or datetime.now(UTC)
    )
    chunks = [
        Chunk(index=i, key=f"t{i}", text=t[1], speaker=t[0], timestamp=t[2], session=0)
        for i, t in enumerate(turns)
    ]
    session = Session(index=0, started_at=started, chunk_indexes=list(range(len(chunks))))
    return ParsedDocument(
        source=source,
        title=_speaker_title(chunks),
        content_type="dialog",
        text=text,
        reference_time=ref or started,
        chunks=chunks,
        sessions=[session],
    )


def _message_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI-style content parts
        parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
        return "\n".join(p for p in parts if p)
    return None if content is None else str(content)


def _sessions_of(obj: Any, source: str) -> tuple[list[dict[str, Any]], str | None]:
    if isinstance(obj, dict) and "sessions" in obj:
        sessions, title = obj["sessions"], obj.get("title")
    elif isinstance(obj, dict):
        sessions, title = [obj], obj.get("title")
    elif (
        isinstance(obj, list) and obj and all(isinstance(s, dict) and "messages" in s for s in obj)
    ):
        sessions, title = obj, None
    else:
        sessions, title = [{"messages": obj}], None
    if not isinstance(sessions, list) or not sessions:
        raise InvalidInput(f'{source}: "sessions" must be a non-empty list of session objects')
    for i, s in enumerate(sessions):
        if not isinstance(s, dict) or not isinstance(s.get("messages"), list):
            raise InvalidInput(f'{source}: sessions[{i}] must be an object with a "messages" list')
    return cast(list[dict[str, Any]], sessions), title if isinstance(title, str) else None


def _timestamp(raw: Any, started: datetime | None, what: str) -> datetime | None:
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return from_epoch(raw, what)  # epoch seconds
    return parse_when(str(raw), started, what=what) if raw is not None else None


def _conversation_document(
    obj: Any, text: str, source: str, ref: datetime | None
) -> ParsedDocument:
    raw_sessions, title = _sessions_of(obj, source)
    chunks: list[Chunk] = []
    sessions: list[Session] = []
    keys: set[str] = set()
    for si, raw in enumerate(raw_sessions):
        started_raw = next(
            (raw[k] for k in ("started_at", "date_time", "date") if raw.get(k)), None
        )
        what = f"{source}: sessions[{si}].started_at"
        started = parse_when(str(started_raw), what=what) if started_raw is not None else None
        if started_raw is not None and started is None:
            raise InvalidInput(
                f"{source}: sessions[{si}].started_at {started_raw!r} is not a date; use ISO-8601 "
                "like 2023-05-08T13:56:00Z, 2023/05/08 (Mon) 13:56, 1:56 pm on 8 May, 2023, "
                "RFC 2822 or Unix seconds"
            )
        indexes: list[int] = []
        for mi, msg in enumerate(raw["messages"]):
            where = f"{source}: sessions[{si}].messages[{mi}]"
            if not isinstance(msg, dict):
                raise InvalidInput(f'{where} must be an object with "speaker" and "text"')
            body = _message_text(msg.get("text", msg.get("content")))
            if body is None and "text" not in msg and "content" not in msg:
                raise InvalidInput(f'{where} has no "text" or "content"')
            body = (body or "").replace("\x00", "").strip()
            if not body:
                continue
            speaker = next((msg[k] for k in SPEAKER_KEYS if msg.get(k) is not None), None)
            if speaker is not None and len(str(speaker)) > MAX_NAME_CHARS:
                raise InvalidInput(
                    f"{where}: the speaker's name is {len(str(speaker))} characters long: "
                    f"use at most {MAX_NAME_CHARS}"
                )
            ts = _timestamp(msg.get("ts", msg.get("timestamp")), started, f"{where}.ts")
            key = str(msg.get("id", msg.get("dia_id", f"t{len(chunks)}"))).strip()
            if key in keys:
                raise InvalidInput(f"{where}: duplicate message id {key!r}; ids must be unique")
            keys.add(key)
            indexes.append(len(chunks))
            chunks.append(
                Chunk(
                    index=len(chunks),
                    key=key,
                    text=body,
                    speaker=str(speaker).strip() if speaker is not None else None,
                    timestamp=ts,
                    session=si,
                )
            )
        if started is None:
            started = next((chunks[i].timestamp for i in indexes if chunks[i].timestamp), None)
        if started is None and len(raw_sessions) == 1:
            started = ref
        sessions.append(Session(index=si, started_at=started, chunk_indexes=indexes))
    if not chunks:
        raise InvalidInput(f"{source}: the conversation has no messages with text")
    reference = (
        ref or next((s.started_at for s in sessions if s.started_at), None) or datetime.now(UTC)
    )
    transcript = "\n\n".join(
        "\n".join(f"{chunks[i].speaker or '?'}: {chunks[i].text}" for i in s.chunk_indexes)
        for s in sessions
    )
    return ParsedDocument(
        source=source,
        title=title or _speaker_title(chunks),
        content_type="conversation",
        text=transcript or text,
        reference_time=reference,
        chunks=chunks,
        sessions=sessions,
    )


def parse_input(
    data: str | bytes,
    *,
    source: str,
    content_type: str = "auto",
    reference_time: datetime | None = None,
    filename: str | None = None,
) -> list[ParsedDocument]:
    """Parse one input into documents (one per input; a JSON list of conversations gives several).

    ``reference_time`` anchors relative dates; without it a conversation's first session date is
    used, else now. Raises :class:`InvalidInput` with what to fix.
    """
    if content_type != "auto" and content_type not in _CONTENT_TYPES:
        raise InvalidInput(f"content_type must be 'auto' or one of {', '.join(_CONTENT_TYPES)}")
    text = decode_input(data, source)
    ref = check_time(reference_time, "reference_time") if reference_time is not None else None
    # Front matter or e-mail headers: the note's own date and title, then its text.
    head = document_head(text) if content_type in ("auto", "text", "markdown", "dialog") else None
    kind = (
        cast(ContentType, content_type)
        if content_type != "auto"
        else detect_content_type(head.body if head is not None else text, filename)
    )
    if (
        content_type == "auto"
        and kind not in ("conversation", "draft")
        and text.lstrip().startswith(("{", "["))
        and _parses_as_json(text)
    ):
        raise InvalidInput(
            f'{source}: JSON that is neither a conversation ({{"sessions": [...]}}, one '
            'session {"messages": [...]}, or a list of {"speaker", "text"} messages) nor an '
            'episode draft ({"name", "summary", "facets"}); reshape it or pass it as text'
        )
    if kind in ("conversation", "draft"):
        obj = _load_json(text, source)
        if kind == "draft":
            title = obj.get("name") if isinstance(obj, dict) else None
            return [
                ParsedDocument(
                    source=source,
                    title=str(title or (Path(filename).stem if filename else source)),
                    content_type="draft",
                    text=text,
                    reference_time=ref or datetime.now(UTC),
                    chunks=[],
                )
            ]
        if (
            isinstance(obj, list)
            and obj
            and all(isinstance(c, dict) and "sessions" in c for c in obj)
        ):
            return [
                _conversation_document(c, text, f"{source}#{i}", ref) for i, c in enumerate(obj)
            ]
        if _json_kind(obj) != "conversation":
            raise InvalidInput(
                f'{source}: JSON is not a conversation; expected {{"sessions": [{{"started_at": ..., '
                '"messages": [{"speaker": ..., "text": ...}]}]}, one session object, or a list of messages'
            )
        return [_conversation_document(obj, text, source, ref)]
    if kind == "dialog":
        return [_dialog_document(text, source, ref, head)]
    return [_text_document(text, kind, source, ref or datetime.now(UTC), filename, head)]


# ---------------------------------------------------------------- sources


def _mtime(path: Path) -> datetime:
    return datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)


def iter_sources(paths: list[str]) -> list[SourceInput]:
    """Read files, directories (recursively, known text extensions, hidden entries skipped) and
    ``-`` (stdin) into ``(source name, bytes, mtime)`` tuples, in a deterministic order."""
    out: list[SourceInput] = []
    for raw in paths:
        if raw == "-":
            out.append(SourceInput("<stdin>", sys.stdin.buffer.read(), datetime.now(UTC)))
            continue
        path = Path(raw)
        if path.is_dir():
            found: list[Path] = []
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                found += [
                    Path(root) / f
                    for f in sorted(files)
                    if not f.startswith(".") and f.lower().endswith(TEXT_EXTENSIONS)
                ]
            if not found:
                raise InvalidInput(f"{raw}: no {' '.join(TEXT_EXTENSIONS)} files in this directory")
            out += [SourceInput(str(p), _read(p), _mtime(p)) for p in found]
        elif path.is_file():
            out.append(SourceInput(str(path), _read(path), _mtime(path)))
        else:
            raise InvalidInput(f"{raw}: no such file or directory")
    return out


def _read(path: Path) -> bytes:
    try:
        if path.stat().st_size > MAX_INPUT_BYTES:
            raise InvalidInput(f"{path}: larger than 50 MB; split it into smaller files")
        return path.read_bytes()
    except OSError as exc:
        raise InvalidInput(
            f"{path}: cannot be read ({exc.strerror}); check its permissions"
        ) from exc


__all__ = [
    "TEXT_EXTENSIONS",
    "SourceInput",
    "decode_input",
    "detect_content_type",
    "iter_sources",
    "parse_input",
    "parse_when",
]
