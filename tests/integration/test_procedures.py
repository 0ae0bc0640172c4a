"""Procedural memory end to end (issue 15's acceptance test): runbooks in English and Chinese
among unrelated notes, recalled with their steps in order; an edited runbook supersedes the old
version; forget removes both versions' rows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from memflow.config import libpq_url
from memflow.embed.local import LocalEmbedder
from memflow.memory import Memory
from tests.support.runbooks import RUNBOOK_EN, RUNBOOK_ZH, STEPS_EN, STEPS_ZH

NOTES = [
    "# Team offsite\n\nThe offsite moves to the lake house in June. Nadia books the bus and "
    "Tomasz brings the projector. Dinner is at the harbour restaurant.\n",
    "# 季度预算\n\n市场部的预算增加了两成，主要用于展会。财务要求下周五之前提交明细。\n",
    "# Vendor review\n\nThe label printer vendor raised prices by 12 percent; we compare two "
    "other vendors before renewing in March.\n",
]
EDITED_EN = RUNBOOK_EN.replace(
    "4. Watch the error rate for 15 minutes.",
    "4. Watch the error rate and the p99 latency for 30 minutes.",
)


@pytest.fixture
def store(db_url: str) -> Iterator[Memory]:
    with Memory.open(db_url, embedder=LocalEmbedder()) as mem:
        yield mem


def _memorize(ds: Any, text: str, name: str) -> Any:
    report = ds.memorize(text, content_type="markdown", extractor="rules")
    assert report.ok, report.to_json()
    return report.documents[0]


def _rows(url: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(libpq_url(url)) as conn:  # the superuser: every dataset, no RLS
        return conn.execute(sql).fetchall()


def test_runbooks_are_recalled_with_steps_superseded_and_forgotten(
    store: Memory, db_url: str
) -> None:
    ds = store.dataset("ops")
    first = _memorize(ds, RUNBOOK_EN, "rollback.md")
    assert first.procedures == 1 and first.episodes == 1
    _memorize(ds, RUNBOOK_ZH, "rollback.zh.md")
    for i, note in enumerate(NOTES):
        assert _memorize(ds, note, f"note{i}.md").procedures == 0

    en = ds.search("How do we roll back a release?", mode="procedural")
    assert en.mode == "procedural"
    top = en.results[0]
    assert (top.kind, top.name, top.steps) == ("procedure", "Rolling back a release", STEPS_EN)
    assert top.context.splitlines()[1] == "  1. Freeze the deploy pipeline in the release channel."
    assert top.citations and top.citations[0].document_id == first.id
    zh = ds.search("回滚发布的步骤是什么？", mode="procedural")
    assert (zh.results[0].name, zh.results[0].steps) == ("发布回滚流程", STEPS_ZH)
    dumped = zh.model_dump(mode="json")["results"][0]
    assert dumped["kind"] == "procedure" and dumped["steps"] == STEPS_ZH
    # The episodic mode puts the procedure first for a how-to query, and only for one.
    how = ds.search("How do we roll back a release?")
    assert (how.results[0].kind, how.results[0].steps) == ("procedure", STEPS_EN)
    assert how.results[1].kind == "episode" and "procedure" in how.notes[-1]
    assert how.context.startswith("Procedure: Rolling back a release\n  1. Freeze")
    packed = ds.search("How do we roll back a release?", display="highly_related")
    assert packed.results[0].kind == "procedure"  # the packed context keeps its budget
    assert not packed.context.startswith("Procedure:")
    assert all(r.kind == "episode" for r in ds.search("Who books the bus?").results)
    # The procedure hangs off the episode it was laid out in.
    assert top.episode_id in {e["id"] for e in ds.episodes()}

    edited = _memorize(ds, EDITED_EN, "rollback.md")
    assert edited.id != first.id and edited.procedures == 1
    versions = {
        (r[0], r[1]): r[2]
        for r in _rows(
            db_url,
            "SELECT name, version, status FROM memflow.procedures WHERE dataset = 'ops'",
        )
    }
    assert versions == {
        ("Rolling back a release", 1): "superseded",
        ("Rolling back a release", 2): "current",
        ("发布回滚流程", 1): "current",
    }
    again = ds.search("How do we roll back a release?", mode="procedural")
    assert again.results[0].steps[3] == "Watch the error rate and the p99 latency for 30 minutes."
    assert [r.name for r in again.results].count("Rolling back a release") == 1
    listed = ds.procedures()
    assert sorted(p["name"] for p in listed) == ["Rolling back a release", "发布回滚流程"]
    assert len(ds.procedures(all_versions=True)) == 3

    # Forget the edited runbook: its version goes and the first one is current again.
    report = ds.forget(document_id=edited.id)
    assert report.procedures == 1
    assert [p["version"] for p in ds.procedures() if p["name"] == "Rolling back a release"] == [1]
    # Forget the first: no row of either version remains, in any table.
    ds.forget(document_id=first.id)
    left = _rows(
        db_url,
        "SELECT kind, count(*) FROM memflow.node WHERE kind LIKE 'Procedure%' GROUP BY kind",
    )
    assert dict(left) == {"Procedure": 1, "ProcedureStepPoint": 5, "ProcedureContextPoint": 2}
    assert _rows(db_url, "SELECT count(*) FROM memflow.edge WHERE relationship = 'supersedes'") == [
        (0,)
    ]
    for table in ("procedure_summary", "procedure_step_text", "procedure_context_text"):
        texts = [r[0] for r in _rows(db_url, f"SELECT text FROM memflow.{table}")]
        assert not any("rollback job" in t or "deploy pipeline" in t for t in texts), table
        assert texts, f"{table}: the Chinese runbook's rows stay"
    assert [p["name"] for p in ds.procedures(all_versions=True)] == ["发布回滚流程"]


TYPED = [
    "# Quarterly accounts\n\nNorbright Metals is our supplier of copper wire. Acme Retail is a "
    "customer since 2021. Lakeview Foods became a customer in May. The team meets on Fridays.\n",
    "# Shipping update\n\nThe supplier Hengyuan Logistics shipped late this week. Bluewhale "
    "Tech is our customer and renews next month.\n",
]


def test_entities_are_reached_by_their_type(store: Memory) -> None:
    ds = store.dataset("accounts")
    for text in TYPED:
        assert ds.memorize(text, content_type="markdown", extractor="rules").ok
    customers = {e["name"] for e in ds.entities_of_type("customers")}
    assert customers == {"Acme Retail", "Lakeview Foods", "Bluewhale Tech"}
    suppliers = {"Norbright Metals", "Hengyuan Logistics"}
    assert {e["name"] for e in ds.entities_of_type("suppliers")} == suppliers
    assert {e["name"] for e in ds.entities_of_type("供应商")} == suppliers  # 供应商: supplier
    assert ds.entities_of_type("weather") == []


def test_memorising_an_older_version_again_makes_it_current(mem: Memory) -> None:
    ds = mem.dataset("revert")
    edited = RUNBOOK_EN.replace("15 minutes", "30 minutes")
    for text in (RUNBOOK_EN, edited, RUNBOOK_EN + "\nAsk in #releases when unsure.\n"):
        assert ds.memorize(text, content_type="markdown", extractor="rules").ok
    rows = {(p["version"], p["status"]) for p in ds.procedures(all_versions=True)}
    assert rows == {(1, "current"), (2, "superseded")}
    [current] = ds.procedures()
    assert current["steps"] == STEPS_EN


def test_add_episode_drafts_with_procedures_version_them(mem: Memory) -> None:
    ds = mem.dataset("drafts")

    def draft(wait: str) -> dict[str, Any]:
        steps = [{"text": "Stop the consumer."}, {"text": f"Wait {wait}."}, {"text": "Start it."}]
        return {
            "name": "Worker restart agreed",
            "summary": f"The team agreed how to restart the worker ({wait}).",
            "procedures": [{"name": "Restart the worker", "steps": steps}],
        }

    ds.add_episode(draft("one minute"))
    ds.add_episode(draft("five minutes"))
    rows = sorted(
        (p["version"], p["status"], p["steps"][1]) for p in ds.procedures(all_versions=True)
    )
    assert rows == [(1, "superseded", "Wait one minute."), (2, "current", "Wait five minutes.")]
