"""The hostile inputs of issue 25, as data: each case is one call (memorize, search, stats, ...)
with the arguments an attacker or a careless client sends, what memflow must answer, and the doors
it is sent through (``_hostile_doors`` turns a case into a Python call, a CLI run, an HTTP request
and an MCP tool call).

Every value that JSON can carry is written as it is; ``Deep`` stands for JSON nested thousands of
levels (built without recursion, sent as text), ``Raw`` for JSON text sent verbatim (NaN, an
integer of 5,000 digits). ``before`` says how the case failed on e710137, where it did.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

PYTHON, CLI, HTTP, MCP = "python", "cli", "http", "mcp"
DOORS = (PYTHON, CLI, HTTP, MCP)
ALL = frozenset(DOORS)
TEXT_DOORS = frozenset({CLI, HTTP, MCP})  # a value sent as text (JSON or a command line)

DATASET = (
    "hostile"  # seeded by the test module: notes with metadata, one poisoned by "an old version"
)
POISONED_DUE = "294276-12-31T23:59:59-15:00"
# Names a store may hold from before names were checked (inserted by the test module as an
# older memflow would have): they must stay listable, usable and droppable.
OLD_NAMES = ("old\x1b[31mred", "old\ttab", "old\nline")


@dataclass(frozen=True)
class Deep:
    """JSON nested ``depth`` levels: ``{"a": {"a": ... 1}}`` (``kind="object"``) or
    ``[[[...]]]`` (``"list"``)."""

    depth: int
    kind: str = "object"

    def json_text(self) -> str:
        if self.kind == "list":
            return "[" * self.depth + "1" + "]" * self.depth
        return '{"a": ' * self.depth + "1" + "}" * self.depth

    def value(self) -> Any:
        out: Any = 1
        for _ in range(self.depth):
            out = [out] if self.kind == "list" else {"a": out}
        return out


@dataclass(frozen=True)
class Raw:
    """JSON text sent as it is (``value`` is what Python makes of it, for the Python door)."""

    text: str

    def json_text(self) -> str:
        return self.text

    def value(self) -> Any:
        return json.loads(self.text)


def to_json(value: Any) -> str:
    """``value`` as JSON text; ``Deep`` and ``Raw`` (at any level of dicts and lists) as their
    text. Lone surrogates become ``\\udXXX`` escapes (valid JSON text)."""
    if isinstance(value, Deep | Raw):
        return value.json_text()
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {to_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(to_json(v) for v in value) + "]"
    return json.dumps(value)


def to_python(value: Any) -> Any:
    """``value`` as the Python object a caller of the library would pass."""
    if isinstance(value, Deep | Raw):
        return value.value()
    if isinstance(value, dict):
        return {k: to_python(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_python(v) for v in value]
    return value


@dataclass(frozen=True)
class Case:
    """One hostile call. ``expect``: "invalid" (InvalidInput, or the door's own 4xx refusal,
    naming one of ``names``), "ok" (answered), "partial" (a batch: the bad input reported by
    name, the others memorised), or an HTTP status for a request-level refusal."""

    id: str
    op: str  # memorize | search | stats | forget | episode | drafts | datasets | request
    args: dict[str, Any]
    expect: str
    names: tuple[str, ...] = ()
    doors: frozenset[str] = ALL
    before: str = ""  # how e710137 answered, where it failed
    issue: bool = False  # listed in issue 25 (must fail on e710137)
    tags: dict[str, Any] = field(default_factory=dict)


def conversation(started_at: Any = "2024-05-08T13:56:00Z", **message: Any) -> dict[str, Any]:
    """A two-message conversation; ``message`` overrides fields of the first message."""
    first = {"speaker": "Ana", "text": "We shipped the atlas release yesterday.", **message}
    return {
        "sessions": [
            {
                "started_at": started_at,
                "messages": [first, {"speaker": "Bo", "text": "Great, the demo is next week."}],
            }
        ]
    }


NOTE = "Mira moved the atlas launch to June 14; Dario owns the rollback plan."
NOTE2 = "The atlas budget review is on 3 March; Ines leads it."


def _memorize(id: str, expect: str, names: tuple[str, ...] = (), **kw: Any) -> Case:
    doors = kw.pop("doors", ALL)
    before, issue = kw.pop("before", ""), kw.pop("issue", False)
    kw.setdefault("text", f"{NOTE} ({id})")
    return Case(id, "memorize", kw, expect, names, doors, before, issue)


def _conv(id: str, expect: str, names: tuple[str, ...], conv: Any, **kw: Any) -> Case:
    """A conversation memorised as JSON text (a file for the CLI) and, for MCP and HTTP, as the
    same text; ``conversation_object`` cases send it as an object instead."""
    return _memorize(id, expect, names, text=conv, **kw)


def _search(id: str, expect: str, names: tuple[str, ...] = (), **kw: Any) -> Case:
    doors = kw.pop("doors", ALL)
    before, issue = kw.pop("before", ""), kw.pop("issue", False)
    kw.setdefault("query", "atlas launch")
    return Case(id, "search", kw, expect, names, doors, before, issue)


def _name(id: str, name: str, doors: frozenset[str] = ALL, **kw: Any) -> Case:
    return _memorize(id, "invalid", ("dataset name",), dataset=name, doors=doors, **kw)


BIG_INT = Raw("1" + "0" * 399)  # a 400-digit integer
HUGE_INT = Raw("1" + "0" * 4999)  # past Python's int-from-text limit


CASES: tuple[Case, ...] = (
    # -- issue 25, item 3: a date that passes the timestamp check but overflows timestamptz
    _memorize("metadata_date_past_9999", "invalid", ("due",), metadata={"due": POISONED_DUE},
              issue=True, before="stored; every later date filter on the dataset fails [22008]"),
    _search("where_dates_with_a_poisoned_row", "ok", where={"due": {"gte": "2026-01-01"}},
            issue=True, before="DatabaseError [22008] timestamp out of range (HTTP 503, CLI 1)"),
    _search("where_dates_poisoned_lt", "ok", where={"due": {"lt": "2030-01-01T00:00:00+02:00"}},
            before="DatabaseError [22008]"),
    # -- item 4: inputs that escaped as internal errors
    _search("where_400_digit_integer", "invalid", ("'n'",), where={"n": BIG_INT}, issue=True,
            before="OverflowError (CLI exit 70, HTTP 500)"),
    _search("where_400_digit_integer_range", "invalid", ("'n'",), where={"n": {"gte": BIG_INT}},
            issue=True, before="OverflowError"),
    _search("where_5000_digit_integer", "invalid", ("where", "n"), where={"n": HUGE_INT},
            doors=TEXT_DOORS, before="CLI: ValueError, exit 70"),
    _search("where_nested_5000_deep", "invalid", ("where", "nested", "body"),
            where={"a": {"in": [Deep(5000, "list")]}}, issue=True,
            before="CLI: RecursionError, exit 70"),
    _memorize("metadata_nested_5000_deep", "invalid", ("metadata", "nested", "body"),
              metadata={"x": Deep(5000)}, issue=True, before="RecursionError (CLI 70, HTTP 500)"),
    _conv("conversation_nested_5000_deep", "invalid", ("nested", "body", "json"),
          Raw('{"messages": ' + Deep(5000, "list").json_text() + "}"), issue=True,
          before="RecursionError (CLI 70, HTTP 500)"),
    _conv("conversation_dated_9999_12_31", "invalid", ("started_at",),
          conversation(started_at="9999-12-31"), issue=True,
          before="OverflowError in the rules extractor (CLI 70, HTTP 500)"),
    Case("folder_with_a_conversation_dated_9999", "memorize", {"folder": {
        "a-notes.md": f"# Notes\n\n{NOTE}\n", "b-bad.json": conversation(started_at="9999-12-31"),
        "c-more.md": f"# More\n\n{NOTE2}\n"}}, "partial", ("b-bad.json",),
        frozenset({PYTHON, CLI, MCP}), "OverflowError stopped the batch: c-more.md never memorised",
        True),
    _conv("conversation_nul_in_text", "invalid", ("text", "nul"), conversation(text="hi \u0000 there"),
          issue=True, before="DatabaseError 'database error' (HTTP 503)"),
    _conv("conversation_nul_in_speaker", "invalid", ("speaker", "nul"),
          conversation(speaker="A\u0000na"), issue=True, before="DatabaseError (HTTP 503)"),
    _conv("conversation_lone_surrogate_in_text", "invalid", ("text", "surrogate"),
          conversation(text="hi \ud800 there"), issue=True,
          before="pydantic ValidationError (HTTP 500)"),
    _conv("conversation_lone_surrogate_in_speaker", "invalid", ("speaker", "surrogate"),
          conversation(speaker="A\udfffna"), issue=True, before="UnicodeEncodeError"),
    _search("where_40000_or_terms", "invalid", ("filter", "conditions", "bytes"),
            where={"or": [{"k": i} for i in range(40_000)]}, issue=True,
            doors=frozenset({PYTHON, HTTP, MCP}),  # over a command line's length limit
            before="ConnectionFailed 'retry the call' (HTTP 503)"),
    # -- item 5: MCP memorize and a conversation
    _memorize("json_looking_text_is_a_conversation", "ok", text=json.dumps(conversation(
              text="Kai watered the ferns on Friday.")), issue=True,
              before="MCP: 'Input should be a valid string'"),
    _memorize("conversation_as_an_object", "ok", text=None, conversation_object=conversation(
              text="Kai sold the ferns to a neighbour."), doors=frozenset({HTTP, MCP}),
              issue=True, before="no conversation argument"),
    _memorize("conversation_object_not_a_conversation", "invalid", ("conversation", "text"),
              text=None, conversation_object={"title": "no messages here"},
              doors=frozenset({HTTP, MCP})),
    # -- item 6: keyless serve and DNS rebinding
    Case("host_header_of_another_site", "request", {"headers": {"Host": "evil.example.com"}},
         "421", ("evil.example.com",), frozenset({HTTP}), "200 with every dataset", True),
    Case("origin_of_another_site", "request", {"headers": {"Origin": "http://evil.example.com"}},
         "403", ("evil.example.com",), frozenset({HTTP}), "200 with every dataset", True),
    Case("origin_null", "request", {"headers": {"Origin": "null"}}, "403", ("null",),
         frozenset({HTTP}), "200"),
    Case("host_localhost_with_a_port", "request", {"headers": {"Host": "localhost:1234"}}, "200",
         (), frozenset({HTTP})),
    # -- item 9: dataset names
    _name("dataset_name_with_esc", "esc\x1b[2J", issue=True, before="created, printed raw"),
    _name("dataset_name_with_tab", "tab\tname", issue=True, before="created"),
    _name("dataset_name_with_newline", "new\nline", issue=True, before="created"),
    _name("dataset_name_with_slash", "team/notes", doors=frozenset({PYTHON, CLI, MCP}), issue=True,
          before="created, then 404 over HTTP"),
    _name("dataset_name_dot_dot", "..", doors=frozenset({PYTHON, CLI, MCP}), before="created"),
    _name("dataset_name_with_del", "del\x7fname", before="created"),
    _name("dataset_name_with_c1_csi", "csi\x9b31m", before="created"),
    _name("dataset_name_with_bidi_override", "abc\u202etxt.exe", before="created"),
    _name("dataset_name_with_line_separator", "a\u2028b", before="created"),
    _name("dataset_name_lone_surrogate", "x\ud800", doors=frozenset({PYTHON, MCP}),
          before="UnicodeEncodeError (bare)"),
    _name("dataset_name_201_chars", "n" * 201),
    Case("old_name_with_esc_stats", "stats", {"dataset": OLD_NAMES[0]}, "ok"),
    Case("old_name_with_tab_stats", "stats", {"dataset": OLD_NAMES[1]}, "ok"),
    Case("old_names_listed_escaped", "datasets", {}, "ok", before="printed raw"),
    # -- metadata
    _memorize("metadata_400_digit_integer", "invalid", ("'n'",), metadata={"n": BIG_INT}),
    _memorize("metadata_nan", "invalid", ("nan", "metadata", "json"), metadata={"x": Raw("NaN")},
              doors=frozenset({PYTHON, CLI, HTTP})),
    _memorize("metadata_nul_in_value", "invalid", ("nul",), metadata={"k": "a\u0000b"}),
    _memorize("metadata_lone_surrogate_key", "invalid", ("surrogate",), metadata={"\ud800": 1}),
    _memorize("metadata_300_kb", "invalid", ("metadata",), metadata={"k": "x" * 300_000},
              doors=frozenset({PYTHON, HTTP, MCP})),  # over a command-line argument's limit
    _memorize("metadata_a_list", "invalid", ("metadata",), metadata=[1, 2]),
    _memorize("metadata_date_year_10000", "invalid", ("due",), metadata={"due": "10000-01-01"}),
    _memorize("metadata_date_9999_minus_15", "ok", metadata={"due": "9999-12-31T23:59:59-15:00"}),
    # -- scope
    _memorize("scope_with_esc", "invalid", ("scope",), scope={"user": "u\x1b[2J"}),
    _memorize("scope_with_newline", "invalid", ("scope",), scope={"user": "u1\nu2"}),
    _memorize("scope_with_nul", "invalid", ("scope",), scope={"user": "u\u0000"},
              doors=frozenset({PYTHON, HTTP, MCP})),  # a command line cannot hold NUL
    _memorize("scope_600_chars", "invalid", ("scope",), scope={"user": "u" * 600}),
    _memorize("scope_unknown_key", "invalid", ("team",), scope={"team": "x"}),
    _search("search_scope_with_surrogate", "invalid", ("scope", "surrogate"),
            scope={"user": "\ud800"}, doors=frozenset({PYTHON, HTTP, MCP})),
    # -- times
    _memorize("reference_time_9999_12_31", "invalid", ("reference_time",),
              reference_time="9999-12-31"),
    _memorize("reference_time_year_1", "invalid", ("reference_time",), reference_time="0001-01-01"),
    _memorize("reference_time_year_10000", "invalid", ("reference",),
              reference_time="10000-01-01", doors=TEXT_DOORS),
    _conv("message_ts_1e20_seconds", "invalid", ("ts",), conversation(ts=1e20),
          before="OverflowError"),
    _conv("message_ts_minus_1e15_seconds", "invalid", ("ts",), conversation(ts=-1e15),
          before="OverflowError"),
    _conv("message_ts_nan", "invalid", ("nan", "ts", "json"), Raw(to_json(conversation(
          ts=Raw("NaN")))), before="ValueError"),
    _conv("message_ts_past_9999_in_utc", "invalid", ("ts",),
          conversation(ts="9999-12-31T23:59:59-15:00"), before="OverflowError"),
    _conv("session_year_1_plus_14", "invalid", ("started_at",),
          conversation(started_at="0001-01-01T00:00:00+14:00"), before="OverflowError"),
    _conv("session_year_294276", "invalid", ("started_at",), conversation(started_at="294276-01-01")),
    _conv("speaker_name_of_2000_chars", "invalid", ("speaker",), conversation(speaker="S" * 2000),
          before="pydantic ValidationError (bare)"),
    _conv("conversation_5000_digit_integer", "invalid", ("json", "integer", "digits"),
          Raw('{"messages": [{"speaker": "A", "text": "hi", "n": ' + HUGE_INT.text + "}]}"),
          doors=TEXT_DOORS, before="ValueError"),
    _memorize("dialog_timestamp_past_9999", "invalid", ("line 1",),
              text="[9999-12-31T23:59:59-15:00] Ana: we met\n[2024-05-08T10:00:00Z] Bo: yes\n"
                   "Ana: and again\n", before="OverflowError"),
    _search("now_9999_12_31", "invalid", ("now",), now="9999-12-31T23:59:59"),
    _search("now_year_1", "invalid", ("now",), now="0001-01-01T00:00:00"),
    _search("now_not_a_time", "invalid", ("now",), now="next tuesday", doors=TEXT_DOORS),
    _search("where_date_bound_year_10000", "invalid", ("'due'",), where={"due": {"gte": "10000-01-01"}}),
    _search("where_date_bound_9999_minus_15", "ok",
            where={"due": {"gte": "9999-12-31T23:59:59-15:00"}}),
    _search("where_date_bound_year_1_plus_15", "ok", where={"due": {"lt": "0001-01-01T00:00:00+15:00"}}),
    # -- text and queries
    _memorize("text_lone_surrogate", "invalid", ("surrogate",), text="hello \udc80 world. More.",
              doors=frozenset({PYTHON, HTTP, MCP}), before="UnicodeEncodeError (bare)"),
    _memorize("text_only_control_characters", "invalid", ("non-text", "empty"),
              text="\x1b[2J\x1b[31m\x07\x08" * 20),
    _memorize("text_nul_inside", "ok", text="Tove fixed the \u0000heater on Monday. It works.",
              doors=frozenset({PYTHON, HTTP, MCP})),
    _search("query_lone_surrogate", "invalid", ("query", "surrogate"), query="atlas \ud800",
            doors=frozenset({PYTHON, HTTP, MCP})),
    _search("query_with_terminal_escapes", "ok", query="\x1b[2J\x1b]0;pwned\x07 atlas"),
    _search("query_nul_inside", "ok", query="atlas\u0000 launch", doors=frozenset({PYTHON, HTTP, MCP})),
    # -- filters
    _search("where_nul_in_key", "invalid", ("nul",), where={"k\u0000": 1}),
    _search("where_lone_surrogate_value", "invalid", ("surrogate",), where={"k": "\udc00"}),
    _search("where_nan_bound", "invalid", ("nan", "where", "json"), where={"n": {"gte": Raw("NaN")}},
            doors=frozenset({PYTHON, CLI, HTTP})),
    _search("where_in_list_of_5000", "invalid", ("'in'",), where={"k": {"in": list(range(5000))}}),
    _search("where_or_nested_20_deep", "invalid", ("nested",),
            where={"or": [{"or": [{"or": [{"or": [{"or": [{"or": [{"or": [{"or": [{"or": [{"or": [
                {"or": [{"or": [{"or": [{"or": [{"or": [{"or": [{"or": [{"or": [{"k": 1}]}]}]}]}]}]}
                ]}]}]}]}]}]}]}]}]}]}]}]}),
    _search("where_not_an_object", "invalid", ("where", "object"), where=["project"]),
    # -- drafts
    Case("draft_time_9999_minus_14", "drafts", {"drafts": [{"name": "late", "summary": "a late draft",
         "time": {"start": "9999-12-31T00:00:00-14:00", "end": "9999-12-31T23:59:59-14:00"}}]},
         "invalid", ("time",), before="stored; every later search of the dataset fails"),
    Case("draft_nested_5000_deep", "drafts", {"drafts": Raw("[" + Deep(5000).json_text() + "]")},
         "invalid", ("nested", "json", "body"), TEXT_DOORS, "RecursionError"),
    # -- ids
    Case("forget_id_with_surrogate", "forget", {"document_id": "\ud800"}, "invalid", ("id",),
         frozenset({PYTHON, HTTP, MCP})),
    Case("forget_id_of_10000_chars", "forget", {"episode_id": "x" * 10_000}, "invalid", ("id",)),
    Case("episode_id_with_esc", "episode", {"episode_id": "\x1b[2J"}, "invalid", ("id",)),
)  # fmt: skip


def by_id(case_id: str) -> Case:
    return next(c for c in CASES if c.id == case_id)


__all__ = [
    "ALL",
    "CASES",
    "CLI",
    "DATASET",
    "DOORS",
    "HTTP",
    "MCP",
    "OLD_NAMES",
    "POISONED_DUE",
    "PYTHON",
    "Case",
    "Deep",
    "Raw",
    "by_id",
    "conversation",
    "to_json",
    "to_python",
]
