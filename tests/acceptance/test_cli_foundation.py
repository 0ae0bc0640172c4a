"""The CLI end to end: add-episode, stats, show, datasets, db — as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..conftest import REPO

SEED = REPO / "examples" / "seed_episodes.json"


def run(
    db_url: str, *args: str, ok: bool = True, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    cmd = [
        sys.executable,
        "-m",
        "memflow.cli",
        *args,
        "--database-url",
        db_url,
        "--embedder",
        "hash",
    ]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120, input=stdin)
    if ok:
        assert res.returncode == 0, res.stderr
    return res


def js(res: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(res.stdout)


def test_add_episode_stats_show_round_trip(db_url: str) -> None:
    first = js(run(db_url, "add-episode", str(SEED), "--dataset", "seed", "--json"))
    assert first["status"] == "written" and len(first["episode_ids"]) == 2
    stats = js(run(db_url, "stats", "--dataset", "seed", "--json"))
    assert {
        k: stats[k]
        for k in ("episodes", "facets", "facet_points", "entities", "edges", "documents")
    } == {
        "episodes": 2,
        "facets": 3,
        "facet_points": 1,
        "entities": 2,
        "edges": 6,
        "documents": 1,
    }
    again = js(run(db_url, "add-episode", str(SEED), "--dataset", "seed", "--json"))
    assert again["status"] == "skipped" and again["document_id"] == first["document_id"]
    assert js(run(db_url, "stats", "--dataset", "seed", "--json")) == stats
    shown = run(db_url, "show", first["episode_ids"][0], "--dataset", "seed").stdout
    assert "Episode: API 流式返回改造" in shown
    assert "└─ FacetPoint: 鉴权中间件不能改" in shown
    assert "edge: 变更边界 -> 鉴权中间件不能改" in shown
    listing = js(run(db_url, "datasets", "--json"))
    assert [d["name"] for d in listing["datasets"]] == ["seed"]


def test_add_episode_from_stdin_single_draft(db_url: str) -> None:
    draft = {"name": "stdin episode", "summary": "came through a pipe"}
    out = js(
        run(db_url, "add-episode", "-", "--dataset", "pipe", "--json", stdin=json.dumps(draft))
    )
    assert out["episodes"] == 1


def test_import_bulk_loads_files_as_documents(db_url: str, tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"name": "bulk episode", "summary": "loaded in bulk"}), "utf-8")
    out = js(run(db_url, "import", str(SEED), str(other), "--dataset", "bulk", "--json"))
    assert [(d["file"], d["status"]) for d in out] == [
        (str(SEED), "written"),
        (str(other), "written"),
    ]
    assert [d["episodes"] for d in out] == [2, 1]
    stats = js(run(db_url, "stats", "--dataset", "bulk", "--json"))
    assert stats["documents"] == 2 and stats["episodes"] == 3
    again = run(db_url, "import", str(SEED), "--dataset", "bulk").stdout
    assert again.startswith("skipped") and "0 written, 1 skipped" in again
    hit = js(run(db_url, "search", "loaded in bulk", "--dataset", "bulk", "--json"))
    assert "bulk episode" in {r["name"] for r in hit["results"]}


def test_errors_are_one_line_and_nonzero(db_url: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x"', encoding="utf-8")
    res = run(db_url, "add-episode", str(bad), "--dataset", "x", ok=False)
    assert res.returncode == 1
    assert res.stderr.strip().count("\n") == 0 and "invalid JSON" in res.stderr
    res = run(db_url, "stats", "--dataset", "nope", ok=False)
    assert res.returncode == 1 and "no dataset named 'nope'" in res.stderr
    assert "Traceback" not in res.stderr
    res = run(db_url, "add-episode", str(tmp_path / "missing.json"), ok=False)
    assert "no such file" in res.stderr
    unreachable = "postgresql://nobody@127.0.0.1:1/none"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "memflow.cli",
            "stats",
            "--database-url",
            unreachable,
            "--embedder",
            "hash",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert res.stderr.startswith("memflow: error:") and res.stderr.strip().count("\n") == 0


def test_db_current_and_url(db_url: str) -> None:
    cur = js(run(db_url, "db", "current", "--json"))
    assert cur["up_to_date"] is True and cur["current"] == cur["head"]
    url = js(run(db_url, "db", "url", "--json"))["url"]
    assert url.startswith("postgresql://")


def test_help_for_every_command() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "memflow.cli", "--help"], capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 0
    for cmd in ("init", "db", "datasets", "add-episode", "stats", "show"):
        assert cmd in res.stdout
        sub = subprocess.run(
            [sys.executable, "-m", "memflow.cli", cmd, "--help"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (sub.returncode == 0 and "--json" in sub.stdout) or cmd == "db"
