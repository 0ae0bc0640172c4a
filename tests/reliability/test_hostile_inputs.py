"""Issue 25's hostile inputs through all four doors: the Python API, the CLI (subprocesses),
``memflow serve`` and ``memflow mcp`` (real server processes, one of each for the module).

For every case (``_hostile_cases``) and door: no internal error (a bare exception, CLI exit 70,
HTTP 5xx, an MCP tool error whose text the SDK hid), no traceback, no raw terminal escape in the
CLI's output; a refusal is clean (InvalidInput or the door's 4xx) and names the field; a refused
call leaves every table as it was (md5 of every row), and every integrity check is 0 afterwards.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from memflow.config import libpq_url
from memflow.embed.hash import HashEmbedder
from memflow.errors import InvalidInput
from memflow.memory import Memory
from memflow.store.datasets import dataset_uuid

from ..conftest import TEMPLATE, _scratch_database
from ..servers.conftest import free_port, memflow_cmd, server_process
from ._hostile_cases import (
    CASES,
    CLI,
    DATASET,
    DOORS,
    HTTP,
    MCP,
    NOTE,
    NOTE2,
    OLD_NAMES,
    POISONED_DUE,
    PYTHON,
    Case,
    conversation,
)
from ._hostile_doors import (
    Answer,
    McpSession,
    cli_argv,
    cli_door,
    http_door,
    judge,
    mcp_door,
    python_door,
    scratch_dir,
)
from ._support import fingerprint, integrity_problems, record

EMBEDDER = HashEmbedder(384)


def _seed(url: str) -> None:
    """The dataset the cases search: notes with dates in their metadata, one of them holding
    the date an older memflow let through; and dataset names an older memflow let through."""
    with Memory.open(url, embedder=EMBEDDER) as mem:
        ds = mem.dataset(DATASET)
        ds.memorize(NOTE, metadata={"due": "2026-03-01", "n": 5, "project": "atlas"})
        ds.memorize(NOTE2, metadata={"due": "2026-06-01T09:00:00+02:00", "project": "atlas"})
        report = ds.memorize("The atlas retro happened on Friday.", metadata={"due": "2026-04-01"})
    poisoned = report.documents[0].id
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:  # as an older memflow wrote
        conn.execute(
            "UPDATE memflow.document SET metadata = jsonb_set(metadata, '{due}', to_jsonb(%s::text)) "
            "WHERE id = %s",
            (POISONED_DUE, poisoned),
        )
        for name in OLD_NAMES:
            conn.execute(
                "INSERT INTO memflow.dataset (id, name, meta) "
                "VALUES (%s, %s, jsonb_build_object('embedder', %s::text))",
                (dataset_uuid(name), name, EMBEDDER.name),
            )


@pytest.fixture(scope="module")
def store(pg_admin_url: str, template_db: str) -> Iterator[str]:
    with _scratch_database(pg_admin_url, TEMPLATE) as url:
        _seed(url)
        yield url


@pytest.fixture(scope="module")
def allowed_root() -> Iterator[Path]:
    """The directory the MCP server may read (the folder case writes its batch there)."""
    root = scratch_dir()
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def serve(store: str) -> Iterator[tuple[httpx.Client, Path]]:
    port = free_port()
    with (
        server_process(memflow_cmd(store, "serve", "--port", str(port)), port) as log,
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=300) as client,
    ):
        yield client, log


@pytest.fixture(scope="module")
def mcp(store: str, allowed_root: Path) -> Iterator[tuple[McpSession, Path]]:
    port = free_port()
    cmd = memflow_cmd(store, "mcp", "--transport", "http", "--port", str(port),
                      "--allow-read", str(allowed_root))  # fmt: skip
    with server_process(cmd, port) as log:
        session = McpSession(f"http://127.0.0.1:{port}/mcp")
        try:
            yield session, log
        finally:
            session.close()


def _run_door(door: str, store: str, send: Any, *, parallel: int = 1) -> None:
    """Send every case of ``door`` (``send(case) -> Answer``); fail with every wrong answer.
    With ``parallel`` > 1 the cases that must be refused run that many at a time (CLI
    subprocesses spend their time starting), the store compared before and after them all."""
    wrong: list[str] = []
    kinds: dict[str, int] = {"ok": 0, "rejected": 0, "internal": 0}
    cases = [c for c in CASES if door in c.doors]
    answers: dict[str, Answer] = {}
    if parallel > 1:
        refused = [c for c in cases if c.expect == "invalid"]
        before = fingerprint(store)
        with ThreadPoolExecutor(parallel) as pool:
            answers.update(zip((c.id for c in refused), pool.map(send, refused), strict=True))
        if fingerprint(store) != before:
            wrong.append(f"one of {len(refused)} refused calls changed the store")
    for case in cases:
        answer = answers.get(case.id)
        before = fingerprint(store) if answer is None and case.expect == "invalid" else None
        answer = answer or send(case)
        answers[case.id] = answer
        problems = judge(case, answer)
        if before is not None and fingerprint(store) != before:
            problems.append("a refused call changed the store")
        wrong += [f"{case.id}: {p}" for p in problems]
    for answer in answers.values():
        kinds[answer.kind] = kinds.get(answer.kind, 0) + 1
    by_protocol = sum(a.by_protocol for a in answers.values())
    integrity = integrity_problems(store)
    wrong += [f"integrity check {k}: {v}" for k, v in integrity.items() if v]
    record(
        "hostile_inputs",
        door=door,
        distinct_cases=len(CASES),
        cases=len(cases),
        listed_in_issue=sum(c.issue for c in cases),
        answered=kinds["ok"],
        refused=kinds["rejected"],
        refused_by_the_mcp_parser=by_protocol,
        internal_errors=kinds["internal"],
        wrong=len(wrong),
        integrity_problems=sum(integrity.values()),
    )
    assert not wrong, f"{len(wrong)} wrong answers through the {door} door:\n" + "\n".join(wrong)


def test_hostile_inputs_through_the_python_api(store: str) -> None:
    with Memory.open(store, embedder=EMBEDDER) as mem:

        def send(case: Case) -> Answer:
            scratch = scratch_dir()
            try:
                return python_door(mem, case, scratch)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)

        _run_door(PYTHON, store, send)


@pytest.mark.timeout(1800)  # ~70 CLI processes: about a minute on a quiet 2-core machine
def test_hostile_inputs_through_the_cli(store: str) -> None:
    cmd = memflow_cmd(store)

    def send(case: Case) -> Answer:
        scratch = scratch_dir()
        try:
            # `memflow datasets` is also read as text: names must come out escaped there.
            return cli_door(cmd, cli_argv(case, scratch), json_out=case.op != "datasets")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    _run_door(CLI, store, send, parallel=4)


def test_hostile_inputs_through_memflow_serve(store: str, serve: tuple[httpx.Client, Path]) -> None:
    client, log = serve
    _run_door(HTTP, store, lambda case: http_door(client, case))
    assert "Traceback" not in log.read_text(errors="replace")


def test_hostile_inputs_through_memflow_mcp(
    store: str, mcp: tuple[McpSession, Path], allowed_root: Path
) -> None:
    session, log = mcp

    def send(case: Case) -> Answer:
        scratch = allowed_root / case.id
        scratch.mkdir()
        return mcp_door(session, case, scratch)

    _run_door(MCP, store, send)
    logged = log.read_text(errors="replace")
    assert "Traceback" not in logged and "unexpected exception" not in logged, logged[-3000:]


def test_the_suite_covers_every_listed_input_through_every_door_that_takes_it() -> None:
    assert len(CASES) >= 60 and len({c.id for c in CASES}) == len(CASES)
    listed = [c for c in CASES if c.issue]
    assert len(listed) >= 20
    for door in DOORS:
        assert sum(door in c.doors for c in CASES) >= 45, door
    # Each of the issue's inputs, by the words the issue uses for it.
    ids = " ".join(c.id for c in listed)
    for words in ("metadata_date_past_9999", "400_digit", "nested_5000_deep", "dated_9999",
                  "folder_with", "nul_in", "lone_surrogate", "40000_or", "json_looking_text",
                  "conversation_as_an_object", "host_header", "dataset_name_with_esc",
                  "dataset_name_with_slash"):  # fmt: skip
        assert words in ids, words


def test_names_stored_before_the_rules_stay_listable_usable_and_droppable(
    pg_admin_url: str, template_db: str
) -> None:
    with _scratch_database(pg_admin_url, TEMPLATE) as url:
        _seed(url)
        cmd = memflow_cmd(url)
        listing = cli_door(cmd, ["datasets"], json_out=False)
        assert listing.kind == "ok" and not listing.problems, listing
        as_json = cli_door(cmd, ["datasets"])
        names = {d["name"] for d in as_json.payload["datasets"]}
        assert set(OLD_NAMES) <= names
        dropped = cli_door(cmd, ["datasets", "--drop", OLD_NAMES[2], "--yes"])
        assert dropped.kind == "ok" and not dropped.problems, dropped
        with Memory.open(url, embedder=EMBEDDER) as mem:
            assert mem.dataset(OLD_NAMES[0], create=False).stats()["documents"] == 0
            assert mem.drop_dataset(OLD_NAMES[1])
            assert not {d.name for d in mem.datasets()} & set(OLD_NAMES[1:])
        record("hostile_inputs_old_names", names=len(OLD_NAMES), dropped=2)


def test_one_bad_file_in_a_folder_is_reported_and_the_rest_memorised(
    store: str, tmp_path: Path
) -> None:
    """The CLI's report names the bad file (stdout JSON and stderr) and exits 1; the others are
    memorised and searchable."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "1-plan.md").write_text("# Plan\n\nLena books the Lisbon venue by May 2.\n")
    (folder / "2-never.json").write_text(json.dumps(conversation(started_at="9999-12-31")))
    (folder / "3-after.md").write_text("# After\n\nOmar signs the Lisbon contract on May 9.\n")
    cmd = memflow_cmd(store)
    res = cli_door(cmd, ["memorize", str(folder), "-d", "folder-batch", "--progress", "none"])
    assert res.status == 1 and not res.problems, res
    statuses = {Path(d["source"]).name: d["status"] for d in res.payload["documents"]}
    assert statuses == {"1-plan.md": "written", "2-never.json": "failed", "3-after.md": "written"}
    assert "2-never.json" in res.message and "started_at" in res.message
    found = cli_door(cmd, ["search", "Who signs the Lisbon contract?", "-d", "folder-batch"])
    assert found.kind == "ok" and "Omar" in json.dumps(found.payload)


