"""Embeddings from a local sentence-transformers model (optional extra).

Install with ``pip install 'memflow[sentence-transformers]'``; the package (and torch) is imported
only when this embedder is created.
"""

from __future__ import annotations

import importlib
import threading
from pathlib import PurePath
from typing import Any

import numpy as np

from memflow.embed.base import BaseEmbedder, Matrix
from memflow.errors import ConfigurationError, EmbeddingError

INSTALL_HINT = "pip install 'memflow[sentence-transformers]'"


def _load_module() -> Any:
    try:
        return importlib.import_module("sentence_transformers")
    except ImportError as exc:
        raise ConfigurationError(
            f"the sentence-transformers embedder needs the optional extra: {INSTALL_HINT}"
        ) from exc


class SentenceTransformerEmbedder(BaseEmbedder):
    """Any sentence-transformers model by local path (or hub id when it is cached)."""

    def __init__(
        self,
        model_path: str,
        *,
        device: str | None = None,
        batch_size: int = 64,
        query_prefix: str = "",
        passage_prefix: str = "",
    ) -> None:
        if not model_path.strip():
            raise ConfigurationError(
                "sentence-transformers needs a model path: 'sentence-transformers:/path/to/model'"
            )
        module = _load_module()
        try:
            self._model = module.SentenceTransformer(model_path, device=device)
        except Exception as exc:  # the library raises OSError, ValueError, HF errors...
            raise ConfigurationError(
                f"cannot load the sentence-transformers model {model_path!r}: {exc}"
            ) from exc
        dim = self._model.get_sentence_embedding_dimension()
        if not dim:
            raise ConfigurationError(f"model {model_path!r} does not report its embedding size")
        self.dim = int(dim)
        self.name = f"sentence-transformers:{PurePath(model_path).name or model_path}"
        self.batch_size = batch_size
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self._lock = threading.Lock()

    def _embed_batch(self, texts: list[str], is_query: bool) -> Matrix:
        prefix = self.query_prefix if is_query else self.passage_prefix
        try:
            with self._lock:
                out = self._model.encode(
                    [prefix + t for t in texts],
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
        except Exception as exc:  # torch/runtime errors vary by backend
            raise EmbeddingError(f"embedder {self.name!r} failed: {exc}") from exc
        return np.atleast_2d(np.asarray(out, dtype=np.float32))


__all__ = ["INSTALL_HINT", "SentenceTransformerEmbedder"]
