"""The embedder interface and the shared batching/dedup/validation wrapper."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from memflow.errors import EmbeddingError

Vector = npt.NDArray[np.float32]
Matrix = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """What memflow needs from an embedding model.

    ``name`` identifies the model (recorded in the store); ``dim`` its dimension. Passages are
    stored texts, queries are search queries (models like e5 embed them differently).
    """

    name: str
    dim: int

    def embed_passages(self, texts: Sequence[str]) -> Matrix: ...

    def embed_query(self, text: str) -> Vector: ...


class BaseEmbedder:
    """Batches, embeds identical texts once, and validates shape and finiteness."""

    name: str = "base"
    dim: int = 0
    batch_size: int = 256

    def _embed_batch(self, texts: list[str], is_query: bool) -> Matrix:  # pragma: no cover
        raise NotImplementedError

    def _checked(self, out: object, n: int) -> Matrix:
        arr = np.asarray(out, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[0] != n:
            raise EmbeddingError(
                f"embedder {self.name!r} returned shape {getattr(arr, 'shape', None)} for {n} texts"
            )
        if arr.shape[1] != self.dim:
            raise EmbeddingError(
                f"embedder {self.name!r} returned {arr.shape[1]}-dim vectors, expected {self.dim}: "
                "check the model/dimensions setting"
            )
        if not np.all(np.isfinite(arr)):
            raise EmbeddingError(f"embedder {self.name!r} returned NaN or infinite values")
        return arr

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        unique: dict[str, int] = {}
        for t in texts:
            unique.setdefault(t, len(unique))
        order = list(unique)
        out = np.empty((len(order), self.dim), dtype=np.float32)
        for i in range(0, len(order), self.batch_size):
            batch = order[i : i + self.batch_size]
            out[i : i + len(batch)] = self._checked(self._embed_batch(batch, False), len(batch))
        picked: Matrix = out[[unique[t] for t in texts]] if texts else out[:0]
        return picked

    def embed_query(self, text: str) -> Vector:
        vec: Vector = self._checked(self._embed_batch([text], True), 1)[0]
        return vec
