"""The dump format (memflow.store.dump) and the id recipes of a renamed import
(memflow.store.rekey), without a database."""

from __future__ import annotations

import json
import uuid
from types import SimpleNamespace
from typing import Any

import pytest

from memflow.db.schema import build_metadata
from memflow.drafts import EpisodeDraft
from memflow.errors import InvalidInput
from memflow.ids import text_hash
from memflow.store.dump import (
    FORMAT_VERSION,
    TABLE_MODELS,
    TABLE_RECORDS,
    DumpReader,
    check_record,
    parse_header,
)
from memflow.store.plan import plan_drafts
from memflow.store.rekey import child, derive, edge, procedure, root

HEADER = {
    "type": "header",
    "format": "memflow-dump",
    "format_version": FORMAT_VERSION,
    "memflow_version": "0.1.0",
    "exported_at": "2024-07-01T00:00:00+00:00",
    "dataset": {"name": "notes", "id": "6f1c9a52-4a57-4c1e-9a0b-6d656d666c6f"},
    "embedder": {"name": "hash-3", "dim": 3},
    "vectors": True,
}


def _header(**over: Any) -> Any:
    return parse_header(1, json.dumps({**HEADER, **over}))


def test_each_table_record_holds_every_column_but_the_dataset_id() -> None:
    tables = build_metadata(3).tables
    for name in TABLE_RECORDS:
        columns = {c.name for c in tables[f"memflow.{name}"].columns} - {"dataset_id", "tsv"}
        assert set(TABLE_MODELS[name].model_fields) == columns | {"type"}, name


def test_the_header_is_checked_first() -> None:
    assert _header().embedder.dim == 3
    with pytest.raises(InvalidInput, match="line 1: not a memflow dump"):
        parse_header(1, "{not json")
    with pytest.raises(InvalidInput, match="not a memflow dump"):
        parse_header(1, json.dumps({"type": "header", "format": "other"}))
    with pytest.raises(InvalidInput, match="format version 9, this memflow reads version 1"):
        _header(format_version=9)
    with pytest.raises(InvalidInput, match=r"line 1: the header's 'embedder\.dim'"):
        _header(embedder={"name": "x", "dim": 0})
    with pytest.raises(InvalidInput, match="the dump is empty"):
        DumpReader(iter(["", "  "])).header()


def test_records_are_checked_line_by_line() -> None:
    head = _header()
    ok = {"type": "node_source", "node_id": str(uuid.uuid4()), "document_id": str(uuid.uuid4())}
    assert check_record(7, json.dumps(ok), head).type == "node_source"
    cases = {
        '{"type": "nodes"}': "line 7: unknown record type 'nodes'",
        '{"id": 1}': "line 7: a record without its 'type'",
        "[1, 2]": "line 7: ",
        json.dumps({**ok, "extra": 1}): "node_source record has an unknown field 'extra'",
        json.dumps({"type": "node_source", "node_id": "x"}): "field 'node_id'",
        json.dumps({"type": "node", "id": str(uuid.uuid4()), "kind": "Gadget"}): "field 'kind'",
    }
    for line, message in cases.items():
        with pytest.raises(InvalidInput, match=message):
            check_record(7, line, head)


def test_vector_records_match_the_header_and_their_text() -> None:
    def vector(**over: Any) -> str:
        rec = {"type": "vector", "collection": "Edge_text", "text": "a -> b"}
        rec |= {"text_hash": text_hash("a -> b").hex(), "embedding": [0.1, 0.2, 0.3]}
        return json.dumps({**rec, **over})

    head = _header()
    assert check_record(3, vector(), head).type == "vector"
    for line, message in {
        vector(embedding=[0.1]): "an embedding of 1 dimensions; the header says 3",
        vector(text="changed"): "is not the hash of its text",
        vector(node_id=str(uuid.uuid4())): "has no node_id",
        vector(collection="Entity_name"): "needs its node_id",
    }.items():
        with pytest.raises(InvalidInput, match=f"line 3: .*{message}"):
            check_record(3, line, head)
    with pytest.raises(InvalidInput, match="no embedding, but the header says"):
        check_record(3, vector(embedding=None), head)
    with pytest.raises(InvalidInput, match="an embedding, but the header says the dump has none"):
        check_record(3, vector(), _header(vectors=False))


