"""The LoCoMo replay reproduces the live search exactly, and variants change the ranking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import locomo, locomo_replay


def test_replay_equals_the_live_search_and_ranks_variants(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    live = locomo.main(
        ["--quick", "--database-url", db_url, "--out", str(tmp_path), "--systems", "episodic"]
    )
    recording = tmp_path / "replay.pkl"
    quick = ["--conversations", "1", "--sessions", "3", "--questions", "20", "--embedder", "hash"]
    rec = locomo_replay.main(
        ["record", "--database-url", db_url, "--recording", str(recording), *quick]
    )
    assert rec["questions"] == live["overall"]["episodic"]["questions"] > 0
    capsys.readouterr()
    res = locomo_replay.main(
        [
            "rank",
            "--recording",
            str(recording),
            "--json",
            "--split",
            "all",
            "shipped={}",
            'no_priors={"episode_prior_lambda": 0, "facet_prior_mu": 0, "speaker_penalty": 0}',
        ]
    )
    assert json.loads(capsys.readouterr().out) == res
    # The shipped config replayed from the recording = the live search, number for number.
    for b in locomo.BUDGETS:
        key = f"evidence_recall@{b}"
        assert res["shipped"]["overall"][key] == pytest.approx(live["overall"]["episodic"][key])
    assert res["shipped"]["overall"] != res["no_priors"]["overall"]
    # The quick run's one conversation is the first of the file: the tune half.
    assert set(live["splits"]) == {"tune"}
    tuned = locomo_replay.main(["rank", "--recording", str(recording), "--json", "shipped={}"])
    assert tuned["shipped"]["overall"] == res["shipped"]["overall"]
    with pytest.raises(SystemExit, match="no recorded question"):
        locomo_replay.main(["rank", "--recording", str(recording), "--split", "test"])
    with pytest.raises(SystemExit, match="bad variant"):
        locomo_replay.parse_variant('x={"no_such_field": 1}')


def test_choose_and_ablations_write_their_pages(db_url: str, tmp_path: Path) -> None:
    recording = tmp_path / "replay.pkl"
    quick = ["--conversations", "1", "--sessions", "3", "--questions", "20", "--embedder", "hash"]
    locomo_replay.main(["record", "--database-url", db_url, "--recording", str(recording), *quick])
    out = ["--recording", str(recording), "--out", str(tmp_path)]
    picked = locomo_replay.main(
        ["choose", "relevance_cutoff", "none,0.05,0.2", "--write", "cut", *out]
    )
    assert [row["value"] for row in picked["tune"]] == [None, 0.05, 0.2]
    assert picked["chosen"] in (None, 0.05, 0.2)
    best = max(locomo_replay._order_key(row) for row in picked["tune"])
    chosen_row = next(row for row in picked["tune"] if row["value"] == picked["chosen"])
    assert locomo_replay._order_key(chosen_row) == best  # the rule picks a best tune value
    assert set(picked["splits"]) == {"tune"}  # the quick recording has no test half
    same = locomo_replay.main(["compare", str(recording), str(recording)])
    assert same["compared"] == same["identical"] > 0 and set(same["differ"].values()) == {0}
    ablations = locomo_replay.main(["rank", "--ablations", "--write", "abl", *out])
    assert set(ablations["variants"]) == set(locomo_replay.ABLATIONS)
    for name in ("cut", "abl"):
        data = json.loads((tmp_path / f"{name}.json").read_text())
        assert data["stamp"]["script"] == "benchmarks/locomo_replay.py"
        assert data["stamp"]["settings"]["recording"]["stamp"]["commit"] == data["stamp"]["commit"]
        page = (tmp_path / f"{name}.md").read_text()
        assert page == locomo_replay.markdown(data)
