"""``memflow search --mode procedural`` and ``memflow procedures`` as a user runs them."""

from __future__ import annotations

from pathlib import Path

from tests.acceptance.test_cli_foundation import js, run
from tests.support.runbooks import RUNBOOK_EN, STEPS_EN


def test_procedural_search_and_listing(db_url: str, tmp_path: Path) -> None:
    book = tmp_path / "rollback.md"
    book.write_text(RUNBOOK_EN, encoding="utf-8")
    text = run(db_url, "memorize", str(book), "--dataset", "ops").stdout
    assert "1 procedure," in text

    found = js(
        run(db_url, "search", "rollback release steps", "--dataset", "ops", "--mode",
            "procedural", "--json")
    )  # fmt: skip
    top = found["results"][0]
    assert (top["kind"], top["steps"]) == ("procedure", STEPS_EN)

    listed = js(run(db_url, "procedures", "--dataset", "ops", "--json"))["procedures"]
    assert [(p["name"], p["version"], p["status"]) for p in listed] == [
        ("Rolling back a release", 1, "current")
    ]
    plain = run(db_url, "procedures", "--dataset", "ops").stdout
    assert plain.splitlines()[0].startswith("Rolling back a release  (version 1)")
    assert "  5. Write a short incident note for the team." in plain
