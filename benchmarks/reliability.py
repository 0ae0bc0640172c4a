"""Reliability figures (docs/benchmarks/reliability.md) from a run of ``tests/reliability/``.

The suite's tests append what they measured to ``$MEMFLOW_RELIABILITY_OUT`` (JSON lines, one per
measurement: ``tests/reliability/_support.record``) once their assertions have passed, and
pytest's JUnit XML gives every test's outcome and duration. This program runs the suite in a
subprocess with both pointed at a scratch directory and writes ``reliability.json`` and
``reliability.md`` from them: a figure appears in the document only when a test measured it in
this run, and failing tests are listed.

Run: ``python -m benchmarks.reliability [--quick] [--out DIR] [--load-seconds 60]``
(``--quick`` runs a handful of tests; the test suite uses it as a smoke test).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import common

SUITE = "tests/reliability"
QUICK_TESTS = (
    f"{SUITE}/test_error_hierarchy.py",
    f"{SUITE}/test_faults.py::test_fault_at_each_stage_writes_nothing_and_a_retry_succeeds[before_commit]",
    f"{SUITE}/test_isolation.py::test_raw_session_bound_to_a_cannot_touch_b",
    f"{SUITE}/test_hostile_inputs.py::test_hostile_inputs_through_the_python_api",
)
# Records of an injected fault (each comes from a passing test that checked the store after it).
FAULTS = (
    "fault_stage", "fault_connection_dropped", "fault_embedder_half_way", "fault_sigkill_stage",
    "fault_sigkill_loop", "deadlock_retry", "serialization_retry", "retry_give_up",
    "fault_server_restart", "fault_server_sigkill", "fault_stale_pid", "fault_server_down",
)  # fmt: skip
NOT_MEASURED = "not measured in this run"


# -- running the suite ---------------------------------------------------------------------------


def parse_junit(path: Path) -> list[dict[str, Any]]:
    """One entry per test case: id, outcome (passed/failed/error/skipped), seconds, message."""
    out = []
    for case in ET.parse(path).getroot().iter("testcase"):
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed"}.get(child.tag, child.tag)
                message = (child.get("message") or "")[:300]
        module = case.get("classname", "").replace(".", "/")
        out.append(
            {
                "id": f"{module}.py::{case.get('name', '')}",
                "outcome": outcome,
                "seconds": round(float(case.get("time") or 0), 2),
                "message": message,
            }
        )
    return out


def read_figures(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def run_suite(
    selection: Sequence[str], load_seconds: float, database_url: str | None
) -> dict[str, Any]:
    """Run pytest on ``selection`` in a subprocess; its test outcomes and recorded figures."""
    with tempfile.TemporaryDirectory(prefix="memflow-reliability-") as tmp:
        figures, junit = Path(tmp) / "figures.jsonl", Path(tmp) / "junit.xml"
        env = {
            **os.environ,
            "MEMFLOW_RELIABILITY_OUT": str(figures),
            "MEMFLOW_LOAD_SECONDS": str(load_seconds),
        }
        if database_url:
            env["MEMFLOW_TEST_DATABASE_URL"] = database_url
        cmd = [
            sys.executable, "-m", "pytest", *selection, "-q", "-p", "no:cacheprovider",
            f"--junitxml={junit}",
        ]  # fmt: skip
        started = time.perf_counter()
        proc = subprocess.run(cmd, cwd=common.REPO, env=env, check=False)
        seconds = time.perf_counter() - started
        if not junit.exists():
            raise SystemExit(f"pytest wrote no results (exit status {proc.returncode}): {cmd}")
        return {
            "command": " ".join(["pytest", *selection]),
            "exit_status": proc.returncode,
            "seconds": round(seconds, 1),
            "tests": parse_junit(junit),
            "figures": read_figures(figures),
        }


# -- what was measured ---------------------------------------------------------------------------


def _of(figures: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [f for f in figures if f["test"] == name]


def _first(figures: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    found = _of(figures, name)
    return found[0] if found else None


def summarise(tests: list[dict[str, Any]], figures: list[dict[str, Any]]) -> dict[str, Any]:
    outcomes = Counter(t["outcome"] for t in tests)
    by_file: dict[str, Counter[str]] = {}
    for t in tests:
        by_file.setdefault(t["id"].split("::")[0], Counter())[t["outcome"]] += 1
    faults = [f for f in figures if f["test"] in FAULTS]
    lost = [f for f in figures if "rows_lost" in f]
    bad = _of(figures, "bad_input")
    rls = _of(figures, "rls_raw_session") + _of(figures, "rls_login_role")
    searches = _of(figures, "search_isolation")
    return {
        "tests": {
            "total": len(tests),
            **{k: outcomes.get(k, 0) for k in ("passed", "failed", "error", "skipped")},
            "by_file": {k: dict(v) for k, v in sorted(by_file.items())},
            "not_passed": [t for t in tests if t["outcome"] != "passed"],
        },
        "faults": {
            "injected": len(faults),
            "by_kind": dict(Counter(f["test"] for f in faults)),
        },
        "rows_lost": {
            "checks": len(lost),
            "rows_lost": sum(int(f["rows_lost"]) for f in lost),
            "tables_changed_by_failed_calls": sum(int(f.get("tables_changed", 0)) for f in figures),
            "documents_lost": sum(int(f.get("documents_lost", 0)) for f in figures),
        },
        "isolation": {
            "sessions": len(rls),
            "statements_per_session": [f["statements"] for f in rls],
            "cross_dataset_rows": sum(int(f["cross_dataset_rows"]) for f in rls),
            "searches": sum(int(f["queries"]) for f in searches),
            "search_modes": [f["mode"] for f in searches],
            "cross_dataset_results": sum(int(f["cross_dataset_results"]) for f in searches),
        },
        "bad_input": {
            "fixed_inputs": sum(int(f.get("tried", 0)) for f in bad)
            + sum(int(f["names"]) for f in _of(figures, "dataset_names")),
            "hypothesis_examples": dict(
                Counter(f["property"] for f in _of(figures, "hypothesis_example"))
            ),
        },
        "hostile_inputs": _hostile_summary(_of(figures, "hostile_inputs")),
    }


def _hostile_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The hostile-input suite (issue 25): calls per door and what came back."""
    total = ("cases", "answered", "refused", "internal_errors", "wrong", "integrity_problems")
    return {
        "doors": [r["door"] for r in records],
        "distinct_cases": max((int(r.get("distinct_cases", 0)) for r in records), default=0),
        **{f"calls_{k}" if k == "cases" else k: sum(int(r[k]) for r in records) for k in total},
    }


