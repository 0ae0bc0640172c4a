"""Revision 0005 on a store with memories: upgrading keeps what was memorised and lets
procedures be written; downgrading removes procedures and entity types and nothing else.

This code writes and reads revision 0006's document columns (scope, metadata), so the memories
are written at head and taken down to 0004 first, and searches compare at head."""

from __future__ import annotations

import psycopg

from memflow.config import libpq_url
from memflow.db import engine as dbe
from memflow.embed.hash import HashEmbedder
from memflow.memory import Memory

from .snapshot import store_catalog

BEFORE = "0004"  # the revision 0005 applies on
NOTES = (
    "# Standup\n\nThe staging database ran out of disk on Tuesday. Mira moved the backups.\n",
    "小林: 周五的发布推迟到下周一\n陈静: 因为支付回调的签名校验还没通过\n",
)
RUNBOOK = (
    "# Restarting the ingest worker\n\n## Steps\n1. Stop the queue consumer.\n"
    "2. Restart the worker pod.\n3. Start the consumer again.\n"
)
QUERIES = ("why did staging fail?", "发布为什么推迟")


def _memory(url: str) -> Memory:
    """memflow on a store left at an older revision (Memory.open would upgrade it first)."""
    return Memory(dbe.make_engine(url, app_role=True), HashEmbedder(384), url=url)


def _search(mem: Memory) -> list[list[tuple[str, float]]]:
    """The results of the notes (the runbook's episode, memorised later, left out)."""
    ds = mem.dataset("team", create=False)
    return [
        [(r.name, round(r.score, 9)) for r in ds.search(q, top_k=5).results if r.name[:3] != "Res"]
        for q in QUERIES
    ]


def _kinds(url: str) -> dict[str, int]:
    with psycopg.connect(libpq_url(url)) as conn:
        rows = conn.execute("SELECT kind, count(*) FROM memflow.node GROUP BY kind").fetchall()
    return {str(k): int(n) for k, n in rows}


def test_upgrade_a_store_with_memories_then_downgrade_cleanly(fresh_db: str) -> None:
    store_catalog(fresh_db, "head")
    with _memory(fresh_db) as mem:
        ds = mem.dataset("team")
        for note in NOTES:
            assert ds.memorize(note, extractor="rules").ok
        before = _search(mem)
    store_catalog(fresh_db, BEFORE)
    kinds_before = _kinds(fresh_db)
    with Memory.open(fresh_db, embedder=HashEmbedder(384), auto_upgrade=True) as mem:
        assert _search(mem) == before
        ds = mem.dataset("team")
        report = ds.memorize(RUNBOOK, content_type="markdown", extractor="rules")
        assert report.documents[0].procedures == 1
        [proc] = ds.procedures()
        assert proc["steps"] == [
            "Stop the queue consumer.",
            "Restart the worker pod.",
            "Start the consumer again.",
        ]
    assert _kinds(fresh_db)["ProcedureStepPoint"] == 3

    store_catalog(fresh_db, BEFORE)  # downgrade with a procedure stored
    kinds = _kinds(fresh_db)
    assert set(kinds) == set(kinds_before)  # no Procedure, step, context or EntityType left
    assert kinds["Episode"] == kinds_before["Episode"] + 1  # the runbook's episode stays
    with psycopg.connect(libpq_url(fresh_db)) as conn:
        rels = conn.execute("SELECT DISTINCT relationship FROM memflow.edge").fetchall()
        orphan_texts = conn.execute(
            "SELECT count(*) FROM memflow.edge_text t WHERE NOT EXISTS (SELECT 1 FROM "
            "memflow.edge e WHERE e.dataset_id = t.dataset_id AND e.text_hash = t.text_hash)"
        ).fetchone()
        tables = conn.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'memflow' AND c.relname LIKE 'procedure%'"
        ).fetchone()
    assert {r[0] for r in rels} <= {"has_facet", "has_point", "involves_entity", "same_entity_as"}
    assert orphan_texts == (0,) and tables == (0,)
    store_catalog(fresh_db, "head")  # and up again
    with Memory.open(fresh_db, embedder=HashEmbedder(384)) as mem:
        assert mem.dataset("team").procedures() == []
        assert _search(mem) == before
