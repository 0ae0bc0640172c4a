"""A persistent embedding cache for benchmarks: :class:`DiskCachedEmbedder`.

Vectors are kept in one SQLite file outside the repository, keyed by the sha256 of the model's
name, the kind of text (passage or query) and the text itself. A benchmark that re-ingests after
a change to the write path then only sends the model the texts that changed, and a second
benchmark item that shares a session with the first pays nothing for it. Nothing here is part of
the library: memflow's own per-call cache (``memflow.embed.cache``) sits above this one.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memflow.embed.base import Embedder, Matrix, Vector

_SCHEMA = "CREATE TABLE IF NOT EXISTS vec (key BLOB PRIMARY KEY, v BLOB NOT NULL)"
_LOOKUP_BATCH = 500  # SQLite's bound-parameter limit is far above this


def cache_key(model: str, kind: str, text: str) -> bytes:
    return hashlib.sha256(f"{model}\0{kind}\0{text}".encode()).digest()


class DiskCachedEmbedder:
    """``inner`` behind an on-disk cache at ``path`` (created if missing). Same ``name`` and
    ``dim`` as ``inner``, so a store records the model, not the cache. Thread-safe: memorize
    extracts the next document in a worker thread."""

    def __init__(self, inner: Embedder, path: Path) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        self._db.commit()
        self._lock = threading.Lock()
        self.hits = 0  # texts served from the file
        self.misses = 0  # texts sent to the model
        self.words_embedded = 0  # whitespace words of the texts sent to the model
        self._queries: dict[str, Vector] = {}

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _lookup(self, keys: Sequence[bytes]) -> dict[bytes, Vector]:
        found: dict[bytes, Vector] = {}
        unique = list(dict.fromkeys(keys))
        for i in range(0, len(unique), _LOOKUP_BATCH):
            part = unique[i : i + _LOOKUP_BATCH]
            marks = ",".join("?" * len(part))
            for key, blob in self._db.execute(
                f"SELECT key, v FROM vec WHERE key IN ({marks})", part
            ):
                found[bytes(key)] = np.frombuffer(blob, dtype=np.float32).copy()
        return found

    def _embed(self, texts: Sequence[str], kind: str) -> Matrix:
        keys = [cache_key(self.name, kind, t) for t in texts]
        with self._lock:
            found = self._lookup(keys)
            todo: dict[bytes, str] = {}
            for key, text in zip(keys, texts, strict=True):
                if key not in found:
                    todo.setdefault(key, text)
            self.hits += len(texts) - len(todo)
            if todo:
                if kind == "query":
                    fresh = np.stack([self.inner.embed_query(t) for t in todo.values()])
                else:
                    fresh = self.inner.embed_passages(list(todo.values()))
                rows = []
                for key, vec in zip(todo, fresh, strict=True):
                    found[key] = np.asarray(vec, dtype=np.float32)
                    rows.append((key, found[key].tobytes()))
                self._db.executemany("INSERT OR REPLACE INTO vec (key, v) VALUES (?, ?)", rows)
                self._db.commit()
                self.misses += len(todo)
                self.words_embedded += sum(len(t.split()) for t in todo.values())
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        return self._embed(texts, "passage")

    def embed_query(self, text: str) -> Vector:
        """Also memoised in memory: a search then pays no lookup for a query embedded before."""
        vec = self._queries.get(text)
        if vec is None:
            vec = self._queries[text] = self._embed([text], "query")[0]
        return vec

    def counts(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "words_embedded": self.words_embedded}


__all__ = ["DiskCachedEmbedder", "cache_key"]
