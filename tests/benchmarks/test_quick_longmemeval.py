"""Smoke test of benchmarks/longmemeval.py: ``--quick`` on a synthetic LongMemEval-shaped folder
(CI has no LongMemEval data), the split and slice rules, the persistent embedding cache, and the
store's refusal to mix code."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks import lme_data, lme_fixture, lme_store, longmemeval
from benchmarks.embed_cache import DiskCachedEmbedder
from memflow.embed.hash import HashEmbedder
from memflow.memory import Memory


def test_split_is_sha256_parity_and_the_slice_is_stratified(tmp_path: Path) -> None:
    assert lme_data.split_of("a") == "test"  # sha256("a") = ca97...bb (odd)
    for qid in ("a", "b", "q1", "q2"):
        odd = int(lme_data.digest(qid), 16) % 2
        assert lme_data.split_of(qid) == ("test" if odd else "tune")
    lme_fixture.write_fixture(tmp_path)
    chosen = lme_data.choose(tmp_path, per_type=1)
    for split, items in chosen.items():
        assert sorted(i.question_type for i in items) == sorted(lme_data.QUESTION_TYPES)
        assert all(i.split == split and not i.abstention for i in items)
        assert all(len(i.sessions) >= lme_data.MIN_SESSIONS for i in items)
    # The file with 42 sessions and the abstention item are never chosen.
    ids = {i.question_id for items in chosen.values() for i in items}
    assert "fxshort01" not in ids and "fxabs001_abs" not in ids


def test_items_are_read_in_time_order_with_their_evidence(tmp_path: Path) -> None:
    raw = lme_fixture.item("knowledge-update", "fxku")
    path = tmp_path / "43_fxku.json"
    path.write_text(json.dumps(raw))
    item = lme_data.read_item(path)
    dates = [s.date for s in item.sessions]
    assert dates == sorted(dates) and raw["haystack_dates"] != sorted(raw["haystack_dates"])
    older, latest = item.dated_answer_sessions()
    assert older.date < latest.date and item.answer_sessions == {older.index, latest.index}
    texts = {k: body for s in item.sessions for k, _, body in s.turns}
    assert "five" in texts[item.evidence_by_session()[older.index][0]]
    assert "nine" in texts[item.evidence_by_session()[latest.index][0]]
    update = longmemeval.update_sessions(item)
    assert update is not None and older.date < update[2] < latest.date
    docs = lme_data.documents(item)
    assert len(docs) == len(item.sessions)
    assert all("answer" not in c.key for d in docs for c in d.chunks)  # ids never stored


def test_context_order_and_latest_first() -> None:
    order = [{"S1:0"}, {"S9:0"}, {"S30:0"}]
    assert longmemeval.comes_first(order, {"S30:0"}, {"S4:0"}) == 1.0  # older one absent
    assert longmemeval.comes_first(order, {"S30:0"}, {"S9:0"}) == 0.0  # older one first
    assert longmemeval.comes_first(order, {"S9:0"}, {"S30:0"}) == 1.0
    assert longmemeval.comes_first(order, {"S5:0"}, set()) == 0.0  # latest one absent


def test_disk_cache_serves_vectors_across_instances(tmp_path: Path) -> None:
    path = tmp_path / "emb.sqlite"
    first = DiskCachedEmbedder(HashEmbedder(dim=16), path)
    a = first.embed_passages(["one", "two", "one"])
    q = first.embed_query("one")
    assert first.counts()["misses"] == 3 and first.counts()["hits"] == 1
    first.close()
    second = DiskCachedEmbedder(HashEmbedder(dim=16), path)
    b = second.embed_passages(["two", "one"])
    assert np.array_equal(b, a[[1, 0]]) and np.array_equal(second.embed_query("one"), q)
    assert second.counts() == {"hits": 3, "misses": 0, "words_embedded": 0}
    second.close()


def test_quick_run_writes_results_and_refuses_other_code(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, out = tmp_path / "home", tmp_path / "out"
    args = ["--quick", "--database-url", db_url, "--home", str(home), "--out", str(out)]
    res = longmemeval.main(args)
    saved = json.loads((out / "longmemeval.json").read_text())
    assert saved["splits"].keys() == res["splits"].keys() == {"tune", "test", "both"}
    for split in ("tune", "test"):
        table = saved["splits"][split]
        assert set(table) == {"all", *lme_data.QUESTION_TYPES}
        assert set(table["all"]) == set(longmemeval.SYSTEMS)
        for row in table["all"].values():
            assert row["questions"] == 6
            assert row["evidence_recall@500"] <= row["evidence_recall@2000"]
            assert row["episode_coverage@5"] <= row["episode_recall@5"]
            assert row["episode_coverage@5"] <= row["episode_coverage@10"]
            assert row["latest_first_questions"] == 2 and row["as_of_questions"] == 1
    # Short, distinct evidence in 43 small sessions: some system finds it.
    both = saved["splits"]["both"]["all"]
    assert max(r["evidence_recall@2000"] for r in both.values()) > 0.3
    assert max(r["episode_recall@5"] for r in both.values()) > 0.3
    assert saved["stamp"]["commit"] and saved["stamp"]["machine"]["cores"]
    store = saved["store"]
    assert len(store["ingested_this_run"]) == 12 and store["written_by"][0]["code"]
    # Filler sessions repeat across items: the disk cache served them after the first item.
    assert sum(r["cache_hits"] for r in store["ingested_this_run"][1:]) > 0
    md = (out / "longmemeval.md").read_text()
    assert "## Test half" in md and "latest first" in md and "--search-only" in md
    assert "## Items where the systems differ" in md
    assert len((home / "ingest-log.jsonl").read_text().splitlines()) == 12
    # The stamp names the script and its command; the page is markdown(json), notes come from
    # --note (also through --render-only, which keeps the run's stamp).
    assert saved["stamp"]["script"] == "benchmarks/longmemeval.py"
    assert "python -m benchmarks.longmemeval --quick" in saved["stamp"]["command"]
    assert md == longmemeval.markdown(saved).rstrip() + "\n" and "## Notes" not in md
    rerendered = longmemeval.main(["--render-only", "--out", str(out), "--note", "a note"])
    assert rerendered["stamp"] == saved["stamp"] and rerendered["notes"] == ["a note"]
    assert (out / "longmemeval.md").read_text() == longmemeval.markdown(rerendered).rstrip() + "\n"
    assert "## Notes\n\n- a note" in (out / "longmemeval.md").read_text()

    # A second run reuses the store (nothing ingested) ...
    again = longmemeval.main([*args, "--systems", "vector"])
    assert again["store"]["ingested_this_run"] == []
    # ... and completes an item an interrupted ingest left short, one session only.
    short = saved["slice"]["test"][0]["question_id"]
    with Memory.open(db_url, embedder="hash") as mem:
        ds = mem.dataset(f"lme-{short}", create=False)
        ds.forget(document_id=ds.documents()[-1].id)
    resumed = longmemeval.main([*args, "--systems", "vector"])["store"]["ingested_this_run"]
    assert [(r["question_id"], r["resumed"]) for r in resumed] == [(short, True)]
    # Other code is refused unless asked for.
    monkeypatch.setattr(lme_store, "code_hash", lambda *a: "0" * 16)
    with pytest.raises(SystemExit, match="--fresh"):
        longmemeval.main([*args, "--systems", "vector"])
    other = longmemeval.main([*args, "--systems", "vector", "--search-only"])
    assert other["store"]["written_by"][0]["code"] != "0" * 16
    assert not other["store"]["same_code_as_this_tree"]
    # --keep-other ingests only what is missing and keeps what other code wrote beside it; an
    # item other code left incomplete is re-ingested whole (never topped up).
    gone, cut = (saved["slice"]["test"][i]["question_id"] for i in (1, 2))
    with Memory.open(db_url, embedder="hash") as mem:
        mem.drop_dataset(f"lme-{gone}")
        ds = mem.dataset(f"lme-{cut}", create=False)
        ds.forget(document_id=ds.documents()[-1].id)
    kept = longmemeval.main([*args, "--systems", "vector", "--split", "test", "--keep-other"])
    redone_ids = [(r["question_id"], r["resumed"]) for r in kept["store"]["ingested_this_run"]]
    assert sorted(redone_ids) == sorted([(gone, False), (cut, False)])
    with Memory.open(db_url, embedder="hash") as mem:
        assert [w["code"] for w in lme_store.writers(mem, f"lme-{cut}")] == ["0" * 16]
    writers = {w["code"] for w in kept["store"]["written_by"]}
    assert writers == {"0" * 16, other["store"]["written_by"][0]["code"]}
    with Memory.open(db_url, embedder="hash") as mem:
        mem.drop_dataset(f"lme-{gone}")
    # --fresh re-ingests what other code wrote (the cache serves every text: nothing embedded).
    fresh = longmemeval.main([*args, "--systems", "vector", "--split", "tune", "--fresh"])
    redone = fresh["store"]["ingested_this_run"]
    assert len(redone) == 6 and {r["code"] for r in redone} == {"0" * 16}
    assert sum(r["texts_embedded"] for r in redone) == 0
    assert fresh["store"]["written_by"] == [{"commit": saved["stamp"]["commit"], "code": "0" * 16}]
