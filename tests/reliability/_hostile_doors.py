"""Sending one hostile case (``_hostile_cases``) through one of memflow's four doors, and judging
the answer: the Python API (``Memory``/``Dataset``), the CLI (a ``python -m memflow.cli``
subprocess), ``memflow serve`` (a real server process, httpx) and ``memflow mcp`` (a real server
process over streamable HTTP, raw JSON-RPC: the bytes any MCP client sends).

Each door returns an ``Answer``: the outcome as the door shows it (a kind, a status, the
message) plus any sign of an internal error (a traceback, CLI exit 70, HTTP 5xx, an MCP tool
error without a message). ``judge`` compares it with what the case expects.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from memflow.errors import InvalidInput, MemflowError
from memflow.memory import Memory

from ._hostile_cases import DATASET, Case, to_json, to_python

TERMINAL_UNSAFE = ("\x1b", "\x9b", "\u202e", "\x07")


@dataclass
class Answer:
    """What a door answered: ``kind`` is "ok", "rejected" (a clean refusal: InvalidInput, a CLI
    error, HTTP 4xx, an MCP tool or protocol error) or "internal"; ``message`` is what the caller
    reads; ``problems`` lists what must never happen (tracebacks, raw terminal escapes)."""

    kind: str
    message: str = ""
    status: int | None = None
    payload: Any = None
    problems: list[str] = field(default_factory=list)
    by_protocol: bool = False  # refused by the MCP transport's own JSON parser (no field named)


def judge(case: Case, answer: Answer) -> list[str]:
    """What is wrong with ``answer`` for ``case`` (empty when it is right)."""
    wrong = list(answer.problems)
    if answer.kind == "internal":
        return [*wrong, f"internal error: {answer.message[:300]}"]
    if case.expect.isdigit():
        if answer.status != int(case.expect):
            wrong.append(f"status {answer.status}, expected {case.expect}: {answer.message[:200]}")
    elif case.expect in ("ok", "partial"):
        if answer.kind != "ok":
            wrong.append(f"refused: {answer.message[:300]}")
    elif answer.kind != "rejected":
        wrong.append(f"accepted, expected a refusal: {str(answer.payload)[:200]}")
    if case.names and case.expect != "ok" and not answer.by_protocol:
        failed = [d for d in _documents(answer) if d["status"] == "failed"]
        low = (answer.message + json.dumps(failed)).lower()
        if not any(n.lower() in low for n in case.names):
            wrong.append(f"the message names none of {case.names}: {answer.message[:300]}")
    if case.expect == "partial":
        wrong += _partial_problems(case, answer)
    return wrong


def _documents(answer: Answer) -> list[dict[str, Any]]:
    payload = answer.payload
    return list(payload.get("documents", [])) if isinstance(payload, dict) else []


def _partial_problems(case: Case, answer: Answer) -> list[str]:
    """A batch with one bad input: that input failed (named), every other one was memorised."""
    docs = _documents(answer)
    failed = [d for d in docs if d["status"] == "failed"]
    done = [d for d in docs if d["status"] in ("written", "skipped")]
    expected = len(case.args["folder"]) - 1
    out = []
    if len(failed) != 1 or len(done) != expected:
        out.append(f"expected 1 failed and {expected} memorised, got {[d['status'] for d in docs]}")
    return out


def _text_of(value: Any) -> str | None:
    """A memorize ``text`` argument as the text sent (a conversation object as its JSON)."""
    if value is None or isinstance(value, str):
        return value
    return to_json(value)


def _time(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def _write_folder(root: Path, files: dict[str, Any]) -> Path:
    folder = root / "batch"
    folder.mkdir(exist_ok=True)
    for name, content in files.items():
        (folder / name).write_text(
            content if isinstance(content, str) else to_json(content), encoding="utf-8"
        )
    return folder


# -- the Python API -----------------------------------------------------------------------------


def python_door(mem: Memory, case: Case, scratch: Path) -> Answer:
    a = {k: to_python(v) for k, v in case.args.items() if k not in ("text", "folder")}
    try:
        payload = _python_call(mem, case, a, scratch)
    except InvalidInput as exc:
        return Answer("rejected", str(exc))
    except MemflowError as exc:  # a clean refusal of another kind is judged by its message
        return Answer("rejected", f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # a bare exception: what the suite exists to catch
        return Answer("internal", f"{type(exc).__name__}: {exc}")
    return Answer("ok", payload=payload)


def _python_call(mem: Memory, case: Case, a: dict[str, Any], scratch: Path) -> Any:
    name = a.get("dataset", DATASET)
    if case.op == "memorize":
        folder = case.args.get("folder")
        source = _write_folder(scratch, folder) if folder else _text_of(case.args.get("text"))
        ds = mem.dataset(name)
        report = ds.memorize(
            source,
            metadata=a.get("metadata"),
            scope=a.get("scope"),
            reference_time=_time(a.get("reference_time")),
            raise_on_error=not folder,
        )
        return report.to_json()
    if case.op == "search":
        ds = mem.dataset(name, create=False)
        return ds.search(
            a["query"], where=a.get("where"), scope=a.get("scope"), now=_time(a.get("now"))
        ).model_dump(mode="json")
    if case.op == "stats":
        return mem.dataset(name, create=False).stats()
    if case.op == "datasets":
        return [d.name for d in mem.datasets()]
    if case.op == "drafts":
        return str(mem.dataset(name).add_episodes(a["drafts"]))
    if case.op == "forget":
        return mem.dataset(name, create=False).forget(
            document_id=a.get("document_id"), episode_id=a.get("episode_id")
        )
    if case.op == "episode":
        return mem.dataset(name, create=False).episode_tree(a["episode_id"])
    raise AssertionError(f"the Python door has no {case.op}")


# -- the CLI ------------------------------------------------------------------------------------


def cli_argv(case: Case, scratch: Path) -> list[str]:
    """The ``memflow`` arguments of ``case`` (files it reads written under ``scratch``)."""
    a = case.args
    name = ["-d", a.get("dataset", DATASET)]
    if case.op == "memorize":
        if "folder" in a:
            target = str(_write_folder(scratch, a["folder"]))
        else:
            text = _text_of(a["text"])
            assert text is not None
            suffix = ".json" if not isinstance(a["text"], str) else ".txt"
            path = scratch / f"input{suffix}"
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
            target = str(path)
        argv = ["memorize", target, *name, "--progress", "none"]
        if "metadata" in a:
            argv += ["--metadata", to_json(a["metadata"])]
        argv += [f"--scope={k}={v}" for k, v in (a.get("scope") or {}).items()]
        if "reference_time" in a:
            argv += ["--reference-time", a["reference_time"]]
        return argv
    if case.op == "search":
        argv = ["search", a["query"], *name]
        if "where" in a:
            argv += ["--where", to_json(a["where"])]
        argv += [f"--scope={k}={v}" for k, v in (a.get("scope") or {}).items()]
        return argv + (["--now", a["now"]] if "now" in a else [])
    if case.op == "stats":
        return ["stats", *name]
    if case.op == "datasets":
        return ["datasets"]
    if case.op == "drafts":
        path = scratch / "drafts.json"
        path.write_text(to_json(a["drafts"]), encoding="utf-8")
        return ["add-episode", str(path), *name]
    if case.op == "forget":
        which = "--document" if "document_id" in a else "--episode"
        return ["forget", which, a.get("document_id") or a["episode_id"], *name]
    if case.op == "episode":
        return ["show", a["episode_id"], *name]
    raise AssertionError(f"the CLI door has no {case.op}")


def cli_door(cmd: list[str], argv: list[str], *, json_out: bool = True) -> Answer:
    """Run ``memflow`` (``cmd``: the interpreter and common options) with ``argv``."""
    full = [*cmd[:3], *argv, *cmd[3:], *(["--json"] if json_out else [])]
    res = subprocess.run(full, capture_output=True, text=True, timeout=600, errors="replace")
    problems = [
        f"raw {ch!r} in the CLI's output" for ch in TERMINAL_UNSAFE if ch in res.stdout + res.stderr
    ]
    if "Traceback" in res.stderr:
        problems.append("a traceback on stderr")
    if res.returncode == 70 or "internal error" in res.stderr:
        return Answer("internal", res.stderr.strip(), res.returncode, problems=problems)
    payload = None
    if json_out and res.stdout.strip():
        try:
            payload = json.loads(res.stdout)
        except json.JSONDecodeError:
            problems.append(f"--json printed something else: {res.stdout[:200]}")
    kind = "ok" if res.returncode == 0 else "rejected"
    docs = payload.get("documents") if isinstance(payload, dict) else None
    if docs:  # memorize exits 1 when a document failed: a batch that memorised others is "ok"
        kind = "ok" if any(d["status"] != "failed" for d in docs) else "rejected"
    return Answer(kind, res.stderr.strip(), res.returncode, payload, problems)


# -- memflow serve ------------------------------------------------------------------------------


def _body(fields: dict[str, Any]) -> str:
    """A JSON body from fields whose values may be Deep/Raw (sent as their text)."""
    return "{" + ", ".join(f"{json.dumps(k)}: {to_json(v)}" for k, v in fields.items()) + "}"


def http_door(client: httpx.Client, case: Case) -> Answer:
    a = case.args
    ds = quote(a.get("dataset", DATASET), safe="", errors="surrogatepass")
    headers = {"Content-Type": "application/json"}
    if case.op == "memorize":
        fields = {k: v for k, v in a.items() if k in ("metadata", "scope", "reference_time")}
        if "conversation_object" in a:
            fields["conversation"] = a["conversation_object"]
        else:
            fields["text"] = _text_of(a["text"])
        resp = client.post(f"/v1/datasets/{ds}/memorize", content=_body(fields), headers=headers)
    elif case.op == "search":
        fields = {k: v for k, v in a.items() if k in ("query", "where", "scope", "now")}
        resp = client.post(f"/v1/datasets/{ds}/search", content=_body(fields), headers=headers)
    elif case.op == "stats":
        resp = client.get(f"/v1/datasets/{ds}/stats")
    elif case.op == "datasets":
        resp = client.get("/v1/datasets")
    elif case.op == "drafts":
        body = _body({"text": to_json(a["drafts"]), "content_type": "draft"})
        resp = client.post(f"/v1/datasets/{ds}/memorize", content=body, headers=headers)
    elif case.op == "forget":
        what = "documents" if "document_id" in a else "episodes"
        ident = quote(a.get("document_id") or a["episode_id"], safe="", errors="surrogatepass")
        resp = client.delete(f"/v1/datasets/{ds}/{what}/{ident}")
    elif case.op == "episode":
        resp = client.get(f"/v1/datasets/{ds}/episodes/{quote(a['episode_id'], safe='')}")
    elif case.op == "request":
        resp = client.get(a.get("path", "/v1/datasets"), headers=a["headers"])
    else:
        raise AssertionError(f"the HTTP door has no {case.op}")
    return http_answer(resp)


def http_answer(resp: httpx.Response) -> Answer:
    problems = ["a traceback in the response"] if "Traceback" in resp.text else []
    try:
        payload = resp.json()
    except ValueError:
        return Answer("internal", f"not JSON: {resp.text[:200]}", resp.status_code)
    if resp.status_code >= 500:
        return Answer("internal", resp.text, resp.status_code, payload, problems)
    if resp.status_code >= 400:
        error = payload.get("error", {})
        message = f"{error.get('type')}: {error.get('message')}"
        return Answer("rejected", message, resp.status_code, payload, problems)
    return Answer("ok", "", resp.status_code, payload, problems)


# -- memflow mcp --------------------------------------------------------------------------------


class McpSession:
    """A streamable-HTTP MCP session spoken in raw JSON-RPC (so a case can send any bytes)."""

    VERSION = "2025-06-18"

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = httpx.Client(timeout=300)
        self.headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        self.next_id = 1
        init = self.rpc(
            "initialize",
            json.dumps({"protocolVersion": self.VERSION, "capabilities": {},
                        "clientInfo": {"name": "hostile-suite", "version": "1"}}),
        )  # fmt: skip
        assert "result" in init.json(), init.text
        if init.headers.get("mcp-session-id"):
            self.headers["mcp-session-id"] = init.headers["mcp-session-id"]
        self.headers["mcp-protocol-version"] = init.json()["result"]["protocolVersion"]
        note = '{"jsonrpc": "2.0", "method": "notifications/initialized"}'
        assert self.http.post(self.url, content=note, headers=self.headers).status_code < 300

    def rpc(self, method: str, params_json: str) -> httpx.Response:
        self.next_id += 1
        body = f'{{"jsonrpc": "2.0", "id": {self.next_id}, "method": "{method}", "params": {params_json}}}'
        return self.http.post(self.url, content=body, headers=self.headers)

    def call(self, tool: str, arguments: dict[str, Any]) -> httpx.Response:
        return self.rpc("tools/call", f'{{"name": "{tool}", "arguments": {_body(arguments)}}}')

    def close(self) -> None:
        self.http.close()


def mcp_door(session: McpSession, case: Case, scratch: Path) -> Answer:
    a = dict(case.args)
    args: dict[str, Any] = {"dataset": a.pop("dataset", DATASET)}
    if case.op == "memorize":
        if "folder" in a:
            args["path"] = str(_write_folder(scratch, a.pop("folder")))
        elif "conversation_object" in a:
            args["conversation"] = a.pop("conversation_object")
            a.pop("text", None)
        else:
            args["text"] = _text_of(a.pop("text"))
        args.update(a)
        tool = "memorize"
    elif case.op == "search":
        tool, args = "search", {**args, **a}
    elif case.op == "stats":
        tool = "stats"
    elif case.op == "datasets":
        tool, args = "list_datasets", {}
    elif case.op == "drafts":
        tool, args = "memorize", {**args, "text": to_json(a["drafts"]), "content_type": "draft"}
    elif case.op == "forget":
        tool, args = "forget", {**args, **a}
    elif case.op == "episode":
        tool, args = "get_episode", {**args, **a}
    else:
        raise AssertionError(f"the MCP door has no {case.op}")
    return mcp_answer(session.call(tool, args), tool)


def mcp_answer(resp: httpx.Response, tool: str) -> Answer:
    problems = ["a traceback in the response"] if "Traceback" in resp.text else []
    if resp.status_code >= 500:
        return Answer("internal", resp.text[:300], resp.status_code, problems=problems)
    try:
        body = resp.json()
    except ValueError:
        return Answer("internal", f"not JSON: {resp.text[:200]}", resp.status_code)
    if "error" in body:  # a JSON-RPC refusal: the SDK's parser read no request (-32700)
        error = body["error"]
        parse = error.get("code") == -32700
        return Answer(
            "rejected", str(error.get("message")), resp.status_code, body, problems, parse
        )
    result = body["result"]
    text = " ".join(c.get("text", "") for c in result.get("content", []))
    if result.get("isError"):
        if text.strip() == f"Error executing tool {tool}":  # the SDK hides a crash's text
            return Answer("internal", text, resp.status_code, problems=problems)
        return Answer("rejected", text, resp.status_code, result, problems)
    return Answer("ok", text[:200], resp.status_code, result.get("structuredContent"), problems)


def scratch_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="memflow-hostile-"))


__all__ = [
    "Answer",
    "McpSession",
    "cli_argv",
    "cli_door",
    "http_answer",
    "http_door",
    "judge",
    "mcp_answer",
    "mcp_door",
    "python_door",
    "scratch_dir",
]
