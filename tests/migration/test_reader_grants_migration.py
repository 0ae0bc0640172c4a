"""Revision 0007 on a store with a reader granted before it: the reader who could read every
dataset at 0006 (SET memflow.dataset_id) reads only its own after the upgrade, and holds SELECT on
the graph only; downgrading gives back what 0006's grant_reader gave."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from memflow.config import libpq_url
from memflow.embed.hash import HashEmbedder
from memflow.memory import Memory
from memflow.store.datasets import dataset_uuid

from ..support.roles import login_role
from .snapshot import store_catalog


@pytest.fixture
def reader(fresh_db: str) -> Iterator[tuple[str, str]]:
    with login_role(fresh_db, "mf_old_reader") as found:
        yield found


def _nodes_of_b(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "SELECT set_config('memflow.dataset_id', %s, false)", (str(dataset_uuid("b")),)
        )
        row = conn.execute("SELECT count(*) FROM memflow.node").fetchone()
    assert row is not None
    return int(row[0])


def _privileges(url: str) -> set[tuple[str, str]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT table_name, privilege_type FROM information_schema.role_table_grants "
            "WHERE table_schema = 'memflow' AND grantee = current_user"
        ).fetchall()
    return {(r[0], r[1]) for r in rows}


def test_a_reader_granted_at_0006_is_bound_by_its_grant_after_the_upgrade(
    fresh_db: str, reader: tuple[str, str]
) -> None:
    role, url = reader
    store_catalog(fresh_db, "head")
    with Memory.open(fresh_db, embedder=HashEmbedder(384)) as mem:
        for name in ("a", "b"):
            mem.dataset(name).add_episode({"name": f"in {name}", "summary": f"only {name}"})
    store_catalog(fresh_db, "0006")
    with psycopg.connect(libpq_url(fresh_db), autocommit=True) as conn:
        conn.execute("SELECT memflow.grant_reader('a', %s)", (role,))
    assert _nodes_of_b(url) > 0  # the hole revision 0007 closes
    old = _privileges(url)
    assert ("dataset_reader", "SELECT") in old

    store_catalog(fresh_db, "head")
    assert _nodes_of_b(url) == 0
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT memflow.use_dataset('a')")
        names = conn.execute("SELECT name FROM memflow.episodes").fetchall()
        datasets = conn.execute("SELECT name FROM memflow.dataset").fetchall()
    assert names == [("in a",)] and datasets == [("a",)]
    now = _privileges(url)
    assert {p for _, p in now} == {"SELECT"}
    # (and what later revisions add for readers: revision 0009's graph revision)
    assert {t for t, _ in now} == {t for t, _ in old} - {
        "dataset_reader",
        "store_meta",
        "alembic_version",
    } | {"graph_revision"}

    store_catalog(fresh_db, "0006")
    assert _privileges(url) >= {(t, "SELECT") for t, _ in old}
