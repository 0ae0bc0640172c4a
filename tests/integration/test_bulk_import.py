"""Dataset.import_episodes: one transaction, indexes rebuilt and foreign keys checked at the end.

It must store exactly what per-document writes store, leave every index and constraint as the
migrations made it, and write nothing (DDL included) when anything fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import psycopg
import pytest

from benchmarks.ingest import synthetic_drafts
from memflow import ConfigurationError, InvalidInput, Memory
from memflow.config import libpq_url
from memflow.drafts import EpisodeDraft
from memflow.embed.hash import HashEmbedder
from tests.conftest import TEMPLATE, _scratch_database
from tests.integration.test_storage import TABLES

# recorded_at (revision 0004) is the write time when a document gives no time of its own, and
# valid_at (the event time) falls back to it when the drafts state none.
_TIMESTAMPS = {"created_at", "updated_at", "recorded_at", "valid_at"}


def content(url: str) -> dict[str, list[tuple[str, ...]]]:
    """Every row of every memflow table without its write timestamps."""
    out = {}
    with psycopg.connect(libpq_url(url)) as conn:
        for t in TABLES:
            cols = [
                r[0]
                for r in conn.execute(
                    "SELECT column_name FROM information_schema.columns"
                    " WHERE table_schema = 'memflow' AND table_name = %s ORDER BY ordinal_position",
                    (t,),
                )
                if r[0] not in _TIMESTAMPS
            ]
            rows = conn.execute(f"SELECT {', '.join(cols)} FROM memflow.{t}").fetchall()
            out[t] = sorted(tuple(str(v) for v in r) for r in rows)
    return out


def catalog(url: str) -> dict[str, list[tuple[str, ...]]]:
    """Index and constraint definitions of the memflow schema."""
    with psycopg.connect(libpq_url(url)) as conn:
        indexes = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'memflow' ORDER BY 1"
        ).fetchall()
        constraints = conn.execute(
            "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid), convalidated"
            " FROM pg_constraint WHERE connamespace = 'memflow'::regnamespace ORDER BY 1, 2"
        ).fetchall()
    return {
        "indexes": [tuple(map(str, r)) for r in indexes],
        "constraints": [tuple(map(str, r)) for r in constraints],
    }


@pytest.fixture
def documents() -> list[list[EpisodeDraft]]:
    rng = np.random.default_rng(5)
    # Entities are shared between documents (a pool of 12 names for 4 x 3 episodes).
    return [synthetic_drafts(rng, d, 3, 12) for d in range(4)]


@pytest.fixture
def other_db(pg_admin_url: str, template_db: str) -> Iterator[str]:
    with _scratch_database(pg_admin_url, TEMPLATE) as url:
        yield url


def test_bulk_import_stores_exactly_what_per_document_writes_store(
    db_url: str, other_db: str, documents: list[list[EpisodeDraft]]
) -> None:
    before = catalog(db_url)
    with Memory.open(db_url, embedder=HashEmbedder(384)) as mem:
        ds = mem.dataset("bulk")
        seen: list[tuple[int, int]] = []
        results = ds.import_episodes(documents, progress=lambda i, n: seen.append((i, n)))
        assert [r.status for r in results] == ["written"] * 4
        assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
        assert sum(r.embeddings for r in results) == ds.stats()["embeddings"]
        hit = ds.search(documents[2][1].facets[0].points[0].search_text, top_k=3)
    with Memory.open(other_db, embedder=HashEmbedder(384)) as mem:
        ds = mem.dataset("bulk")
        for drafts in documents:
            assert ds.add_episodes(drafts).status == "written"
        expected = ds.search(documents[2][1].facets[0].points[0].search_text, top_k=3)
    assert content(db_url) == content(other_db)
    # Every HNSW index and foreign key is back, exactly as the migrations defined it.
    assert catalog(db_url) == before
    assert hit.results and [(r.episode_id, r.score) for r in hit.results] == [
        (r.episode_id, r.score) for r in expected.results
    ]


def test_bulk_import_of_stored_documents_is_a_no_op(
    mem: Memory, documents: list[list[EpisodeDraft]]
) -> None:
    ds = mem.dataset("bulk")
    ds.add_episodes(documents[0])
    results = ds.import_episodes([documents[0], documents[1], documents[1]])
    assert [r.status for r in results] == ["skipped", "written", "skipped"]
    stats = ds.stats()
    assert stats["documents"] == 2
    assert [r.status for r in ds.import_episodes(documents[:2])] == ["skipped", "skipped"]
    assert ds.stats() == stats


@pytest.mark.parametrize("stage", ["before_write", "mid_embeddings", "before_commit"])
def test_a_failed_bulk_import_writes_nothing_and_keeps_the_indexes(
    mem: Memory, db_url: str, documents: list[list[EpisodeDraft]], stage: str
) -> None:
    ds = mem.dataset("bulk")
    ds.add_episodes(documents[0])
    before, rows = catalog(db_url), content(db_url)

    def fault(s: str) -> None:
        if s == stage:
            raise RuntimeError(f"injected at {s}")

    mem.fault = fault
    with pytest.raises(RuntimeError, match="injected"):
        ds.import_episodes(documents[1:])
    mem.fault = None
    assert content(db_url) == rows
    assert catalog(db_url) == before
    # The store still works: the same import now goes through.
    assert {r.status for r in ds.import_episodes(documents[1:])} == {"written"}


def test_bulk_import_rejects_empty_input(mem: Memory) -> None:
    ds = mem.dataset("bulk")
    with pytest.raises(InvalidInput, match="no documents"):
        ds.import_episodes([])
    with pytest.raises(InvalidInput, match="no episode drafts"):
        ds.import_episodes([[]])
    with pytest.raises(InvalidInput):
        ds.import_episodes([[{"name": "x"}]])
    assert ds.stats()["documents"] == 0


def test_bulk_import_needs_the_schema_owner(
    mem: Memory, db_url: str, tenant_login: str, documents: list[list[EpisodeDraft]]
) -> None:
    mem.dataset("bulk")  # datasets are created by the owner
    before: dict[str, Any] = catalog(db_url)
    with Memory.open(tenant_login, embedder=HashEmbedder(384)) as tenant:
        ds = tenant.dataset("bulk", create=False)
        with pytest.raises(ConfigurationError, match="owns the memflow schema"):
            ds.import_episodes(documents[:1])
        # Per-document writes work for this role.
        assert ds.add_episodes(documents[0]).status == "written"
    assert catalog(db_url) == before
