"""Smoke test of the LoCoMo benchmark: ``--quick`` (1 conversation, 3 sessions, hash embedder)
end to end into a scratch database, results written to a temporary folder."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import locomo


def test_split_evidence_repairs_and_rejects() -> None:
    known = {"D8:6", "D9:17", "D11:26", "D30:5"}
    keys, bad = locomo.split_evidence(["D8:6; D9:17", "D:11:26", "D30:05", "D", "D99:1"], known)
    assert keys == ("D8:6", "D9:17", "D11:26", "D30:5")
    assert bad == ["D", "D99:1"]


def test_turn_text_includes_photo_caption() -> None:
    turn = {"text": "Look at this!", "blip_caption": "a photo of a dog"}
    assert locomo.turn_text(turn) == "Look at this! [shares a photo: a photo of a dog]"


def test_quick_run_writes_results(db_url: str, tmp_path: Path) -> None:
    res = locomo.main(["--quick", "--database-url", db_url, "--out", str(tmp_path)])
    written = json.loads((tmp_path / "locomo.json").read_text())
    assert written["overall"].keys() == res["overall"].keys()
    assert {"vector", "lexical", "episodic"} <= set(written["overall"])
    for row in written["overall"].values():
        assert row["questions"] > 0
        for b in locomo.BUDGETS:
            assert 0.0 <= row[f"evidence_recall@{b}"] <= 1.0
        assert row["evidence_recall@200"] <= row["evidence_recall@1000"] + 1e-9
    # With the evidence inside three sessions, some system must find some of it.
    assert max(r["evidence_recall@1000"] for r in written["overall"].values()) > 0.2
    assert written["stamp"]["commit"] and written["stamp"]["machine"]["cores"]
    assert written["stamp"]["script"] == "benchmarks/locomo.py"
    sup = written["supersessions"]  # counted from the store: every conversation's points
    assert sup["points"] == sum(c["points"] for c in sup["conversations"].values()) > 0
    assert sup["superseded"] == len(sup["supersessions"]) <= sup["points"]
    md = (tmp_path / "locomo.md").read_text()
    assert md == locomo.markdown(written).rstrip() + "\n"  # the page is the json, rendered
    assert "episodic" in md and "Supersessions at ingest" in md
