"""Revision 0009 on a store with memories: every writing statement of a dataset's graph adds one
to that dataset's revision (and to no other's); downgrading drops the revision and its triggers
and nothing else; upgrading again starts without a revision (nothing cached) until the next
write, and search returns the same results throughout."""

from __future__ import annotations

import json
from typing import Any

import psycopg

from memflow.config import libpq_url
from memflow.embed.hash import HashEmbedder
from memflow.memory import Memory
from tests.integration.test_memorize import CONVERSATION, MEMO

from .snapshot import store_catalog
from .test_citations_migration import _searches  # (the same searches of dataset "team")

TRIGGERS = (
    "SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
    "WHERE t.tgname LIKE '%\\_revision\\_%' AND NOT t.tgisinternal"
)


def _all(url: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(libpq_url(url)) as conn:
        return conn.execute(sql).fetchall()


def _revisions(url: str) -> dict[Any, int]:
    return dict(_all(url, "SELECT dataset_id, revision FROM memflow.graph_revision"))  # type: ignore[arg-type]


def test_writes_bump_their_datasets_revision_and_downgrade_drops_it(fresh_db: str) -> None:
    store_catalog(fresh_db, "head")
    with Memory.open(fresh_db, embedder=HashEmbedder(384)) as mem:
        team, other = mem.dataset("team"), mem.dataset("other")
        assert team.memorize([MEMO, json.dumps(CONVERSATION)]).ok
        first = _revisions(fresh_db)
        assert first[team.id] > 0 and other.id not in first
        other.add_episode({"name": "x", "summary": "a lone note about kites"})
        second = _revisions(fresh_db)
        assert second[team.id] == first[team.id] and second[other.id] > 0
        episode = other.search("kites").results[0].episode_id
        other.forget(episode_id=episode)
        assert _revisions(fresh_db)[other.id] > second[other.id]
        assert _revisions(fresh_db)[team.id] == first[team.id]
    before = _searches(fresh_db)
    nodes = _all(fresh_db, "SELECT count(*) FROM memflow.node")
    assert _all(fresh_db, TRIGGERS) == [(15,)]
    store_catalog(fresh_db, "0008")
    assert _all(fresh_db, TRIGGERS) == [(0,)]
    assert _all(fresh_db, "SELECT to_regclass('memflow.graph_revision') IS NULL") == [(True,)]
    assert _all(fresh_db, "SELECT count(*) FROM memflow.node") == nodes
    store_catalog(fresh_db, "head")
    assert _revisions(fresh_db) == {}  # no revision: nothing is cached until the next write
    assert _searches(fresh_db) == before
