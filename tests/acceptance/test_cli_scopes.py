"""``memflow memorize --scope/--metadata`` and ``memflow search --scope/--where`` as a user runs
them; the JSON results carry each result's scope and metadata."""

from __future__ import annotations

from pathlib import Path

from tests.acceptance.test_cli_foundation import js, run

NOTES = {
    "ana.md": "# Trip\n\nAna booked the night train to Vienna for the conference.\n",
    "ben.md": "# Trip\n\nBen booked a flight to Vienna and a hotel near the station.\n",
}


def test_scoped_memorize_and_filtered_search(db_url: str, tmp_path: Path) -> None:
    for name, text in NOTES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    user = {"ana.md": "ana", "ben.md": "ben"}
    for name in NOTES:
        out = js(run(db_url, "memorize", str(tmp_path / name), "-d", "trips", "--json",
                     "--scope", f"user={user[name]}", "--scope", "session=s9",
                     "--metadata", '{"project": "atlas", "year": 2026}'))  # fmt: skip
        assert out["documents"][0]["status"] == "written"
    found = js(run(db_url, "search", "How does Ana get to Vienna?", "-d", "trips", "--json",
                   "--display", "summary", "--scope", "user=ana",
                   "--where", '{"project": "atlas", "year": {"gte": 2026}}'))  # fmt: skip
    assert found["results"]
    for r in found["results"]:
        assert r["scope"] == {"user": "ana", "session": "s9"}
        assert r["metadata"] == {"project": "atlas", "year": 2026}
    none = js(run(db_url, "search", "Vienna", "-d", "trips", "--json",
                  "--where", '{"project": {"not": "atlas"}}'))  # fmt: skip
    assert none["results"] == []

    bad = run(db_url, "search", "Vienna", "-d", "trips", "--scope", "team=x", ok=False)
    assert bad.returncode != 0 and "'team'" in bad.stderr
    bad = run(db_url, "search", "Vienna", "-d", "trips", "--where", "{project: atlas}", ok=False)
    assert bad.returncode != 0 and "--where is not valid JSON" in bad.stderr
    bad = run(db_url, "memorize", str(tmp_path / "ana.md"), "-d", "trips", "--scope", "user",
              ok=False)  # fmt: skip
    assert bad.returncode != 0 and "KEY=VALUE" in bad.stderr
