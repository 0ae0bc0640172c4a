"""Bad input, from a fixed corpus and from hypothesis: each input is stored correctly or rejected
with a MemflowError subclass whose message says what to do — never a bare driver exception —
and a rejected input leaves the store exactly as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memflow.embed.hash import HashEmbedder
from memflow.errors import EmbeddingError, InvalidInput, MemflowError
from memflow.memory import Dataset, Memory

from ..conftest import REPO
from ._support import ACTIONS, assert_actionable, assert_intact, fingerprint, record, rows_of

HYP = settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def outcome(url: str, fn: Callable[[], Any]) -> tuple[str, MemflowError | None]:
    """Run ``fn``: ("stored", None) with an intact store, or ("rejected", error) with the store
    unchanged. Any non-memflow exception propagates and fails the test."""
    before = fingerprint(url)
    try:
        fn()
    except MemflowError as exc:
        assert fingerprint(url) == before, "a rejected input changed the store"
        assert_actionable(exc)
        return "rejected", exc
    assert_intact(url)
    return "stored", None


def _chunk_texts(url: str, ds: Dataset) -> list[str]:
    return [
        r[0] for r in rows_of(url, "SELECT text FROM memflow.chunk WHERE dataset_id = %s", ds.id)
    ]


# -- the fixed corpus --------------------------------------------------------------------------


def test_empty_and_whitespace_only_are_rejected(mem: Memory, db_url: str) -> None:
    ds = mem.dataset("bad")
    raws: tuple[str | bytes, ...] = ("", " ", "  \n\t  ", "\u3000\u3000", b"", b"   \n")
    queries = ("", "   ", "\n\t")
    for raw in raws:
        kind, err = outcome(db_url, partial(ds.memorize, raw, extractor="rules"))
        assert kind == "rejected" and isinstance(err, InvalidInput), (raw, kind)
    for q in queries:
        kind, err = outcome(db_url, partial(ds.search, q))
        assert kind == "rejected" and isinstance(err, InvalidInput)
    record(
        "bad_input",
        inputs=["empty and whitespace-only texts and queries"],
        tried=len(raws) + len(queries),
        outcome="InvalidInput",
    )


def test_nul_bytes(mem: Memory, db_url: str) -> None:
    ds = mem.dataset("bad")
    kind, _ = outcome(
        db_url, lambda: ds.memorize("hello\x00world. A second sentence here.", extractor="rules")
    )
    kinds = [kind]
    if kind == "stored":  # stored without the NUL (PostgreSQL text cannot hold it)
        texts = _chunk_texts(db_url, ds)
        assert any("hello" in t and "world" in t for t in texts), texts
    kind, err = outcome(db_url, lambda: ds.memorize(b"hello\x00world. Second.", extractor="rules"))
    assert kind == "rejected" and isinstance(err, InvalidInput)
    kinds.append(f"{kind} ({type(err).__name__})")
    kind, _ = outcome(
        db_url,
        lambda: ds.add_episode(
            {"name": "nul\x00name", "summary": "a\x00b", "entities": [{"name": "x\x00y"}]}
        ),
    )
    assert kind == "stored"
    assert {e["name"] for e in ds.episodes()} >= {"nulname"}
    kinds.append(f"{kind} without the NUL")
    record(
        "bad_input",
        inputs=["NUL in text", "NUL in bytes", "NUL in drafts"],
        tried=3,
        outcome="; ".join(kinds),
    )


def test_invalid_utf8_and_binary_files(mem: Memory, db_url: str, tmp_path: Path) -> None:
    ds = mem.dataset("bad")
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("café au lait, naïve résumé. Zweiter Satz.".encode("latin-1"))
    kind, err = outcome(db_url, lambda: ds.memorize(latin1, extractor="rules"))
    assert kind == "rejected" and isinstance(err, InvalidInput) and "UTF-8" in str(err)
    blob = tmp_path / "blob.bin"
    blob.write_bytes(np.random.default_rng(7).integers(0, 256, 65536, dtype=np.uint8).tobytes())
    png = tmp_path / "image.md"  # a binary file with a text extension
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 16)
    for path in (blob, png):
        kind, err = outcome(db_url, partial(ds.memorize, path, extractor="rules"))
        assert kind == "rejected" and isinstance(err, InvalidInput), path
    record(
        "bad_input",
        inputs=["Latin-1 file", "random binary file", "PNG named .md"],
        tried=3,
        outcome="InvalidInput",
    )


def test_full_width_emoji_and_sql_looking_text_is_stored_and_found(
    mem: Memory, db_url: str
) -> None:
    ds = mem.dataset("bad")
    texts = {
        "fullwidth": "ＡＰＩの応答をストリーミングに変更しました🚀。全角のテキストも保存される。",
        "emoji": "Launch party 🎉🎉 with 👩‍💻 developers and 🇨🇳 flags. Zero-width\u200bjoiner test.",
        "sql": "Robert'); DROP TABLE memflow.node;-- met :dataset_id and %s at 'O''Brien' on $$x$$.",
    }
    for text in texts.values():
        kind, _ = outcome(db_url, partial(ds.memorize, text, extractor="rules"))
        assert kind == "stored"
    stats = ds.stats()
    assert stats["documents"] == 3 and stats["episodes"] == 3
    for key, query in (
        ("fullwidth", "ストリーミング"),
        ("sql", "Robert'); DROP TABLE memflow.node;--"),
    ):
        hits = ds.search(query, top_k=3).results
        assert hits and texts[key][:10] in hits[0].name + " ".join(_chunk_texts(db_url, ds)), key
    queries = (
        "' OR 1=1 --",
        "%",
        "_",
        "\\",
        ":dataset_id",
        "$$",
        "%(x)s",
        "'; DROP TABLE memflow.chunk; --",
    )
    for q in queries:
        kind, _ = outcome(db_url, partial(ds.search, q, top_k=5))
        assert kind == "stored"
    assert ds.stats() == stats
    record(
        "bad_input",
        inputs=["full-width CJK", "emoji + ZWJ", "SQL-looking text", "SQL-looking queries"],
        tried=len(texts) + len(queries),
        outcome="stored and found; queries answered",
    )


def test_sql_looking_names_everywhere(mem: Memory, db_url: str) -> None:
    name = "x'); DELETE FROM memflow.node; --"
    ds = mem.dataset(name)
    draft = {
        "name": "'; DROP TABLE memflow.edge; --",
        "summary": "%s %(name)s :dataset_id $1 \\x00",
        "entities": [{"name": "Robert'); DROP TABLE students;--"}, {"name": "%"}, {"name": "_"}],
        "facets": [
            {"search_text": "1; SELECT pg_sleep(10)", "points": [{"search_text": "' OR ''='"}]}
        ],
    }
    kind, _ = outcome(db_url, lambda: ds.add_episode(draft))
    assert kind == "stored"
    assert ds.stats()["entities"] == 3
    assert [e["name"] for e in ds.episodes()] == [draft["name"]]
    record(
        "bad_input",
        inputs=["SQL-looking dataset, episode, entity and facet names"],
        tried=1,
        outcome="stored verbatim",
    )


class _BadEmbedder:
    """A provider that claims the store's model but returns the wrong dimension or NaN."""

    name, dim = "hash-384", 384

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def _out(self, n: int) -> np.ndarray:
        if self.mode == "dim":
            return np.full((n, 10), 0.1, dtype=np.float32)
        out = np.full((n, 384), 0.05, dtype=np.float32)
        out[:, 3] = np.nan
        return out

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._out(len(texts))

    def embed_query(self, text: str) -> np.ndarray:
        vec: np.ndarray = self._out(1)[0]
        return vec


