"""What memflow takes from outside, checked in one place: times, JSON, strings and names.

Every door (the Python API, the CLI, ``memflow serve``, ``memflow mcp``) reaches these checks
through the layer that uses the value (``db.filters``, ``ingest.parse``, ``store.datasets``,
``text.timeparse``, ``service``), so a value is judged the same way whichever door it came in by.
Each failure is an :class:`~memflow.errors.InvalidInput` that names the field and says what
memflow takes.

- **Times** memflow computes with (a reference time, a search's ``now``, a session's or a
  message's date, an episode draft's time span) lie between :data:`MIN_TIME` and
  :data:`MAX_TIME` (UTC). The year of margin at each end of Python's calendar (years 1 to 9999)
  lets memflow shift a time to any time zone and derive a day, week, month or year from it
  ("next year" said on 9998-12-31) without leaving what Python and PostgreSQL represent. A time
  outside (such as the ``9999-12-31`` some systems write for "never") is refused, not clamped.
- **JSON** (a conversation file, episode drafts, ``metadata``, ``where``) nests at most
  :data:`MAX_JSON_DEPTH` levels; its strings hold no NUL (``\\u0000``, which PostgreSQL text
  cannot store) and no lone surrogate (``\\ud800``, not Unicode text); its numbers are finite
  and within a double's range (:data:`MAX_JSON_NUMBER`).
- **Names** (datasets, scope values) hold no control characters (tab, newline, ESC, DEL, the C1
  range), no line or paragraph separators and no bidirectional overrides: they are printed in
  terminals and logs. A new dataset's name is also usable in a URL path: no ``/``, not ``.``
  or ``..``.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from typing import Any

from memflow.errors import InvalidInput

MIN_TIME = datetime(2, 1, 1, tzinfo=UTC)
MAX_TIME = datetime(9998, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
TIME_RANGE = "0002-01-01 to 9998-12-31 (UTC)"
MAX_JSON_DEPTH = 64
MAX_JSON_NUMBER = 1e308
MAX_NAME_CHARS = 200

_SURROGATE = re.compile("[\ud800-\udfff]")
# Unsafe in a terminal: the controls (Unicode category Cc: C0, DEL, C1), surrogates (Cs), the
# line and paragraph separators (Zl, Zp) and the format characters that reorder text (bidi).
_UNSAFE = "\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNSAFE_RE = re.compile(f"[{_UNSAFE}]")


# ---------------------------------------------------------------- times


def check_time(when: datetime, what: str) -> datetime:
    """``when`` (naive: UTC) if it lies in memflow's time range, else InvalidInput."""
    if not isinstance(when, datetime):
        raise InvalidInput(f"{what} must be a date-time, got {type(when).__name__}")
    aware = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    if not MIN_TIME <= aware <= MAX_TIME:
        raise InvalidInput(
            f"{what} {aware.isoformat()} is outside the times memflow takes ({TIME_RANGE}): "
            "give a real date"
        )
    return aware


def parse_iso(value: str, what: str) -> datetime:
    """An ISO 8601 date or date-time (``Z`` allowed; naive: UTC) in memflow's time range."""
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(
            f"{what} {value!r} is not an ISO 8601 time: use e.g. 2024-05-08 or 2024-05-08T13:56:00Z"
        ) from None
    return check_time(when, what)


def from_epoch(seconds: float, what: str) -> datetime:
    """Unix seconds as a UTC time in memflow's time range."""
    try:
        inside = MIN_TIME.timestamp() <= float(seconds) <= MAX_TIME.timestamp()
    except OverflowError:  # an integer beyond a double
        inside = False
    if not inside:
        raise InvalidInput(
            f"{what} {seconds!r} (Unix seconds) is outside the times memflow takes "
            f"({TIME_RANGE}): give a real date"
        )
    return datetime.fromtimestamp(seconds, tz=UTC)


# ---------------------------------------------------------------- strings


def lone_surrogate(text: str) -> int | None:
    """The offset of the first lone surrogate in ``text`` (not Unicode text), or None."""
    m = _SURROGATE.search(text)
    return m.start() if m else None


def check_text(text: str, what: str) -> str:
    """``text`` if it is Unicode text (no lone surrogate), else InvalidInput."""
    at = lone_surrogate(text)
    if at is not None:
        raise InvalidInput(
            f"{what} holds a lone surrogate (U+{ord(text[at]):04X}) at character {at}, which is "
            "not Unicode text: send valid UTF-8"
        )
    return text


def unsafe_char(ch: str) -> bool:
    """A character that must never reach a terminal raw: controls (tab, newline and ESC
    included), surrogates, line and paragraph separators, bidirectional overrides."""
    return _UNSAFE_RE.match(ch) is not None


def escape_unsafe(text: str, keep: str = "", *, json_text: bool = False) -> str:
    """``text`` with every unsafe character but those in ``keep`` written as an escape, safe to
    print: ``\\x1b``, ``\\t``, ``\\u202e`` (Python's), or ``\\u001b`` in ``json_text`` (JSON
    whose strings may hold such characters raw: the escape keeps it the same JSON)."""

    def escape(m: re.Match[str]) -> str:
        ch = m.group()
        if ch in keep:
            return ch
        return f"\\u{ord(ch):04x}" if json_text else repr(ch)[1:-1]

    return _UNSAFE_RE.sub(escape, text)


