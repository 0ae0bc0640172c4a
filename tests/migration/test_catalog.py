"""The frozen history: each revision creates what its release created, a released store upgraded
to head equals a fresh head store, and every downgrade undoes exactly its upgrade."""

from __future__ import annotations

import pytest

from memflow.db import engine as dbe
from memflow.db import migrate

from .catalog import (
    SNAPSHOTS,
    Catalog,
    assert_same_catalog,
    catalog,
    differences,
    load_snapshot,
    snapshot_path,
)
from .snapshot import scratch_store, store_catalog

RELEASED = "0002"  # the revision the last release shipped (main at 532fec6)
SNAPSHOTTED = sorted(p.stem for p in SNAPSHOTS.glob("*.json"))


@pytest.fixture(scope="module")
def fresh_head(template_db: str) -> Catalog:
    """The catalog of a store created at head from empty (the session's template database)."""
    eng = dbe.make_engine(template_db, pool_size=1)
    with eng.connect() as conn:
        facts = catalog(conn)
    eng.dispose()
    return facts


def test_every_revision_has_a_snapshot() -> None:
    assert migrate.revision_chain() == SNAPSHOTTED, (
        "write the snapshot of a new revision with `python -m tests.migration.snapshot --write` "
        "and review its diff"
    )


@pytest.mark.parametrize("revision", SNAPSHOTTED)
def test_fresh_store_at_revision_equals_its_snapshot(fresh_db: str, revision: str) -> None:
    assert_same_catalog(
        load_snapshot(revision),
        store_catalog(fresh_db, revision),
        f"a fresh store at {revision} vs {snapshot_path(revision).name}",
    )


def test_fresh_head_equals_the_head_snapshot(fresh_head: Catalog) -> None:
    head = migrate.head_revision()
    assert_same_catalog(load_snapshot(head), fresh_head, f"fresh head vs {head}.json")


def test_released_store_upgraded_to_head_equals_fresh_head(
    fresh_db: str, fresh_head: Catalog
) -> None:
    assert_same_catalog(
        fresh_head,
        store_catalog(fresh_db, RELEASED, "head"),
        f"a store built at {RELEASED} and upgraded to head vs a fresh head store",
    )


def test_each_downgrade_undoes_its_upgrade(pg_admin_url: str) -> None:
    """Up one revision at a time, then down and up again over each: the catalog after
    ``downgrade`` equals the one before that revision, and after ``upgrade`` the one after it."""
    chain = migrate.revision_chain()
    with scratch_store(pg_admin_url) as url:
        after = {rev: store_catalog(url, rev) for rev in chain}
        for prev, rev in reversed(list(zip([None, *chain], chain, strict=False))):
            down = store_catalog(url, prev or "base")
            if prev is not None:
                assert_same_catalog(after[prev], down, f"{rev} downgraded vs {prev}")
            else:
                _assert_only_the_version_table(down)
            assert_same_catalog(after[rev], store_catalog(url, rev), f"{rev} round trip")
            store_catalog(url, prev or "base")  # leave the store where the next step expects it


def _assert_only_the_version_table(facts: Catalog) -> None:
    """Downgraded to base: the schema holds only Alembic's table, and its comment is gone.
    (The extensions stay: they may predate memflow.)"""
    assert [r[0] for r in facts["relations"]] == ["alembic_version"]
    for section in ("views", "functions", "policies", "triggers", "store_meta"):
        assert facts[section] == [], section
    assert facts["comments"] == [["schema", "memflow", None, None]]


def test_differences_name_each_changed_fact() -> None:
    base = load_snapshot(RELEASED)
    changed = {k: [list(r) for r in v] for k, v in base.items()}
    hnsw = next(i for i, r in enumerate(changed["indexes"]) if "hnsw" in r[0])
    changed["indexes"][hnsw] = [changed["indexes"][hnsw][0].replace("m='16'", "m='32'")]
    changed["policies"] = changed["policies"][1:]
    diff = differences(base, changed)
    assert len(diff) == 3
    assert any(line.startswith("indexes: unexpected") and "m='32'" in line for line in diff)
    assert any(line.startswith("policies: missing") for line in diff)
    assert differences(base, base) == []
