"""Export and import of a dataset (issue 30, docs/export.md) on real PostgreSQL: a dump read into a
fresh store holds every row the dataset held and answers every search the same; without vectors
it holds the same episodes; under another name its ids are the ones that name derives; a bad or
cut dump names its line and leaves nothing behind."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from pgvector.psycopg import register_vector

from memflow import (
    AsyncMemory,
    EmbedderMismatch,
    EmbeddingDimensionMismatch,
    InvalidInput,
    Memory,
    NotFound,
)
from memflow.config import libpq_url
from memflow.embed.hash import HashEmbedder
from memflow.store.dump import FORMAT_VERSION
from tests.conftest import TEMPLATE, _scratch_database
from tests.integration.test_memorize import MEMO
from tests.integration.test_routing import EAGER, UPDATE
from tests.integration.test_temporal import SESSIONS, _session

NOW = datetime(2024, 7, 1, tzinfo=UTC)
# Every table a dataset's rows live in, with the columns that identify a row.
DATASET_TABLES = {
    "document": "id",
    "chunk": "id",
    "node": "id",
    "edge": "id",
    "node_source": "node_id, document_id",
    "edge_source": "edge_id, document_id",
    "node_chunk": "node_id, chunk_id",
    "change_log": "id",
    "episode_summary": "node_id",
    "facet_search_text": "node_id",
    "facet_anchor_text": "node_id",
    "facetpoint_search_text": "node_id",
    "entity_name": "node_id",
    "edge_text": "text_hash",
    "procedure_summary": "node_id",
    "procedure_step_text": "node_id",
    "procedure_context_text": "node_id",
    "entitytype_name": "node_id",
}
NOTE_V1 = "# On-call\n\nThe pager rotation is handed over every 7 days. Lena Park runs it.\n"
NOTE_V2 = "# On-call\n\nThe pager rotation is handed over every 14 days. Lena Park runs it.\n"


def _draft(wait: str) -> dict[str, Any]:
    steps = [{"text": "Stop the consumer."}, {"text": f"Wait {wait}."}, {"text": "Start it."}]
    return {
        "name": "Worker restart agreed",
        "summary": f"The team agreed how to restart the worker ({wait}).",
        "facets": [
            {
                "search_text": "Restarting the billing worker",
                "points": [{"search_text": f"The billing worker restarts after {wait}."}],
                "entities": [{"name": "Clayworks Supply", "types": ["supplier"]}],
            }
        ],
        "procedures": [
            {
                "name": "Restart the worker",
                "steps": steps,
                "context": [
                    {"aspect": "when", "text": "The queue backs up."},
                    {"aspect": "why", "text": "A stuck consumer holds the lock."},
                ],
            }
        ],
    }


def fill(mem: Memory, name: str, tmp: Path, seed: list[dict[str, Any]]) -> None:
    """A dataset with everything one can hold: scoped drafts with metadata, a chat whose fact was
    replaced (supersession), an edited note (document versions), a routed merge (merge records),
    procedures in two versions, entity types."""
    ds = mem.dataset(name)
    ds.add_episodes(seed, scope={"user": "u1"}, metadata={"team": "core", "year": 2024})
    for started, turns in SESSIONS:
        ds.memorize(_session(started, turns), scope={"user": "u2"})
    note = tmp / "oncall.md"
    note.write_text(NOTE_V1, "utf-8")
    ds.memorize(note, reference_time=datetime(2024, 3, 1, tzinfo=UTC))
    note.write_text(NOTE_V2, "utf-8")
    ds.memorize(note, reference_time=datetime(2024, 6, 1, tzinfo=UTC))
    ds.memorize(MEMO, metadata={"team": "platform"})
    assert ds.memorize(UPDATE, routing=EAGER, metadata={"team": "platform"}).documents[0].merged
    ds.add_episode(_draft("one minute"))
    ds.add_episode(_draft("five minutes"))


@pytest.fixture
def other_url(pg_admin_url: str, template_db: str) -> Iterator[str]:
    """A second store (its own database)."""
    with _scratch_database(pg_admin_url, TEMPLATE) as url:
        yield url


@pytest.fixture
def other(other_url: str) -> Iterator[Memory]:
    with Memory.open(other_url, embedder=HashEmbedder(384)) as m:
        yield m


@pytest.fixture
def full(mem: Memory, tmp_path: Path, seed_drafts: list[dict[str, Any]]) -> Memory:
    fill(mem, "work", tmp_path, seed_drafts)
    ds = mem.dataset("work")
    resp = ds.search("Where do I live now?", display="highly_related", now=NOW)
    unit = next(u for u in resp.context_units if u.node_id and u.invalid_at is None)
    ds.correct(unit.node_id, "I live in Portland now.", actor="tester")  # type: ignore[arg-type]
    return mem


def rows_of(url: str, dataset: str) -> dict[str, list[tuple[str, ...]]]:
    """Every row of ``dataset`` in every table, all columns but dataset_id, as text."""
    out: dict[str, list[tuple[str, ...]]] = {}
    with psycopg.connect(libpq_url(url)) as conn:  # the superuser: no row-level security
        (ds,) = conn.execute(
            "SELECT id FROM memflow.dataset WHERE name = %s", (dataset,)
        ).fetchone()  # type: ignore[misc]
        for table in DATASET_TABLES:
            cols = [
                r[0]
                for r in conn.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_schema = "
                    "'memflow' AND table_name = %s AND column_name <> 'dataset_id' "
                    "ORDER BY ordinal_position",
                    (table,),
                )
            ]
            found = conn.execute(
                f"SELECT {', '.join(cols)} FROM memflow.{table} WHERE dataset_id = %s", (ds,)
            ).fetchall()
            out[table] = sorted(tuple(str(v) for v in r) for r in found)
    return out


def texts_of(url: str, dataset: str) -> list[tuple[str, ...]]:
    """The texts of every Episode and Facet of ``dataset`` (summaries, anchors), ids left out."""
    with psycopg.connect(libpq_url(url)) as conn:
        got = conn.execute(
            "SELECT n.kind, n.name, coalesce(n.search_text, ''), coalesce(n.summary, '') || "
            "coalesce(n.anchor_text, '') FROM memflow.node n JOIN memflow.dataset d "
            "ON d.id = n.dataset_id WHERE d.name = %s AND n.kind IN ('Episode', 'Facet')",
            (dataset,),
        ).fetchall()
    return sorted(tuple(map(str, r)) for r in got)


def dump_of(ds: Any, **kw: Any) -> str:
    buf = io.StringIO()
    ds.export(buf, **kw)
    return buf.getvalue()


def searches(ds: Any) -> list[dict[str, Any]]:
    """Many searches of the dataset: every mode and display, scopes, metadata filters, as-of."""
    out = []
    asks: list[tuple[str, dict[str, Any]]] = [
        ("Where do I live now?", {}),
        ("Where do I live now?", {"display": "highly_related"}),
        ("Where do I live now?", {"display": "detail"}),
        ("Where do I live?", {"as_of": datetime(2023, 2, 1, tzinfo=UTC)}),
        ("Where do I live?", {"include_history": True, "display": "highly_related"}),
        ("how often is the pager handed over?", {"display": "highly_related"}),
        ("which database did the platform team choose?", {"where": {"team": "platform"}}),
        ("which database did the platform team choose?", {"mode": "vector"}),
        ("which database did the platform team choose?", {"mode": "lexical"}),
        ("streaming API", {"scope": {"user": "u1"}, "display": "highly_related"}),
        ("streaming API", {"where": {"year": 2024}}),
        ("How do we restart the worker?", {"mode": "procedural"}),
        ("How do we restart the worker?", {}),
        ("Clayworks supplier", {"display": "detail"}),
    ]
    for query, kw in asks:
        resp = ds.search(query, now=NOW, **kw).model_dump(mode="json")
        resp.pop("timings_ms")
        out.append(resp)
    return out


def test_a_round_trip_with_vectors_holds_every_row_and_answers_the_same(
    full: Memory, other: Memory, db_url: str, other_url: str
) -> None:
    src = full.dataset("work")
    text = dump_of(src, with_vectors=True)
    report = other.import_dump(io.StringIO(text), dataset="work")
    assert report.vectors == "imported" and report.embedded == 0 and report.rekeyed == 0
    assert report.counts["node"] > 40 and report.counts["change_log"] > 0
    before, after = rows_of(db_url, "work"), rows_of(other_url, "work")
    for table in DATASET_TABLES:
        assert after[table] == before[table], table
    assert all(before[t] for t in DATASET_TABLES), [t for t in DATASET_TABLES if not before[t]]
    dst = other.dataset("work")
    assert searches(dst) == searches(src)
    # A replaced fact stays replaced, with its whole history.
    resp = src.search("Where do I live now?", display="highly_related", now=NOW)
    for unit in resp.context_units:
        if unit.node_id and unit.invalid_at is not None:
            assert dst.history(unit.node_id) == src.history(unit.node_id)
    assert dst.documents() == src.documents()
    assert dst.procedures(all_versions=True) == src.procedures(all_versions=True)
    assert dst.entities_of_type("supplier") == src.entities_of_type("supplier")
    # Exported again, it is the same dump: the same lines (but the header's time), the order of
    # rows within a table aside (storage order is kept where PostgreSQL keeps it).
    again = dump_of(dst, with_vectors=True)
    assert sorted(again.splitlines()[1:]) == sorted(text.splitlines()[1:])


def test_without_vectors_the_texts_are_embedded_and_the_episodes_are_the_same(
    full: Memory, other: Memory, other_url: str, db_url: str
) -> None:
    src = full.dataset("work")
    text = dump_of(src)
    assert '"embedding"' not in text and '"vectors": false' in text.splitlines()[0]
    report = other.import_dump(io.StringIO(text), dataset="work")
    assert report.vectors == "embedded" and report.embedded > 0
    dst = other.dataset("work")
    assert dst.episodes() == src.episodes()
    for ep in src.episodes():
        assert dst.episode_tree(ep["id"]) == src.episode_tree(ep["id"])
    assert dst.stats() == src.stats()
    before, after = rows_of(db_url, "work"), rows_of(other_url, "work")
    for table in ("document", "chunk", "edge", "node_source", "edge_source", "node_chunk"):
        assert after[table] == before[table], table
    # Each vector row is there, embedded by the target's embedder from its own text.
    emb = HashEmbedder(384)
    with psycopg.connect(libpq_url(other_url)) as conn:
        register_vector(conn)
        got = conn.execute("SELECT text, embedding FROM memflow.facetpoint_search_text").fetchall()
    assert len(got) == len(before["facetpoint_search_text"])
    for t, vec in got:
        assert np.allclose(vec.to_numpy(), emb.embed_passages([t])[0], atol=1e-6)
    assert dst.search("Where do I live now?", now=NOW).results[0].name == (
        src.search("Where do I live now?", now=NOW).results[0].name
    )


def test_under_another_name_the_ids_are_those_the_new_name_derives(
    mem: Memory, other: Memory, pg_admin_url: str, template_db: str, tmp_path: Path,
    seed_drafts: list[dict[str, Any]], other_url: str, db_url: str,
) -> None:  # fmt: skip
    fill(mem, "a", tmp_path, seed_drafts)
    report = other.import_dump(
        io.StringIO(dump_of(mem.dataset("a"), with_vectors=True)), dataset="b"
    )
    assert report.rekeyed > 100
    with _scratch_database(pg_admin_url, TEMPLATE) as third_url:
        with Memory.open(third_url, embedder=HashEmbedder(384)) as third:
            fill(third, "b", tmp_path, seed_drafts)  # written directly under the new name
        direct, imported = rows_of(third_url, "b"), rows_of(other_url, "b")
    for table in ("document", "chunk", "node", "edge"):
        assert [r[0] for r in imported[table]] == [r[0] for r in direct[table]], table
    ds = other.dataset("b")
    # A merged episode's record names the documents by their new ids: forgetting the first
    # document re-derives the episode from the update in both datasets alike.
    for one in (mem.dataset("a"), ds):
        memo = next(d for d in one.documents() if d.title == "Orders database migration")
        assert one.forget(document_id=memo.id).documents == 1
    texts = [texts_of(url, name) for url, name in ((db_url, "a"), (other_url, "b"))]
    assert texts[0] == texts[1] and any("confirmed PostgreSQL 16" in t[3] for t in texts[0])
    # Its next writes find what is stored: the same inputs are skipped, an entity is shared.
    note = tmp_path / "oncall.md"
    june = datetime(2024, 6, 1, tzinfo=UTC)
    assert ds.memorize(note, reference_time=june).documents[0].status == "skipped"
    assert ds.add_episode(_draft("five minutes")).status == "skipped"
    again = ds.memorize("Lena Park hands the pager to Clayworks Supply on Fridays.")
    assert again.documents[0].status == "written"
    with psycopg.connect(libpq_url(other_url)) as conn:
        (n,) = conn.execute(
            "SELECT count(*) FROM memflow.node WHERE canonical_name = 'lena park'"
        ).fetchone()  # type: ignore[misc]
    assert n == 1


def test_a_dump_is_validated_and_a_failed_import_leaves_nothing(
    full: Memory, other: Memory
) -> None:
    lines = dump_of(full.dataset("work"), with_vectors=True).splitlines()

    def refused(text: str, match: str, error: type[Exception] = InvalidInput) -> None:
        with pytest.raises(error, match=match):
            other.import_dump(io.StringIO(text), dataset="copy")
        assert "copy" not in {d.name for d in other.datasets()}

    refused("", "empty")
    refused("hello\n", "line 1: not a memflow dump")
    header = json.loads(lines[0])
    newer = json.dumps({**header, "format_version": FORMAT_VERSION + 1})
    refused("\n".join([newer, *lines[1:]]), "format version 2")
    refused("\n".join(lines[:-1]), f"ends at line {len(lines) - 1} without its end record")
    refused("\n".join(lines[:40] + lines[41:]), "the end record counts")
    bad = json.loads(lines[5])
    bad["kind" if bad["type"] == "node" else "nonsense"] = "Gadget"
    refused("\n".join([*lines[:5], json.dumps(bad), *lines[6:]]), "line 6: ")
    # A reference to a record the dump does not hold, found after everything was staged.
    edge_at = next(i for i, line in enumerate(lines) if '"type": "edge"' in line)
    edge = json.loads(lines[edge_at])
    edge["dst"] = "00000000-0000-0000-0000-000000000001"
    broken = [*lines[:edge_at], json.dumps(edge), *lines[edge_at + 1 :]]
    refused("\n".join(broken), f"line {edge_at + 1}: edge .* ends at node .* which the dump")
    twice = [*lines[: edge_at + 1], lines[edge_at], *lines[edge_at + 1 :]]
    end = json.loads(twice[-1])
    end["counts"]["edge"] += 1
    refused("\n".join([*twice[:-1], json.dumps(end)]), f"line {edge_at + 2}: repeats edge")
    # Values only the database can refuse: a number out of its column's range (named by the
    # lines being staged), a value a constraint forbids (found when the tables are written).
    chunk_at = next(i for i, line in enumerate(lines) if '"type": "chunk"' in line)
    chunk = json.loads(lines[chunk_at])
    chunk["idx"] = 2**40
    refused("\n".join([*lines[:chunk_at], json.dumps(chunk), *lines[chunk_at + 1 :]]),
            r"lines \d+-\d+: the database refused a chunk record .*out of range")  # fmt: skip
    change_at = next(i for i, line in enumerate(lines) if '"type": "change_log"' in line)
    change = json.loads(lines[change_at]) | {"reason": "whim"}
    refused("\n".join([*lines[:change_at], json.dumps(change), *lines[change_at + 1 :]]),
            "the dump holds a record the database refused .*change_log_reason_check")  # fmt: skip
    # Vectors of another model or size are refused before anything is read.
    other_model = json.dumps({**header, "embedder": {"name": "local:e5", "dim": 384}})
    refused("\n".join([other_model, *lines[1:]]), "open it with that embedder", EmbedderMismatch)
    other_dim = json.dumps({**header, "embedder": {"name": "hash-768", "dim": 768}})
    refused("\n".join([other_dim, *lines[1:]]), "768 dimensions", EmbeddingDimensionMismatch)
    # ... unless the import embeds the texts itself.
    report = other.import_dump(
        io.StringIO("\n".join([other_model, *lines[1:]])), dataset="copy", re_embed=True
    )
    assert report.vectors == "embedded"
    # A dataset that holds memories is not overwritten.
    with pytest.raises(InvalidInput, match="already holds memories"):
        other.import_dump(io.StringIO("\n".join(lines)), dataset="copy")


def test_export_to_a_path_writes_the_file_only_when_it_succeeds(
    full: Memory, tmp_path: Path
) -> None:
    target = tmp_path / "work.jsonl"
    report = full.dataset("work").export(target, with_vectors=True)
    assert report.path == str(target) and target.stat().st_size == report.bytes
    ghost = full.dataset("ghost")
    full.drop_dataset("ghost")
    with pytest.raises(NotFound):
        ghost.export(tmp_path / "ghost.jsonl")
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".jsonl") == ["work.jsonl"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]
    imported = full.import_dump(target, dataset="from-file")
    assert imported.counts == report.counts


def test_progress_is_reported_through_every_stage(full: Memory, other: Memory) -> None:
    seen: list[Any] = []
    record: Callable[[Any], None] = seen.append
    text = dump_of(full.dataset("work"), progress=record)
    assert seen[-1].stage == "done" and seen[-1].done == seen[-1].total
    seen.clear()
    other.import_dump(io.StringIO(text), dataset="moved", progress=record)
    stages = list(dict.fromkeys(e.stage for e in seen))
    assert stages == ["read", "check", "rekey", "write", "embed", "vectors", "done"]
    assert all(e.operation == "import" for e in seen)


def test_the_async_api_writes_and_reads_the_same_dump(
    full: Memory, db_url: str, other_url: str
) -> None:
    async def move() -> tuple[str, Any]:
        buf = io.StringIO()
        async with AsyncMemory.open(db_url, embedder=HashEmbedder(384)) as source:
            await source.dataset("work").export(buf, with_vectors=True)
        async with AsyncMemory.open(other_url, embedder=HashEmbedder(384)) as target:
            report = await target.import_dump(io.StringIO(buf.getvalue()), dataset="work")
        return buf.getvalue(), report

    text, report = asyncio.run(move())
    synced = dump_of(full.dataset("work"), with_vectors=True)
    assert text.splitlines()[1:] == synced.splitlines()[1:]
    assert (
        report.vectors == "imported"
        and report.counts == json.loads(text.splitlines()[-1])["counts"]
    )
    assert rows_of(other_url, "work") == rows_of(db_url, "work")
