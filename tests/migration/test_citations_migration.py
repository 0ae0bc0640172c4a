"""Revision 0008 on a store with memories: downgrading drops the stored citations and nothing
else; upgrading again backfills them exactly as the write path stores them, and search returns
the same results (its projection reads them instead of joining node_chunk)."""

from __future__ import annotations

import json
from typing import Any

import psycopg

from memflow.config import libpq_url
from memflow.embed.hash import HashEmbedder
from memflow.memory import Memory
from tests.integration.test_memorize import CONVERSATION, MEMO

from .snapshot import store_catalog

STORED = "SELECT id, citations, speaker FROM memflow.node ORDER BY id"
QUERIES = ("orders database migration", "who moved the backups?", "what did Priya decide?")


def _all(url: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(libpq_url(url)) as conn:
        return conn.execute(sql).fetchall()


def _searches(url: str) -> list[Any]:
    with Memory.open(url, embedder=HashEmbedder(384)) as mem:
        ds = mem.dataset("team")
        return [
            ds.search(query, display=display).model_dump(mode="json", exclude={"timings_ms"})
            for query in QUERIES
            for display in ("highly_related", "summary")
        ]


def test_downgrade_drops_stored_citations_upgrade_backfills_them(fresh_db: str) -> None:
    store_catalog(fresh_db, "head")
    with Memory.open(fresh_db, embedder=HashEmbedder(384)) as mem:
        assert mem.dataset("team").memorize([MEMO, json.dumps(CONVERSATION)]).ok
    written = _all(fresh_db, STORED)
    assert any(c is not None for _, c, _ in written) and any(s for _, _, s in written)
    before = _searches(fresh_db)
    nodes = _all(fresh_db, "SELECT count(*) FROM memflow.node")
    store_catalog(fresh_db, "0007")
    columns = _all(
        fresh_db,
        "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'memflow' "
        "AND table_name = 'node' AND column_name IN ('citations', 'speaker')",
    )
    assert columns == [(0,)] and _all(fresh_db, "SELECT count(*) FROM memflow.node") == nodes
    store_catalog(fresh_db, "head")
    assert _all(fresh_db, STORED) == written  # the backfill stores what the write path did
    assert _searches(fresh_db) == before
