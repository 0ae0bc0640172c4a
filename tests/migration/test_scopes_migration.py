"""Revision 0006 on a store with memories: downgrading drops scopes and metadata and nothing
else; upgrading again backfills every document as unscoped ('{}'), visible to unscoped searches
and to no scoped one."""

from __future__ import annotations

import psycopg

from memflow.config import libpq_url
from memflow.embed.hash import HashEmbedder
from memflow.memory import Memory

from .snapshot import store_catalog

NOTE = "# Standup\n\nThe staging database ran out of disk on Tuesday. Mira moved the backups.\n"
NOTE_ZH = "小林: 周五的发布推迟到下周一\n陈静: 因为支付回调的签名校验还没通过\n"


def _one(url: str, sql: str) -> object:
    with psycopg.connect(libpq_url(url)) as conn:
        row = conn.execute(sql).fetchone()
    assert row is not None
    return row[0]


def test_downgrade_drops_scopes_upgrade_backfills_unscoped(fresh_db: str) -> None:
    store_catalog(fresh_db, "head")
    with Memory.open(fresh_db, embedder=HashEmbedder(384)) as mem:
        ds = mem.dataset("team")
        assert ds.memorize(NOTE, scope={"user": "mira"}, metadata={"team": "ops"}).ok
        assert ds.memorize(NOTE_ZH, scope={"user": "xiaolin"}).ok
        before = [r.episode_id for r in ds.search("why did staging fail?").results]
    nodes = _one(fresh_db, "SELECT count(*) FROM memflow.node")
    store_catalog(fresh_db, "0005")
    columns = _one(
        fresh_db,
        "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'memflow' "
        "AND table_name = 'document' AND column_name IN ('scope', 'metadata')",
    )
    assert columns == 0
    assert _one(fresh_db, "SELECT count(*) FROM memflow.document") == 2
    assert _one(fresh_db, "SELECT count(*) FROM memflow.node") == nodes
    store_catalog(fresh_db, "head")
    assert _one(fresh_db, "SELECT count(*) FROM memflow.document WHERE scope = '{}'") == 2
    assert _one(fresh_db, "SELECT count(*) FROM memflow.document WHERE metadata = '{}'") == 2
    with Memory.open(fresh_db, embedder=HashEmbedder(384)) as mem:
        ds = mem.dataset("team")
        assert [r.episode_id for r in ds.search("why did staging fail?").results] == before
        assert ds.search("why did staging fail?", scope={"user": "mira"}).results == []
        assert ds.memorize(NOTE, scope={"user": "mira"}).ok  # scoped again: a new document
        assert ds.search("why did staging fail?", scope={"user": "mira"}).results