def test_the_reader_numbers_lines_and_counts_bytes() -> None:
    reader = DumpReader(iter([b'{"a": 1}\n', b"\n", "é\n".encode()]))
    assert list(reader.records()) == [(1, '{"a": 1}'), (3, "é")]
    assert reader.bytes == 9 + 1 + 3 and reader.last == 3
    with pytest.raises(InvalidInput, match="line 1: not UTF-8"):
        list(DumpReader(iter([b"\xff\n"])).records())


def _ns(**kw: Any) -> SimpleNamespace:
    return SimpleNamespace(**kw)


def test_the_recipes_give_the_ids_the_new_dataset_derives() -> None:
    """Plan the same drafts in two datasets; re-deriving the first plan's ids with the recipes,
    parents first as the import does, gives the second plan's ids, row for row."""
    drafts = [
        EpisodeDraft.model_validate(
            {
                "name": "Worker restart agreed",
                "summary": "How the billing worker is restarted.",
                "facets": [
                    {
                        "search_text": "Restarting the worker",
                        "points": [{"search_text": "It restarts after a minute."}],
                        "entities": [{"name": "Clayworks Supply", "types": ["supplier"]}],
                    }
                ],
                "procedures": [
                    {
                        "name": "Restart the worker",
                        "steps": [{"text": "Stop it."}, {"text": "Start it."}],
                        "context": [
                            {"aspect": "when", "text": "The queue backs up."},
                            {"aspect": "why", "text": "A consumer holds the lock."},
                        ],
                    }
                ],
            }
        )
    ]
    a, b = uuid.uuid4(), uuid.uuid4()
    old, new = plan_drafts(a, drafts), plan_drafts(b, drafts)
    nodes, edges = list(old.nodes.values()), list(old.edges.values())
    moved: dict[uuid.UUID, uuid.UUID] = {}

    def under(n: Any, rel: str) -> tuple[list[uuid.UUID], list[uuid.UUID]]:
        parents = [e.src for e in edges if e.dst == n.id and e.relationship == rel]
        return parents, [moved.get(p, p) for p in parents]

    def kids(n: Any, rel: str) -> list[Any]:
        return [old.nodes[e.dst] for e in edges if e.src == n.id and e.relationship == rel]

    for n in nodes:
        if n.kind in ("Episode", "Entity", "EntityType"):
            row = _ns(id=n.id, kind=n.kind, name=n.name, summary=n.summary,
                      canonical_name=n.canonical_name, base_text=None)  # fmt: skip
            moved[n.id] = derive(row, root, a, b)  # type: ignore[assignment]
        elif n.kind == "Procedure":
            steps = sorted(kids(n, "has_key_point"), key=lambda s: s.props["position"])
            context = [f"{c.props['aspect']}:{c.search_text}" for c in kids(n, "has_context_point")]
            row = _ns(id=n.id, name=n.name, summary=n.summary, canonical_name=n.canonical_name,
                      steps=[s.search_text for s in steps], context=context[::-1])  # fmt: skip
            moved[n.id] = derive(row, procedure, a, b)  # type: ignore[assignment]
    for kind, rel in (
        ("Facet", "has_facet"),
        ("FacetPoint", "has_point"),
        ("ProcedureStepPoint", "has_key_point"),
        ("ProcedureContextPoint", "has_context_point"),
    ):
        for n in (n for n in nodes if n.kind == kind):
            parents, parents_new = under(n, rel)
            row = _ns(id=n.id, search_text=n.search_text, position=n.props.get("position"),
                      aspect=n.props.get("aspect"), parents=parents, parents_new=parents_new)  # fmt: skip
            moved[n.id] = derive(row, child(kind), a, b)  # type: ignore[assignment]
    for e in edges:
        row = _ns(id=e.id, src=e.src, relationship=e.relationship, dst=e.dst,
                  src_new=moved[e.src], dst_new=moved[e.dst])  # fmt: skip
        moved[e.id] = derive(row, edge, a, b)  # type: ignore[assignment]
    assert [moved[n.id] for n in nodes] == list(new.nodes)
    assert [moved[e.id] for e in edges] == list(new.edges)
    assert len({n.kind for n in nodes}) == 8  # every kind of node took part
    # An id no recipe reproduces (a random one) is left alone.
    stray = _ns(id=uuid.uuid4(), kind="Entity", name="x", summary=None, canonical_name="x",
                base_text=None)  # fmt: skip
    assert derive(stray, root, a, b) is None
