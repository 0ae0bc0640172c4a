"""``memflow memorize`` / ``memflow forget`` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.acceptance.test_cli_foundation import js, run
from tests.integration.test_memorize import CONVERSATION, MEMO

KEYS = {
    "id", "source", "status", "episodes", "facets", "facet_points", "entities", "edges",
    "embeddings", "llm_calls", "tokens", "seconds",
}  # fmt: skip


def test_memorize_json_then_skip_then_forget(db_url: str, tmp_path: Path) -> None:
    (tmp_path / "memo.md").write_text(MEMO, encoding="utf-8")
    (tmp_path / "chat.json").write_text(json.dumps(CONVERSATION), encoding="utf-8")
    out = js(run(db_url, "memorize", str(tmp_path), "--dataset", "d", "--json"))
    docs = {Path(d["source"]).name: d for d in out["documents"]}
    assert set(docs) == {"memo.md", "chat.json"}
    for d in docs.values():
        assert set(d) >= KEYS and d["status"] == "written" and "error" not in d
    assert docs["memo.md"]["episodes"] == 1 and docs["chat.json"]["episodes"] == 2
    assert out["totals"]["written"] == 2 and out["totals"]["episodes"] == 3

    again = js(run(db_url, "memorize", str(tmp_path / "memo.md"), "--dataset", "d", "--json"))
    assert again["documents"][0]["status"] == "skipped"
    assert again["documents"][0]["id"] == docs["memo.md"]["id"]

    gone = js(
        run(db_url, "forget", "--dataset", "d", "--document", docs["memo.md"]["id"], "--json")
    )
    assert gone["documents"] == 1 and gone["episodes"] == 1 and gone["facets"] == 2
    stats = js(run(db_url, "stats", "--dataset", "d", "--json"))
    assert (stats["documents"], stats["episodes"]) == (1, 2)

    chat_episodes = docs["chat.json"]["episode_ids"]
    text = run(db_url, "forget", "--dataset", "d", "--episode", chat_episodes[0]).stdout
    assert text.startswith(f"forgot episode {chat_episodes[0]}: removed 0 documents")
    assert js(run(db_url, "stats", "--dataset", "d", "--json"))["episodes"] == 1


def test_memorize_exits_non_zero_when_a_document_fails(db_url: str, tmp_path: Path) -> None:
    good = tmp_path / "memo.md"
    good.write_text(MEMO, encoding="utf-8")
    bad = tmp_path / "binary.txt"
    bad.write_bytes(b"\x00\x01\x02 not text")
    res = run(
        db_url, "memorize", str(good), str(bad), str(tmp_path / "missing.md"),
        "--dataset", "d", "--json", ok=False,
    )  # fmt: skip
    assert res.returncode == 1
    out = json.loads(res.stdout)
    assert [d["status"] for d in out["documents"]] == ["written", "failed", "failed"]
    assert "binary" in out["documents"][1]["error"]
    assert "no such file" in out["documents"][2]["error"]
    assert out["totals"]["failed"] == 2
    # Plain text output says the same, and stdin works.
    res = run(
        db_url, "memorize", "-", "--dataset", "d", ok=False, stdin="Ben: hi\nAna: hello\nBen: bye\n"
    )
    assert res.returncode == 0 and res.stdout.startswith("written  <stdin>: 1 episode, ")


def test_forget_unknown_ids_and_bad_arguments(db_url: str) -> None:
    run(db_url, "memorize", "-", "--dataset", "d", stdin=MEMO)
    res = run(db_url, "forget", "--dataset", "d", "--episode", "0" * 32, "--json", ok=False)
    assert res.returncode == 1 and json.loads(res.stdout)["error"] == "NotFound"
    res = run(db_url, "forget", "--dataset", "d", ok=False)
    assert res.returncode == 2 and "--document" in res.stderr
    res = run(db_url, "memorize", "x.md", "--dataset", "d", "--reference-time", "soon", ok=False)
    assert res.returncode == 2 and "ISO-8601" in res.stderr


def test_the_progress_bar_redraws_one_line_and_ends_it() -> None:
    import io

    from memflow.ingest.progress import BarRenderer, ProgressEvent

    def event(stage: str, done: float) -> ProgressEvent:
        return ProgressEvent(stage, "/tmp/a/memo.md", 1, 4, done, 40, 12, 3.0, 9.0)  # type: ignore[arg-type]

    out = io.StringIO()
    bar = BarRenderer(out)
    bar(event("embedding", 10))
    assert out.getvalue().startswith("\r[" + "#" * 6 + "." * 18 + "]  25.0% docs 1/4")
    assert "eta 00:09 memo.md" in out.getvalue() and "\n" not in out.getvalue()
    bar(event("done", 40))
    assert out.getvalue().endswith("\n") and "100.0%" in out.getvalue()
