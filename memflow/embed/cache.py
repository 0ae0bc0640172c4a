"""One vector per distinct text for the length of a call (``memorize``): :class:`CachingEmbedder`.

Segmentation, routing and the writer all embed through the same cache, keyed by the hash of the
text as embedded (:func:`memflow.ids.text_hash`, the key the store records), so a text reaches
the model once however many stages ask for it. ``on_embedded`` hears of each sub-batch the model
finishes (progress reporting); sub-batches are small so a long document reports as it goes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

from memflow.embed.base import Embedder, Matrix, Vector
from memflow.ids import text_hash

# Called with the number of texts the model just embedded.
EmbeddedHook = Callable[[int], None]


class CachingEmbedder:
    """``inner`` behind a text-hash cache; queries are never cached (they are embedded once)."""

    def __init__(
        self,
        inner: Embedder,
        *,
        step: int = 16,
        on_embedded: EmbeddedHook | None = None,
        max_entries: int = 100_000,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.step = max(1, step)
        self.on_embedded = on_embedded
        self.max_entries = max_entries  # ~150 MB of 384-dim vectors; the oldest leave first
        self.vectors: dict[bytes, Vector] = {}
        self.embedded = 0  # texts sent to the model
        self.reused = 0  # texts served from the cache
        # memorize extracts the next document in a worker thread while this one is written.
        self._lock = threading.RLock()

    def __getattr__(self, attr: str) -> object:
        return getattr(self.inner, attr)

    def known(self, text: str) -> bool:
        return text_hash(text) in self.vectors

    def put(self, text: str, vector: Vector) -> None:
        """Record a vector computed elsewhere (the store already holds it)."""
        with self._lock:
            self.vectors[text_hash(text)] = np.asarray(vector, dtype=np.float32)

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        with self._lock:
            return self._embed_passages(texts)

    def _embed_passages(self, texts: Sequence[str]) -> Matrix:
        keys = [text_hash(t) for t in texts]
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in self.vectors:
                missing.setdefault(key, text)
        self.reused += len(texts) - len(missing)
        todo = list(missing.items())
        for i in range(0, len(todo), self.step):
            part = todo[i : i + self.step]
            out = self.inner.embed_passages([t for _, t in part])
            for (key, _), vec in zip(part, out, strict=True):
                self.vectors[key] = np.asarray(vec, dtype=np.float32)
            self.embedded += len(part)
            if self.on_embedded is not None:
                self.on_embedded(len(part))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.stack([self.vectors[k] for k in keys])
        excess = len(self.vectors) - self.max_entries
        if excess > 0:
            for key in list(self.vectors)[:excess]:
                del self.vectors[key]
        return out

    def embed_query(self, text: str) -> Vector:
        return self.inner.embed_query(text)


__all__ = ["CachingEmbedder", "EmbeddedHook"]
