"""The schema stays distributable by dataset_id (docs/scale-out.md): every primary key, unique
constraint, unique index and foreign key of a distributed table leads with dataset_id, only the
declared reference tables lack it, and the docs print the calls this catalog implies. Citus itself
is not installed here: this checks the catalog facts Citus requires, not a running cluster."""

from __future__ import annotations

import psycopg

from memflow.config import libpq_url
from memflow.db import engine as dbe
from memflow.db.citus import REFERENCE_TABLES, layout, layout_sql

from ..conftest import REPO


def _layout(url: str):  # type: ignore[no-untyped-def]
    engine = dbe.make_engine(url, pool_size=1)
    try:
        with engine.begin() as conn:
            return layout(conn)
    finally:
        engine.dispose()


def test_every_key_of_the_migrated_schema_leads_with_dataset_id(db_url: str) -> None:
    lay = _layout(db_url)
    assert lay.violations == ()
    assert set(lay.reference) == set(REFERENCE_TABLES)
    assert {"node", "edge", "document", "chunk", "episode_summary"} <= set(lay.distributed)


def test_the_scale_out_guide_prints_the_calls_of_this_schema(db_url: str) -> None:
    guide = (REPO / "docs" / "scale-out.md").read_text(encoding="utf-8")
    sql = layout_sql(_layout(db_url))
    assert sql in guide, (
        "docs/scale-out.md is out of date: paste this into its layout block:\n" + sql
    )
    # Parents first: a table is distributed after every table its foreign keys reference.
    order = [line.split("'")[1] for line in sql.splitlines()]
    assert order.index("memflow.document") < order.index("memflow.chunk")
    assert order.index("memflow.node") < order.index("memflow.edge")


def test_a_key_not_led_by_dataset_id_is_named(db_url: str) -> None:
    with psycopg.connect(libpq_url(db_url), autocommit=True) as conn:
        conn.execute("ALTER TABLE memflow.document ADD CONSTRAINT doc_source_key UNIQUE (source)")
        conn.execute(
            "CREATE TABLE memflow.note (id uuid PRIMARY KEY, "
            "node_dataset uuid, node_id uuid, FOREIGN KEY (node_dataset, node_id) "
            "REFERENCES memflow.node (dataset_id, id))"
        )
        conn.execute(
            "ALTER TABLE memflow.dataset ADD COLUMN first_doc uuid, ADD CONSTRAINT ds_doc_fk "
            "FOREIGN KEY (id, first_doc) REFERENCES memflow.document (dataset_id, id)"
        )
    problems = "\n".join(_layout(db_url).violations)
    assert "unique constraint doc_source_key of document starts with source" in problems
    assert "table note has no dataset_id column" in problems
    assert "foreign key note_node_dataset_node_id_fkey of note does not join on" in problems
    assert "reference table dataset points at distributed table document" in problems
