"""Migrations with data in the store (extends tests/migration, which checks the empty schema and a
one-episode round trip): rows written before a revision survive the upgrade unchanged, every
down/up step keeps every row of every table, and isolation still holds afterwards."""

from __future__ import annotations

import psycopg
from alembic.script import ScriptDirectory

from memflow.config import libpq_url
from memflow.db import engine as dbe
from memflow.db import migrate
from memflow.embed.hash import HashEmbedder
from memflow.memory import Memory

from ._support import (
    REVISION_0004_COLUMNS,
    assert_intact,
    doc_drafts,
    fingerprint,
    record,
    row_digests,
    rows_missing,
    write_chunked_document,
)


def _revisions() -> list[str]:
    """Every revision from base to head."""
    script = ScriptDirectory.from_config(migrate.alembic_config())
    return [r.revision for r in reversed(list(script.walk_revisions()))]


def _to(url: str, revision: str, *, down: bool = False) -> None:
    eng = dbe.make_engine(url)
    with eng.begin() as conn:
        if down:
            migrate.downgrade(conn, revision)
        else:
            migrate.upgrade(conn, embedding_dim=384, revision=revision)
        assert migrate.current_revision(conn) == revision
    eng.dispose()


def _fill(mem: Memory) -> None:
    a, b = mem.dataset("before-a"), mem.dataset("before-b")
    for ds, first in ((a, 0), (b, 10)):
        ds.add_episodes(doc_drafts(first))
        write_chunked_document(ds, first + 1)
        ds.memorize(
            f"Ines Lopez moved ticket T-{first} to Kubernetes on 2024-05-0{1 + first % 9}. "
            "王小明 will review it next week.",
            extractor="rules",
        )


def test_data_written_at_the_first_revision_survives_the_upgrade(fresh_db: str) -> None:
    first = _revisions()[0]
    # The memories are written at head and the store taken down to the first revision: this
    # tree's writer fills columns revision 0004 added. What the downgrade leaves is what the first
    # release held (no row-level security yet).
    _to(fresh_db, migrate.head_revision())
    old = Memory(dbe.make_engine(fresh_db), HashEmbedder(384), url=fresh_db)
    try:
        _fill(old)
        stats = {n: old.dataset(n).stats() for n in ("before-a", "before-b")}
    finally:
        old.close()
    _to(fresh_db, first, down=True)
    skip = REVISION_0004_COLUMNS
    before, kept = fingerprint(fresh_db), row_digests(fresh_db)
    _to(fresh_db, migrate.head_revision())
    assert fingerprint(fresh_db, skip) == before
    lost = rows_missing(kept, row_digests(fresh_db, skip))
    assert lost == 0
    with Memory.open(fresh_db, embedder=HashEmbedder(384)) as mem:
        a = mem.dataset("before-a", create=False)
        assert {n: mem.dataset(n).stats() for n in stats} == stats
        assert a.stats()["documents"] == 3 and a.stats()["chunks"] > 2
        assert {e["name"] for e in a.episodes()} >= {"Meeting 0.0", "Meeting 0.1"}
        assert a.search("Ines Lopez Kubernetes", top_k=3).results
        # Upgraded rows are now under row-level security.
        with psycopg.connect(libpq_url(fresh_db), autocommit=True) as conn:
            conn.execute("SET ROLE memflow_app")
            conn.execute("SELECT set_config('memflow.dataset_id', %s, false)", (str(a.id),))
            rows = conn.execute("SELECT DISTINCT dataset_id FROM memflow.node").fetchall()
        assert rows == [(a.id,)]
    assert_intact(fresh_db)
    record(
        "migration_upgrade_with_data",
        revisions=_revisions(),
        rows=sum(len(r) for r in kept.values()),
        rows_lost=lost,
    )


def test_every_down_up_step_keeps_every_row(db_url: str) -> None:
    with Memory.open(db_url, embedder=HashEmbedder(384)) as mem:
        _fill(mem)
        expected = {n: mem.dataset(n).stats() for n in ("before-a", "before-b")}
    # Below revision 0004 its columns are gone; every other column of every row must survive,
    # and the upgrade back must restore the rest exactly (its backfill reads the same times).
    skip = REVISION_0004_COLUMNS
    before, kept = fingerprint(db_url, skip), row_digests(db_url, skip)
    whole = fingerprint(db_url)
    revs = _revisions()
    steps = 0
    for target in reversed(revs[:-1]):  # head-1 ... base revision
        _to(db_url, target, down=True)
        assert fingerprint(db_url, skip) == before, f"downgrade to {target} lost rows"
        _to(db_url, migrate.head_revision())
        assert fingerprint(db_url) == whole, f"upgrade from {target} lost rows"
        steps += 1
    lost = rows_missing(kept, row_digests(db_url, skip))
    assert lost == 0
    with Memory.open(db_url, embedder=HashEmbedder(384)) as mem:
        assert {n: mem.dataset(n).stats() for n in expected} == expected
        b = mem.dataset("before-b")
        assert b.add_episodes(doc_drafts(20)).status == "written"  # still writable
        assert b.stats()["episodes"] == expected["before-b"]["episodes"] + len(doc_drafts(20))
        a = mem.dataset("before-a")
        hits = {r.episode_id for r in a.search("Meeting 10.0 ticket T-10-0", top_k=10).results}
        assert hits.isdisjoint({e["id"] for e in b.episodes()})
    assert_intact(db_url)
    record(
        "migration_round_trip_with_data",
        steps=steps,
        rows=sum(len(r) for r in kept.values()),
        rows_lost=lost,
    )