_NAME_RULE = (
    f"use at most {MAX_NAME_CHARS} letters, digits, spaces or punctuation (any script), "
    "without control characters such as tab, newline or ESC"
)


def check_label(value: Any, what: str, *, max_chars: int = MAX_NAME_CHARS) -> str:
    """A name-like string (a scope value, a dataset name): non-empty, at most ``max_chars``,
    no NUL, no lone surrogate and no unsafe character."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{what} must be a non-empty string, got {value!r}: {_NAME_RULE}")
    if len(value) > max_chars:
        raise InvalidInput(f"{what} is {len(value)} characters long: {_NAME_RULE}")
    bad = _UNSAFE_RE.search(value)
    if bad is not None:
        raise InvalidInput(f"{what} {value!r} holds {bad.group()!r}: {_NAME_RULE}")
    return value


def check_dataset_name(name: Any) -> str:
    """The name of a new dataset: a label (:func:`check_label`) that also works as one segment
    of a URL path (``/v1/datasets/{name}/...``): no ``/``, not ``.`` or ``..``."""
    check_label(name, "dataset name")
    if "/" in name or name in (".", ".."):
        raise InvalidInput(
            f"dataset name {name!r} cannot be a URL path segment: use a name without '/' that "
            "is not '.' or '..' (e.g. 'team-notes')"
        )
    return str(name)


# ---------------------------------------------------------------- JSON


def _json_leaf(value: Any, path: str) -> None:
    if isinstance(value, str):
        if "\x00" in value:
            raise InvalidInput(f"{path} holds a NUL character (\\u0000): remove it")
        check_text(value, path)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int):
        if abs(value) > MAX_JSON_NUMBER:
            digits = int(value.bit_length() * math.log10(2)) + 1
            raise InvalidInput(
                f"{path} is an integer of about {digits} digits: use numbers within ±1e308"
            )
    elif isinstance(value, float) and not math.isfinite(value):
        raise InvalidInput(f"{path} is {value!r}: use a finite number")


def _step(path: str, key: str | int, dotted: bool) -> str:
    """``path`` one level down: ``metadata['due']``, ``where['or'][3]``; in a document (a
    ``what`` ending in a colon) ``notes.json: sessions[0].text``."""
    if isinstance(key, int):
        return f"{path} [{key}]" if path.endswith(":") else f"{path}[{key}]"
    if dotted and key.isidentifier():
        return f"{path} {key}" if path.endswith(":") else f"{path}.{key}"
    return f"{path}[{key[:40]!r}]"


def check_json(value: Any, what: str, *, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Check a JSON-like value (dicts, lists, strings, numbers) without recursion: at most
    ``max_depth`` levels, string keys and values without NUL or lone surrogates, finite numbers
    within ±1e308. Other leaves (a datetime in a filter) are left to the caller. Errors name
    the place (``metadata['due']``; ``notes.json: sessions[0].messages[2].text`` when ``what``
    is ``"notes.json:"``)."""
    dotted = what.endswith(":")
    stack: list[tuple[Any, str, int]] = [(value, what, 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, dict | list | tuple):
            if depth >= max_depth:
                raise InvalidInput(
                    f"{_short(path)} is nested deeper than {max_depth} levels: flatten it "
                    f"(memflow takes at most {max_depth} levels of objects and lists)"
                )
            if isinstance(item, dict):
                for key, sub in item.items():
                    if not isinstance(key, str):
                        raise InvalidInput(f"{path} has a key {key!r} that is not a string")
                    _json_leaf(key, f"{_short(path)} key {key[:40]!r}")
                    stack.append((sub, _step(path, key, dotted), depth + 1))
            else:
                stack.extend((sub, _step(path, i, dotted), depth + 1) for i, sub in enumerate(item))
        else:
            _json_leaf(item, _short(path))


def _short(path: str) -> str:
    return path if len(path) <= 120 else f"{path[:70]}…{path[-40:]}"


MALFORMED = "{what}: malformed JSON at line {line} column {column} ({msg})"


def load_json(text: str, what: str, *, malformed: str = MALFORMED, check: bool = True) -> Any:
    """``text`` parsed as JSON and checked (:func:`check_json`, unless ``check`` is false: a
    value checked where it is used, such as a filter); InvalidInput naming ``what`` (a file or a
    field) when it is malformed (``malformed``: the message, with ``{what}``, ``{line}``,
    ``{column}``, ``{msg}``), nests too deep or holds a number longer than Python reads."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            malformed.format(what=what, line=exc.lineno, column=exc.colno, msg=exc.msg)
        ) from None
    except RecursionError:
        raise InvalidInput(
            f"{what}: JSON nested deeper than {MAX_JSON_DEPTH} levels: flatten it"
        ) from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise InvalidInput(f"{what}: JSON that Python cannot read ({exc}): fix it") from None
    if check:
        check_json(value, f"{what}:")
    return value


__all__ = [
    "MALFORMED",
    "MAX_JSON_DEPTH",
    "MAX_JSON_NUMBER",
    "MAX_NAME_CHARS",
    "MAX_TIME",
    "MIN_TIME",
    "TIME_RANGE",
    "check_dataset_name",
    "check_json",
    "check_label",
    "check_text",
    "check_time",
    "escape_unsafe",
    "from_epoch",
    "load_json",
    "lone_surrogate",
    "parse_iso",
    "unsafe_char",
]