@pytest.mark.parametrize("mode", ["dim", "nan"])
def test_embedder_returning_wrong_dimension_or_nan(db_url: str, mode: str) -> None:
    with Memory.open(db_url, embedder=HashEmbedder(384)) as good:
        good.dataset("emb").add_episode({"name": "seed", "summary": "a stored episode"})
    with Memory.open(db_url, embedder=_BadEmbedder(mode)) as bad:
        ds = bad.dataset("emb")
        calls: list[Callable[[], Any]] = [
            lambda: ds.add_episode({"name": "new", "summary": "a new episode text"}),
            lambda: ds.memorize(
                "A brand new sentence to memorize. And another one.", extractor="rules"
            ),
            lambda: ds.search("a stored episode"),
        ]
        for call in calls:
            kind, err = outcome(db_url, call)
            assert kind == "rejected" and isinstance(err, EmbeddingError), (kind, repr(err))
            assert ("10-dim" in str(err)) if mode == "dim" else ("NaN" in str(err))
    record(
        "bad_input",
        inputs=[f"embedder returning {'10-dim' if mode == 'dim' else 'NaN'} vectors"],
        tried=len(calls),
        outcome="EmbeddingError",
    )


# -- large inputs, in a bounded subprocess so a pathological case fails instead of hanging --------