# -- the document ---------------------------------------------------------------------------------


def _n(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _ms(value: Any) -> str:
    return f"{value:,.0f} ms" if isinstance(value, int | float) else NOT_MEASURED


def _stages(records: list[dict[str, Any]], key: str = "stage") -> str:
    return ", ".join(f"`{r[key]}`" for r in records) or NOT_MEASURED


def _kept(records: list[dict[str, Any]]) -> str:
    """What the store showed after these faults, from the records' own figures."""
    if not records:
        return NOT_MEASURED
    lost = sum(int(r.get("rows_lost", 0)) for r in records)
    changed = sum(int(r.get("tables_changed", 0)) for r in records)
    retried = sum(1 for r in records if r.get("retry") == "written")
    return (
        f"{lost} committed rows missing, {changed} tables changed by the failed call; "
        f"retry written in {retried} of {len(records)}"
    )


def _fault_rows(fig: list[dict[str, Any]]) -> list[list[str]]:
    rows: list[list[str]] = []

    def add(what: str, where: str, name: str, outcome: Any) -> None:
        recs = _of(fig, name)
        rows.append([what, where if recs else "—", str(outcome(recs)) if recs else NOT_MEASURED])

    add(
        "exception raised by the fault hook", _stages(_of(fig, "fault_stage")), "fault_stage", _kept
    )
    add("backend terminated (`pg_terminate_backend`)", _stages(_of(fig, "fault_connection_dropped")),
        "fault_connection_dropped", lambda r: "`ConnectionFailed`; " + _kept(r))  # fmt: skip
    add("embedder fails after 2 of its batches", ", ".join(
        f"`{r['error']}`" for r in _of(fig, "fault_embedder_half_way")), "fault_embedder_half_way",
        lambda r: ", ".join(sorted({f"`{x['raised']}`" for x in r})) + "; " + _kept(r))  # fmt: skip
    add("writer process SIGKILLed inside its transaction", _stages(_of(fig, "fault_sigkill_stage")),
        "fault_sigkill_stage", _kept)  # fmt: skip
    add("writer loop SIGKILLed at a random moment", "—", "fault_sigkill_loop", lambda r: (
        f"{r[0]['documents_present']} of {r[0]['total']} documents present, each whole "
        f"({r[0]['reported_committed']} reported committed before the kill; "
        f"{r[0]['documents_lost']} lost); the rerun skipped {r[0]['rerun_skipped']} and "
        "completed the set"))  # fmt: skip
    add("real deadlock (two transactions locking in opposite order)", "`run_with_retry`",
        "deadlock_retry", lambda r: f"attempts per transaction {r[0]['attempts']}, "
        f"{r[0]['errors']} errors")  # fmt: skip
    add("real serialization failure (SERIALIZABLE write skew)", "`run_with_retry`",
        "serialization_retry", lambda r: f"attempts per transaction {r[0]['attempts']}, "
        f"{r[0]['errors']} errors; result equals a serial order")  # fmt: skip
    add("conflict that never clears", "`run_with_retry`", "retry_give_up", lambda r: (
        f"`{r[0]['raised']}` after {r[0]['attempts']} attempts; delays "
        + ", ".join(f"{d:g} ms" for d in r[0]["delays_ms"])))  # fmt: skip
    add("server restarted (fast shutdown) during a call", ", ".join(
        r["during"] for r in _of(fig, "fault_server_restart")), "fault_server_restart",
        lambda r: ", ".join(sorted({f"`{x['raised']}`" for x in r})) + "; next call reconnects; "
        f"{sum(int(x['rows_lost']) for x in r)} committed rows missing")  # fmt: skip
    add("embedded server SIGKILLed while a write is open", "—", "fault_server_sigkill", lambda r: (
        f"`{r[0]['raised']}`; the next `Memory.open()` recovered the server in "
        f"{r[0]['recovered_in_s']} s; {r[0]['rows_lost']} committed rows missing"))  # fmt: skip
    add("stale `postmaster.pid` naming an unrelated live process", "—", "fault_stale_pid",
        lambda r: f"`Memory.open()` started the server; {r[0]['episodes_after']} episodes read")  # fmt: skip
    add("calls while the server is down", "—", "fault_server_down",
        lambda r: f"{r[0]['calls']} calls, each raised {', '.join(r[0]['raised'])}")  # fmt: skip
    return rows


def _bad_input_rows(fig: list[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for r in _of(fig, "bad_input"):
        outcome = str(r.get("outcome", ""))
        if "seconds" in r:
            outcome += f" in {r['seconds']} s"
        if r.get("outcome") == "stored" and "entities" in r:
            outcome += f" ({_n(r['entities'])} entities, {_n(r.get('edges', 0))} edges)"
        if r.get("outcome") == "rejected":
            message = str(r.get("message", ""))
            if message.startswith("/"):  # the scratch file's path
                message = message.split(": ", 1)[-1]
            outcome += f": `{r.get('type')}` “{message[:160]}”"
        rows.append(["; ".join(r["inputs"]), _n(r.get("tried", 0)), outcome])
    names = _first(fig, "dataset_names")
    if names:
        rows.append(["hostile dataset names (quotes, `%`, `_`, `--`, CJK, emoji, 200 chars)",
                     _n(names["names"]), f"each round-trips and stays isolated; dropping `%` "
                     f"and `_` dropped exactly those {names['dropped']}"])  # fmt: skip
    return rows


def _hostile_table(fig: list[dict[str, Any]]) -> str:
    records = _of(fig, "hostile_inputs")
    if not records:
        return NOT_MEASURED
    rows = [
        [f"`{r['door']}`", r["cases"], r["listed_in_issue"], r["answered"],
         f"{r['refused']}" + (f" ({r['refused_by_the_mcp_parser']} by the MCP SDK's JSON parser)"
                              if r.get("refused_by_the_mcp_parser") else ""),
         f"**{r['internal_errors']}**", r["wrong"], r["integrity_problems"]]
        for r in records
    ]  # fmt: skip
    return common.md_table(
        ["door", "cases", "listed in the issue", "answered", "refused", "internal errors",
         "wrong answers", "integrity problems after"],
        rows,
    )  # fmt: skip


def _summary_rows(data: dict[str, Any]) -> list[list[str]]:
    fig, s = data["figures"], data["summary"]
    load, conc = _first(fig, "load"), _first(fig, "concurrent_writers")
    iso, lost, bad, hos = s["isolation"], s["rows_lost"], s["bad_input"], s["hostile_inputs"]
    mig_up, mig_rt = (
        _first(fig, "migration_upgrade_with_data"),
        _first(fig, "migration_round_trip_with_data"),
    )
    hyp = bad["hypothesis_examples"]
    return [
        ["tests", f"{s['tests']['passed']} of {s['tests']['total']} passed"
         + (f", **{s['tests']['total'] - s['tests']['passed']} not passed** (listed below)"
            if s["tests"]["total"] != s["tests"]["passed"] else "")],
        ["load held", f"{load['clients']} search clients + {load['writers']} writers for "
         f"{load['seconds']:g} s: **{load['errors']} errors**, {_n(load['searches'])} searches, p50 "
         f"{_ms(load['search_p50_ms'])}, **p95 {_ms(load['search_p95_ms'])}**, p99 "
         f"{_ms(load['search_p99_ms'])}; {load['documents_written']} documents written (write p95 "
         f"{_ms(load['write_p95_ms'])}), none lost" if load else NOT_MEASURED],
        ["concurrent writers", f"{conc['processes']} processes, {conc['attempts']} write calls on "
         f"{conc['documents']} distinct documents sharing entities: {conc['errors']} errors, "
         f"{conc['duplicate_entities']} duplicate entities, counts "
         + ("equal to" if conc["equal_to_sequential"] else "**different from**")
         + " a sequential run" if conc else NOT_MEASURED],
        ["faults injected and survived", f"{s['faults']['injected']} (table below)"
         if s["faults"]["injected"] else NOT_MEASURED],
        ["rows lost", f"**{lost['rows_lost']}** committed rows missing over {lost['checks']} "
         f"checks (md5 of every row before the fault, looked up after it); "
         f"{lost['tables_changed_by_failed_calls']} tables changed by a failed call; "
         f"{lost['documents_lost']} reported-committed documents missing" if lost["checks"]
         else NOT_MEASURED],
        ["cross-dataset reads", f"**{iso['cross_dataset_rows'] + iso['cross_dataset_results']}** "
         f"({iso['sessions']} hostile raw sessions of {', '.join(map(str, iso['statements_per_session']))} "
         f"statements; {iso['searches']} searches in {len(iso['search_modes'])} modes for another "
         "dataset's exact sentence)" if iso["sessions"] or iso["searches"] else NOT_MEASURED],
        ["bad inputs tried", f"{bad['fixed_inputs']} fixed inputs + {len(hyp)} hypothesis properties "
         f"({', '.join(f'{k}: {v}' for k, v in hyp.items())} examples)" if bad["fixed_inputs"]
         else NOT_MEASURED],
        ["hostile inputs through the doors", f"{hos['distinct_cases']} cases, {hos['calls_cases']} "
         f"calls through {len(hos['doors'])} doors ({', '.join(hos['doors'])}): "
         f"**{hos['internal_errors']} internal errors**, {hos['wrong']} wrong answers, "
         f"{hos['integrity_problems']} integrity problems afterwards" if hos["doors"]
         else NOT_MEASURED],
        ["migrations with data", (f"{mig_up['rows']} rows written at revision {mig_up['revisions'][0]} "
         f"upgraded to {mig_up['revisions'][-1]}: {mig_up['rows_lost']} lost" if mig_up else NOT_MEASURED)
         + (f"; {mig_rt['steps']} down/up steps over {mig_rt['rows']} rows: {mig_rt['rows_lost']} lost"
            if mig_rt else "")],
    ]  # fmt: skip


def markdown(data: dict[str, Any]) -> str:
    fig, s, run = data["figures"], data["summary"], data["run"]
    load, rls = _first(fig, "load"), _first(fig, "rls_tables")
    parts = [
        "# Reliability figures",
        "Generated by `benchmarks/reliability.py` from one run of the reliability tests "
        f"(`{run['command']}`, {run['seconds']:g} s): each test appends what it measured once "
        "its assertions passed, so a figure below exists only if a test measured it in this run. "
        "Embedder `hash` (384 dims) and the `rules` extractor, as the test fixtures set them: "
        "these runs test correctness under faults and load, not retrieval quality.",
        common.stamp_markdown(data["stamp"])
        + (f"\n- server: PostgreSQL {rls['server_version']}, pgvector {rls['pgvector']}" if rls else ""),
        "## Summary",
        common.md_table(["property", "result"], _summary_rows(data)),
    ]  # fmt: skip
    if s["tests"]["not_passed"]:
        parts += ["## Tests that did not pass", common.md_table(
            ["test", "outcome", "message"],
            [[t["id"], t["outcome"], t["message"]] for t in s["tests"]["not_passed"]])]  # fmt: skip
    if load:
        parts += [
            "## Load (`test_sixteen_searchers_and_two_writers_for_sixty_seconds`, marker `load`)",
            "4 processes × 4 threads searching (`mode=\"episodic\"`, `top_k=5`, 8 queries including "
            "an SQL-looking one) and 2 processes writing new documents, started at one barrier, "
            "over a dataset that grows during the run.",
            common.md_table(
                ["clients", "writers", "duration", "searches", "searches/s", "p50", "p95", "p99",
                 "documents written", "write p95", "retries", "errors"],
                [[load["clients"], load["writers"], f"{load['seconds']:g} s", _n(load["searches"]),
                  f"{load['searches'] / load['seconds']:.1f}", _ms(load["search_p50_ms"]),
                  _ms(load["search_p95_ms"]), _ms(load["search_p99_ms"]), load["documents_written"],
                  _ms(load["write_p95_ms"]), load["retries"], load["errors"]]],
            ),
        ]  # fmt: skip
    parts += [
        "## Faults injected (`test_faults.py`, `test_connection_faults.py`, `test_concurrency.py`)",
        "After each write-path fault the tests compare the store with its state before the failed "
        "call (row count and md5 of every row of every table), look up every row committed before "
        "the fault, check that no edge points at a missing node, every node has its embeddings, "
        "every edge its edge-text embedding and a supporting document, and no entity is "
        "duplicated; then they retry the call and compare the counts with the planned ones.",
        common.md_table(["fault", "where", "outcome"], _fault_rows(fig)),
        "## Bad inputs tried (`test_bad_input.py`, `test_isolation.py`)",
        "Each input is stored correctly or rejected with a `MemflowError` subclass whose message "
        "names a fix; a rejected input leaves the store unchanged (fingerprint compared).",
        common.md_table(["input", "tried", "outcome"], _bad_input_rows(fig)),
        common.md_table(
            ["hypothesis property", "examples run"],
            sorted(s["bad_input"]["hypothesis_examples"].items()),
        )
        if s["bad_input"]["hypothesis_examples"]
        else "No hypothesis property ran.",
        "## Hostile inputs through the four doors (`test_hostile_inputs.py`, issue 25)",
        "Each case (`tests/reliability/_hostile_cases.py`: every input issue 25 lists, and times, "
        "JSON, filters, names, scopes, ids and drafts around them) goes through every door that can "
        "carry it: the Python API, the CLI (a subprocess each), `memflow serve` and `memflow mcp` "
        "(one real server process each; MCP spoken as raw JSON-RPC). A call must be answered or "
        "refused cleanly (InvalidInput or the door's 4xx, naming the field), with no internal error "
        "(a bare exception, exit 70, HTTP 5xx, an MCP tool error without its text), no traceback and "
        "no raw terminal escape in the CLI's output; a refused call leaves every table unchanged "
        "(md5 of every row), and the integrity checks above are 0 after each door.",
        _hostile_table(fig),
        (
            f"Row-level security is enabled and forced on {rls['forced']} of the {rls['tables']} "
            f"memflow tables ({rls['policies']} policies). "
            if rls
            else ""
        )
        + "The tests assert that every policy compares `dataset_id` with `memflow.current_dataset()`, the transaction's "
        "`memflow.dataset_id` setting; the library's pooled connections run `SET ROLE memflow_app` "
        "(no superuser, no `BYPASSRLS`). The hostile sessions run as `memflow_app` bound to "
        "dataset A, and as a login role that is a member of it: on every table they count B's "
        "rows (also through `OR true` and `UNION`), update and delete B's rows, move A's rows into "
        "B, insert copies of B's rows, `TRUNCATE` and disable row-level security.",
        common.md_table(
            ["probe", "statements or queries", "rows or results of the other dataset"],
            [
                [f["test"].replace("_", " "), f["statements"], f["cross_dataset_rows"]]
                for f in _of(fig, "rls_raw_session") + _of(fig, "rls_login_role")
            ]
            + [
                [f"search, mode `{f['mode']}`", f["queries"], f["cross_dataset_results"]]
                for f in _of(fig, "search_isolation")
            ],
        ),
        "What this does and does not protect against (design, not a measurement): every query "
        "the library runs is scoped, because the transaction is bound and the role is subject to "
        "RLS; it is **not** an authentication boundary between tenants sharing one database login "
        "(a client that can send arbitrary SQL as `memflow_app` can bind another dataset). "
        "Tenants who must not trust each other need separate databases or per-tenant login roles.",
    ]
    if data.get("notes"):
        parts += ["## Notes", "\n".join(f"- {n}" for n in data["notes"])]
    return "\n\n".join(parts)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description="memflow reliability figures from tests/reliability")
    ap.add_argument("--quick", action="store_true", help="a handful of tests (the smoke test)")
    ap.add_argument("--out", type=Path, default=common.DEFAULT_OUT)
    ap.add_argument("--load-seconds", type=float, default=60.0, help="duration of the load test")
    ap.add_argument("--database-url", help="server the tests use (default: their own embedded one)")
    ap.add_argument("--note", action="append", default=[], help="a note for the Markdown")
    ap.add_argument(
        "--render-only", action="store_true", help="rewrite reliability.md from reliability.json"
    )
    args = ap.parse_args(argv)
    if args.render_only:
        return common.render_only(args.out, "reliability", args.note, markdown)
    selection = list(QUICK_TESTS) if args.quick else [SUITE]
    st = common.stamp({"quick": args.quick, "selection": selection,
                       "load_seconds": args.load_seconds})  # fmt: skip
    run = run_suite(selection, args.load_seconds, args.database_url)
    # The stamp's load average is read again now: the Markdown shows it as "at the end".
    st["machine"]["load_avg_1_5_15"] = common.machine()["load_avg_1_5_15"]
    tests, figures = run.pop("tests"), run.pop("figures")
    data = {"stamp": st, "run": run, "summary": summarise(tests, figures), "tests": tests,
            "figures": figures, "notes": list(args.note)}  # fmt: skip
    common.write_json(args.out / "reliability.json", data)
    common.write_text(args.out / "reliability.md", markdown(data))
    print(f"reliability: {data['summary']['tests']['passed']} of {len(tests)} tests passed; "
          f"wrote {args.out / 'reliability.md'}")  # fmt: skip
    return data


if __name__ == "__main__":
    counts = main()["summary"]["tests"]
    sys.exit(0 if counts["total"] and counts["passed"] == counts["total"] else 1)
