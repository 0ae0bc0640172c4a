"""forget: a document or an episode, leaving every table exactly as it should be."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest

from memflow import InvalidInput, Memory, NotFound
from memflow.ingest.route import RouteSettings
from tests.conftest import TEMPLATE, _admin, _with_db
from tests.integration.test_memorize import CONVERSATION, MEMO, rows
from tests.integration.test_routing import EAGER, UPDATE
from tests.integration.test_storage import snapshot

# Shares the entities Priya Raman and PostgreSQL with MEMO, and nothing else.
OTHER = """# Search index rebuild

## Owner
Priya Raman rebuilds the product search index on PostgreSQL with pgvector in June 2024.
"""


@pytest.fixture
def db_url_2(pg_admin_url: str, template_db: str) -> Iterator[str]:
    """A second migrated database, to compare against."""
    name = f"mf_{uuid.uuid4().hex[:12]}"
    with _admin(pg_admin_url) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
    try:
        yield _with_db(pg_admin_url, name)
    finally:
        with _admin(pg_admin_url) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def node_texts(url: str) -> list[tuple[str, str, str | None, str | None]]:
    return sorted(
        rows(url, "SELECT kind, name, summary, anchor_text FROM memflow.node"),
        key=lambda r: tuple(str(v) for v in r),
    )


def test_forgetting_a_document_restores_every_table_exactly(mem: Memory, db_url: str) -> None:
    ds = mem.dataset("notes")
    ds.memorize(MEMO)
    before = snapshot(db_url)
    b = ds.memorize(OTHER).documents[0]
    shared = rows(
        db_url,
        "SELECT n.name FROM memflow.node n JOIN memflow.node_source s ON s.node_id = n.id "
        "WHERE n.kind = 'Entity' GROUP BY n.name HAVING count(*) = 2 ORDER BY n.name",
    )
    assert ("Priya Raman",) in shared and ("PostgreSQL",) in shared
    report = ds.forget(document_id=b.id)
    assert snapshot(db_url) == before
    assert report.document_ids == [b.id] and report.documents == 1
    assert (report.episodes, report.facets, report.facet_points) == (1, 1, 1)
    assert report.chunks == 1 and report.edges == b.edges
    assert 1 <= report.entities < b.entities  # the shared entities stay
    assert report.restored == 0


def test_forgetting_a_merged_document_restores_the_episode_exactly(
    mem: Memory, db_url: str
) -> None:
    ds = mem.dataset("notes")
    ds.memorize(MEMO)
    before = snapshot(db_url)
    b = ds.memorize(UPDATE, routing=EAGER).documents[0]
    assert b.merged == 1
    assert snapshot(db_url) != before
    report = ds.forget(document_id=str(b.id))
    assert report.restored == 2  # the episode and the facet that absorbed text
    assert report.facets == 1  # the new "Plan" facet
    assert snapshot(db_url) == before


def test_forgetting_the_middle_of_two_merges_rederives_from_what_remains(
    mem: Memory, db_url: str, db_url_2: str
) -> None:
    third = UPDATE.replace("2 April 2024", "9 April 2024").replace("## Plan", "## Next steps")
    ds = mem.dataset("notes")
    ds.memorize(MEMO)
    b = ds.memorize(UPDATE, routing=EAGER).documents[0]
    ds.memorize(third, routing=EAGER)
    ds.forget(document_id=b.id)
    # The same texts as if only the first and the third document had been memorised.
    with Memory.open(db_url_2, embedder=mem.embedder) as other:
        ods = other.dataset("notes")
        ods.memorize(MEMO)
        assert ods.memorize(third, routing=EAGER).documents[0].merged == 1
    assert node_texts(db_url) == node_texts(db_url_2)
    # (Edge texts are not compared: an edge both merges planned keeps the first writer's text,
    # like every content-addressed row.)
    tables = ("episode_summary", "facet_anchor_text", "facet_search_text", "entity_name")
    for table in tables:
        sql = f"SELECT text FROM memflow.{table} ORDER BY text"
        assert rows(db_url, sql) == rows(db_url_2, sql), table


def test_forgetting_the_original_keeps_what_the_merge_brought(mem: Memory, db_url: str) -> None:
    ds = mem.dataset("notes")
    a = ds.memorize(MEMO).documents[0]
    b = ds.memorize(UPDATE, routing=EAGER).documents[0]
    ds.forget(document_id=a.id)
    facets = dict(
        rows(db_url, "SELECT search_text, anchor_text FROM memflow.node WHERE kind = 'Facet'")
    )
    assert set(facets) == {"Decision", "Plan"}  # "Risks" came only from the forgotten memo
    assert facets["Decision"].startswith("The platform team confirmed PostgreSQL 16 again")
    assert "12 March" not in facets["Decision"]
    [(summary,)] = rows(db_url, "SELECT summary FROM memflow.node WHERE kind = 'Episode'")
    assert "【Risks】" not in summary and summary.startswith("【Decision】The platform team")
    assert rows(db_url, "SELECT text FROM memflow.episode_summary") == [(summary,)]
    # Forgetting the other one too empties the dataset (the dataset row stays).
    ds.forget(document_id=b.id)
    assert all(not v for k, v in snapshot(db_url).items() if k != "dataset")


def test_an_entity_stays_while_any_document_supports_it(mem: Memory, db_url: str) -> None:
    ds = mem.dataset("notes")
    a = ds.memorize(MEMO).documents[0]
    b = ds.memorize(OTHER).documents[0]
    priya = "SELECT count(*) FROM memflow.node WHERE kind = 'Entity' AND name = 'Priya Raman'"
    ds.forget(document_id=a.id)
    assert rows(db_url, priya) == [(1,)]
    ds.forget(document_id=b.id)
    assert rows(db_url, priya) == [(0,)]
    assert rows(db_url, "SELECT count(*) FROM memflow.edge_text") == [(0,)]


def test_forgetting_an_episode_removes_it_with_its_facets_and_points(
    mem: Memory, db_url: str
) -> None:
    ds = mem.dataset("chat")
    doc = ds.memorize(json.dumps(CONVERSATION)).documents[0]
    first, second = doc.episode_ids
    report = ds.forget(episode_id=first)
    assert report.episode_id == first and report.episodes == 1
    assert report.facets >= 1 and report.facet_points == 3
    assert report.documents == 0  # the document still supports the other session
    kinds = dict(rows(db_url, "SELECT kind, count(*) FROM memflow.node GROUP BY kind"))
    assert kinds["Episode"] == 1 and kinds["FacetPoint"] == 2
    names = {r[0] for r in rows(db_url, "SELECT name FROM memflow.node WHERE kind = 'Entity'")}
    assert {"Ana", "Ben"} <= names  # still involved by the second session
    assert "Lisbon" not in names  # only the first session involved it
    # No edge or embedding points at a removed node; edge texts are all in use.
    assert rows(
        db_url,
        "SELECT count(*) FROM memflow.edge_text t WHERE NOT EXISTS "
        "(SELECT 1 FROM memflow.edge e WHERE e.text_hash = t.text_hash)",
    ) == [(0,)]
    last = ds.forget(episode_id=str(second))
    assert last.documents == 1 and last.document_ids == [doc.id] and last.chunks == 5
    assert all(not v for k, v in snapshot(db_url).items() if k != "dataset")
    # The document is gone, so memorizing it again recreates it.
    assert ds.memorize(json.dumps(CONVERSATION)).documents[0].status == "written"


def test_unknown_or_malformed_ids(mem: Memory) -> None:
    ds = mem.dataset("notes")
    ds.memorize(MEMO)
    with pytest.raises(NotFound):
        ds.forget(document_id=uuid.uuid4())
    with pytest.raises(NotFound):
        ds.forget(episode_id=uuid.uuid4())
    with pytest.raises(InvalidInput):
        ds.forget(document_id="not-a-uuid")
    with pytest.raises(InvalidInput):
        ds.forget()
    # An id of another dataset is not visible here.
    other = mem.dataset("other")
    doc = other.memorize(OTHER).documents[0]
    with pytest.raises(NotFound):
        ds.forget(document_id=doc.id)
    assert other.forget(document_id=doc.id).documents == 1


def test_a_merge_needs_enough_shared_entities(mem: Memory, db_url: str) -> None:
    ds = mem.dataset("notes")
    ds.memorize(MEMO)
    ds.memorize(UPDATE, routing=RouteSettings(min_similarity=0.0, min_shared_entities=50))
    assert rows(db_url, "SELECT count(*) FROM memflow.node WHERE kind = 'Episode'") == [(2,)]