class _FailsOnOne:
    """An extractor (the public ``extractor=`` hook) that raises a bare ValueError on one
    document, as a bug or an unchecked value deep in extraction would."""

    name = "rules"

    def __init__(self, embedder: HashEmbedder, bad: str) -> None:
        from memflow.ingest.rules import RulesExtractor

        self.rules, self.bad = RulesExtractor(embedder), bad

    def extract(self, doc: Any) -> Any:
        if self.bad in doc.source:
            raise ValueError("year 10000 is out of range")
        return self.rules.extract(doc)


def test_an_error_deep_in_one_documents_extraction_fails_that_document_only(
    store: str, tmp_path: Path
) -> None:
    for i, text in enumerate((NOTE, "Tove fixed the heater on Monday.", NOTE2)):
        (tmp_path / f"{i}.md").write_text(f"# Note {i}\n\n{text}\n")
    with Memory.open(store, embedder=EMBEDDER) as mem:
        ds = mem.dataset("extraction-errors")
        report = ds.memorize(tmp_path, extractor=_FailsOnOne(EMBEDDER, "1.md"))
    statuses = {Path(d.source).name: d.status for d in report.documents}
    assert statuses == {"0.md": "written", "1.md": "failed", "2.md": "written"}
    failed = next(d for d in report.documents if d.status == "failed")
    assert failed.error_type == "InvalidInput" and "ValueError: year 10000" in str(failed.error)
    assert integrity_problems(store) == dict.fromkeys(integrity_problems(store), 0)