def _bounded_input(db_url: str, kind: str, path: Path, limit: float) -> dict[str, Any]:
    # The dataset exists before the call: what is compared is what memorize itself leaves behind.
    with Memory.open(db_url, embedder=HashEmbedder(384)) as m:
        m.dataset("big")
    before = fingerprint(db_url)
    try:
        res = subprocess.run(
            [sys.executable, "-m", "tests.reliability._writer_proc", "input", db_url, "big", kind, str(path)],
            cwd=REPO, capture_output=True, text=True, timeout=limit,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"{path.name} ({path.stat().st_size} bytes) took over {limit:.0f} s")
    assert res.returncode == 0, f"bare exception:\n{res.stderr[-3000:]}"
    out: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
    if out["outcome"] == "rejected":
        assert fingerprint(db_url) == before
        assert any(w in out["message"].lower() for w in ACTIONS), out
    else:
        assert_intact(db_url)
    return out


def test_a_single_one_megabyte_line(db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "one-line.txt"
    words = (f"token{i % 5000} alpha{i % 97}" for i in range(80_000))
    path.write_text(" ".join(words)[: 1024 * 1024], encoding="utf-8")
    out = _bounded_input(db_url, "text", path, limit=90)
    record("bad_input", inputs=["1 MB single line"], tried=1, **out)


def _ten_mb_text() -> str:
    rng = np.random.default_rng(3)
    vocab = [f"w{i}" for i in range(4000)] + ["Ines", "PostgreSQL", "2024-05-01", "Beijing"]
    parts, size = [], 0
    while size < 10 * 1024 * 1024:
        para = " ".join(" ".join(rng.choice(vocab, 14)) + "." for _ in range(6)) + "\n\n"
        parts.append(para)
        size += len(para)
    return "".join(parts)


@pytest.mark.load
def test_a_ten_megabyte_text(db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "ten-mb.txt"
    path.write_text(_ten_mb_text(), encoding="utf-8")
    out = _bounded_input(db_url, "text", path, limit=300)
    record("bad_input", inputs=["10 MB text"], tried=1, **out)


def test_a_draft_with_ten_thousand_entities(db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "wide.json"
    ents = [{"name": f"Entity {i}", "role": f"role {i % 7}"} for i in range(10_000)]
    path.write_text(
        json.dumps([{"name": "wide", "summary": "ten thousand entities", "entities": ents}])
    )
    out = _bounded_input(db_url, "drafts", path, limit=300)
    if out["outcome"] == "stored":
        assert out["entities"] == 10_000 and out["edges"] == 10_000
    record("bad_input", inputs=["draft with 10,000 entities"], tried=1, **out)


# -- hypothesis ---------------------------------------------------------------------------------


@HYP
@given(text=st.text(max_size=400))
def test_any_text_is_stored_or_rejected_cleanly(mem: Memory, db_url: str, text: str) -> None:
    ds = mem.dataset("hyp-text")
    record("hypothesis_example", property="any text")
    outcome(db_url, lambda: ds.memorize(text, content_type="text", extractor="rules"))


@HYP
@given(data=st.binary(max_size=400))
def test_any_bytes_are_stored_or_rejected_cleanly(mem: Memory, db_url: str, data: bytes) -> None:
    ds = mem.dataset("hyp-bytes")
    record("hypothesis_example", property="any bytes")
    outcome(db_url, lambda: ds.memorize(data, extractor="rules"))


@HYP
@given(query=st.text(max_size=200), top_k=st.integers(min_value=-3, max_value=500))
def test_any_query_returns_or_is_rejected_cleanly(
    mem: Memory, db_url: str, query: str, top_k: int
) -> None:
    ds = mem.dataset("hyp-search")
    record("hypothesis_example", property="any query and top_k")
    if not ds.stats()["episodes"]:
        ds.memorize("Ines moved ticket T-1 to Kubernetes. 王小明 reviewed it.", extractor="rules")
    outcome(db_url, lambda: ds.search(query, top_k=top_k))


_names = st.text(min_size=0, max_size=60)


@HYP
@given(name=_names, summary=_names, entities=st.lists(_names, max_size=5), facet=_names)
def test_any_draft_is_stored_or_rejected_cleanly(
    mem: Memory, db_url: str, name: str, summary: str, entities: list[str], facet: str
) -> None:
    ds = mem.dataset("hyp-drafts")
    record("hypothesis_example", property="any draft")
    draft = {
        "name": name,
        "summary": summary,
        "entities": [{"name": e} for e in entities],
        "facets": [{"search_text": facet, "points": [{"search_text": summary}]}],
    }
    kind, err = outcome(db_url, lambda: ds.add_episode(draft))
    if kind == "rejected":
        assert isinstance(err, InvalidInput)
