"""The CLI of facts that change: documents, search --as-of / --history, correct, history."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from ..conftest import REPO
from .test_cli_foundation import js, run


def test_edited_note_versions_as_of_correct_and_history(db_url: str, tmp_path: Path) -> None:
    note = tmp_path / "oncall.md"
    note.write_text("# On-call\n\nThe pager rotation is handed over every 7 days.\n", "utf-8")
    run(db_url, "memorize", str(note), "--dataset", "ops", "--reference-time", "2024-03-01")
    note.write_text("# On-call\n\nThe pager rotation is handed over every 14 days.\n", "utf-8")
    run(db_url, "memorize", str(note), "--dataset", "ops", "--reference-time", "2024-06-01")
    docs = js(run(db_url, "documents", "--dataset", "ops", "--json"))["documents"]
    assert [(d["version"], d["status"]) for d in docs] == [(1, "replaced"), (2, "current")]
    listed = run(db_url, "documents", "--dataset", "ops").stdout
    assert "v2  current" in listed and str(note) in listed

    now = js(run(db_url, "search", "how often is the pager handed over?", "--dataset", "ops",
                 "--display", "highly_related", "--json"))  # fmt: skip
    assert now["context"].index("14 days") < now["context"].index("7 days")
    assert "superseded, valid until 2024-06-01" in now["context"]
    explain = run(
        db_url, "search", "how often is the pager handed over?", "--dataset", "ops", "--explain"
    ).stdout
    assert "superseded, valid until 2024-06-01" in explain
    then = run(db_url, "search", "how often is the pager handed over?", "--dataset", "ops",
               "--display", "highly_related", "--as-of", "2024-04-01").stdout  # fmt: skip
    assert "7 days" in then and "14 days" not in then

    current = next(u for u in now["context_units"] if u["invalid_at"] is None and u["node_id"])
    fixed = js(run(db_url, "correct", current["node_id"], "The pager rotation is handed over "
                   "every 10 days.", "--dataset", "ops", "--actor", "sre-lee", "--json"))  # fmt: skip
    text = run(db_url, "history", fixed["point_id"], "--dataset", "ops").stdout
    assert text.index("every 7 days") < text.index("every 14 days") < text.index("every 10 days")
    assert "(document, by " in text and "(correction, by sre-lee)" in text and "current" in text
    versions = js(run(db_url, "history", fixed["point_id"], "--dataset", "ops", "--json"))
    assert [v["reason"] for v in versions["versions"]] == ["document", "correction", None]


def test_readme_facts_that_change_example_runs(db_url: str) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Facts that change")
    section = readme[start : readme.index("\n## ", start)]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    env = {**os.environ, "MEMFLOW_DATABASE_URL": db_url, "MEMFLOW_EMBEDDER": "hash"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "I live in Boston. [superseded, valid until 2023-03-09]" in out.stdout
    assert "9 March 2023" not in lines[-4]  # as of 1 February: the Boston session
    history = lines[-3:]
    assert "Boston" in history[0] and "rule" in history[0]
    assert "Seattle" in history[1] and "correction" in history[1]
    assert "Tacoma" in history[2] and history[2].endswith("None None")


def test_dated_notes_as_of_known_at_reopen_and_history(db_url: str, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "2024-09-02-sync.md").write_text("# Sync\n\nThe pilot store is in Porto.\n", "utf-8")
    run(db_url, "memorize", str(notes), "--dataset", "pilot")  # today: the file name dates it
    (notes / "2024-10-07-sync.md").write_text(
        "# Sync\n\nThe pilot store moved to Braga.\n", "utf-8"
    )
    run(db_url, "memorize", str(notes), "--dataset", "pilot")
    ask = ["search", "Where is the pilot store?", "--dataset", "pilot", "--display",
           "highly_related"]  # fmt: skip
    then = run(db_url, *ask, "--as-of", "2024-09-15").stdout
    assert "Porto" in then and "Braga" not in then
    assert "Porto" not in run(db_url, *ask, "--known-at", "2001-01-01").stdout
    now = js(run(db_url, *ask, "--include-history", "--json"))
    closed = next(u for u in now["context_units"] if u["invalid_at"] is not None)
    refused = run(db_url, "correct", closed["node_id"], "It is in Faro.", "--dataset", "pilot",
                  ok=False)  # fmt: skip
    assert f"memflow reopen {closed['node_id']}" in refused.stderr
    reopened = js(run(db_url, "reopen", closed["node_id"], "--dataset", "pilot", "--actor",
                      "ops-ana", "--json"))  # fmt: skip
    assert reopened["reopened"]["invalid_at"] is None
    text = run(db_url, "history", closed["node_id"], "--dataset", "pilot").stdout
    assert "reopened" in text and "by ops-ana" in text and "current" in text
    old = js(run(db_url, "history", closed["node_id"], "--dataset", "pilot", "--as-of",
                 "2024-09-15", "--json"))  # fmt: skip
    assert [v["text"] for v in old["versions"]] == ["The pilot store is in Porto."]