@pytest.mark.parametrize("progress", ["plain", "json"])
def test_progress_lines_never_print_a_file_names_escapes(
    store: str, tmp_path: Path, progress: str
) -> None:
    folder = tmp_path / progress
    folder.mkdir()
    (folder / "\x1b[2J\x1b]0;owned\x07.md").write_text(f"# Escapes\n\n{NOTE}\n")
    res = cli_door(
        memflow_cmd(store),
        ["memorize", str(folder), "-d", "progress-names", "--progress", progress],
    )
    assert res.kind == "ok" and not res.problems, res
    assert "\\u001b[2J" in res.message  # the name is there, escaped
    if progress == "json":
        events = [json.loads(line) for line in res.message.splitlines() if line.startswith("{")]
        assert events and all("\x1b" in e["source"] for e in events if e["source"])


def test_a_dump_imports_only_under_a_name_the_rules_allow(store: str, tmp_path: Path) -> None:
    """An imported dump creates its dataset: a name a terminal or a URL would misread is refused
    (InvalidInput, nothing written); the dump of a dataset named before the rules imports under
    a name that follows them."""
    dump = tmp_path / "old.jsonl"
    with Memory.open(store, embedder=EMBEDDER) as mem:
        old = mem.dataset(OLD_NAMES[0], create=False)
        old.add_episodes([{"name": "kept", "summary": "an episode of the old dataset"}])
        old.export(dump)
        for bad in ("new\tname", "a/b", "..", "esc\x1b[2J"):
            before = fingerprint(store)
            with pytest.raises(InvalidInput, match="dataset name"):
                mem.import_dump(dump, dataset=bad)
            assert fingerprint(store) == before
        mem.import_dump(dump, dataset="renamed-old")
        assert [e["name"] for e in mem.dataset("renamed-old", create=False).episodes()] == ["kept"]
