"""Stored citations (revision 0008): every writer keeps each Episode's, Facet's and FacetPoint's
``citations`` and ``speaker`` equal to what its node_chunk rows say, so search can read them
instead of joining the provenance per query."""

from __future__ import annotations

import io
import json
from typing import Any

from memflow import Memory
from tests.integration.test_memorize import CONVERSATION, MEMO, rows
from tests.integration.test_routing import EAGER, UPDATE

# What node_citations_refresh (sql/write.sql) stores, computed from the provenance rows.
DERIVED = """
SELECT n.id, n.kind,
       (SELECT jsonb_agg(jsonb_build_array(c.key, c.document_id, d.source, c.ts)
                         ORDER BY c.idx, c.id)
          FROM memflow.node_chunk nc
          JOIN memflow.chunk c ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id
          JOIN memflow.document d ON d.dataset_id = c.dataset_id AND d.id = c.document_id
         WHERE nc.dataset_id = n.dataset_id AND nc.node_id = n.id) AS citations,
       (SELECT c.speaker
          FROM memflow.node_chunk nc
          JOIN memflow.chunk c ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id
         WHERE nc.dataset_id = n.dataset_id AND nc.node_id = n.id
         ORDER BY c.idx, c.id LIMIT 1) AS speaker
FROM memflow.node n ORDER BY n.id
"""
STORED = "SELECT id, kind, citations, speaker FROM memflow.node ORDER BY id"


def assert_stored_as_derived(url: str) -> list[tuple[Any, ...]]:
    """Every cited Episode, Facet and FacetPoint stores its provenance; Entities store none."""
    stored = rows(url, STORED)
    derived = [
        (i, kind, None, None) if kind not in ("Episode", "Facet", "FacetPoint") else (i, kind, c, s)
        for i, kind, c, s in rows(url, DERIVED)
    ]
    assert stored == derived
    return stored


def test_memorize_stores_every_node_s_citations(mem: Memory, db_url: str) -> None:
    ds = mem.dataset("notes")
    assert ds.memorize([MEMO, json.dumps(CONVERSATION)]).ok
    stored = assert_stored_as_derived(db_url)
    points = [r for r in stored if r[1] == "FacetPoint"]
    assert points and all(r[2] for r in points)
    assert any(r[3] for r in points)  # the conversation's points know their speaker


def test_a_merge_adds_the_second_document_s_citations(mem: Memory, db_url: str) -> None:
    ds = mem.dataset("notes")
    a = ds.memorize(MEMO).documents[0]
    b = ds.memorize(UPDATE, routing=EAGER).documents[0]
    assert b.merged == 1
    stored = assert_stored_as_derived(db_url)
    [episode] = [r for r in stored if r[1] == "Episode"]
    assert {c[1] for c in episode[2]} == {str(a.id), str(b.id)}


def test_forgetting_a_document_drops_its_chunks_from_stored_citations(
    mem: Memory, db_url: str
) -> None:
    ds = mem.dataset("notes")
    a = ds.memorize(MEMO).documents[0]
    b = ds.memorize(UPDATE, routing=EAGER).documents[0]
    ds.forget(document_id=a.id)
    stored = assert_stored_as_derived(db_url)
    [episode] = [r for r in stored if r[1] == "Episode"]
    assert episode[2] and {c[1] for c in episode[2]} == {str(b.id)}
    hits = ds.search("orders database migration", display="highly_related").results
    assert hits and all(c.document_id == b.id for h in hits for c in h.citations)


def test_import_stores_the_citations_a_dump_leaves_out(mem: Memory, db_url: str) -> None:
    ds = mem.dataset("notes")
    assert ds.memorize([MEMO, json.dumps(CONVERSATION)]).ok
    buf = io.StringIO()
    ds.export(buf)
    dump = buf.getvalue()
    assert '"citations"' not in dump  # derived state: not part of the dump format
    mem.import_dump(io.StringIO(dump), dataset="copy")
    stored = assert_stored_as_derived(db_url)
    copied = rows(
        db_url,
        "SELECT count(*) FROM memflow.node n JOIN memflow.dataset d ON d.id = n.dataset_id "
        "WHERE d.name = 'copy' AND n.kind = 'FacetPoint' AND n.citations IS NOT NULL",
    )
    assert copied[0][0] == sum(1 for r in stored if r[1] == "FacetPoint") // 2
