"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, Ollama, vLLM, TEI).

Settings: arguments first, then ``MEMFLOW_EMBED_BASE_URL``, ``MEMFLOW_EMBED_MODEL``,
``MEMFLOW_EMBED_DIM``, ``MEMFLOW_EMBED_API_KEY`` / ``OPENAI_API_KEY``. When the dimension is neither
given nor known for the model, one probe request measures it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np
import openai

from memflow.embed.base import BaseEmbedder, Matrix
from memflow.errors import ConfigurationError, EmbeddingError

DEFAULT_MODEL = "text-embedding-3-small"
# Native output sizes of OpenAI's hosted models (platform.openai.com/docs/guides/embeddings).
KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
# text-embedding-3 models accept a ``dimensions`` request parameter; other servers may reject it.
_SHORTENABLE = ("text-embedding-3-",)


def _env_int(env: Mapping[str, str], name: str) -> int | None:
    raw = env.get(name)
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError as exc:
        raise ConfigurationError(f"{name} must be an integer, got {raw!r}") from exc


class OpenAIEmbedder(BaseEmbedder):
    """Embedder backed by an OpenAI-compatible embeddings endpoint; vectors are L2-normalised."""

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        dimensions: int | None = None,
        api_key: str | None = None,
        batch_size: int = 128,
        *,
        timeout_s: float = 60.0,
        max_retries: int = 2,
        max_chars: int = 6000,
        env: Mapping[str, str] | None = None,
    ) -> None:
        source = os.environ if env is None else env
        self.base_url = base_url or source.get("MEMFLOW_EMBED_BASE_URL") or None
        self.model = model or source.get("MEMFLOW_EMBED_MODEL") or DEFAULT_MODEL
        requested = dimensions if dimensions is not None else _env_int(source, "MEMFLOW_EMBED_DIM")
        if requested is not None and requested < 1:
            raise ConfigurationError(f"embedding dimensions must be positive, got {requested}")
        if batch_size < 1:
            raise ConfigurationError(f"batch_size must be positive, got {batch_size}")
        key = api_key or source.get("MEMFLOW_EMBED_API_KEY") or source.get("OPENAI_API_KEY")
        if not key:
            if self.base_url is None:
                raise ConfigurationError(
                    "no API key for OpenAI embeddings: set MEMFLOW_EMBED_API_KEY or OPENAI_API_KEY"
                    " (or MEMFLOW_EMBED_BASE_URL for a local OpenAI-compatible server)"
                )
            key = "unused"  # local servers accept any key
        self.name = f"openai:{self.model}"
        self.batch_size = batch_size
        self.max_chars = max_chars
        self._send_dimensions = requested is not None and self.model.startswith(_SHORTENABLE)
        self._requested = requested
        try:
            self._client = openai.OpenAI(
                base_url=self.base_url, api_key=key, timeout=timeout_s, max_retries=max_retries
            )
        except openai.OpenAIError as exc:
            raise ConfigurationError(f"cannot create the OpenAI client: {exc}") from exc
        self.dim = requested or KNOWN_DIMENSIONS.get(self.model) or self._probe_dimension()

    def _probe_dimension(self) -> int:
        try:
            return int(self._request(["dimension probe"]).shape[1])
        except EmbeddingError as exc:
            raise EmbeddingError(
                f"could not measure the dimension of {self.name!r} ({exc}); "
                "set MEMFLOW_EMBED_DIM or pass dimensions=..."
            ) from exc

    def _request(self, texts: list[str]) -> Matrix:
        inputs = [t[: self.max_chars] if t.strip() else " " for t in texts]
        try:
            if self._send_dimensions and self._requested is not None:
                response = self._client.embeddings.create(
                    model=self.model,
                    input=inputs,
                    encoding_format="float",
                    dimensions=self._requested,
                )
            else:
                response = self._client.embeddings.create(
                    model=self.model, input=inputs, encoding_format="float"
                )
        except openai.APIStatusError as exc:
            raise EmbeddingError(
                f"embedding endpoint of {self.name!r} answered HTTP {exc.status_code}: {exc.message}"
            ) from exc
        except openai.OpenAIError as exc:
            raise EmbeddingError(f"embedding request to {self.name!r} failed: {exc}") from exc
        rows = sorted(response.data, key=lambda item: item.index)
        if len(rows) != len(texts):
            raise EmbeddingError(
                f"embedder {self.name!r} returned {len(rows)} vectors for {len(texts)} texts"
            )
        try:
            arr = np.asarray([row.embedding for row in rows], dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise EmbeddingError(f"embedder {self.name!r} returned ragged vectors") from exc
        if arr.ndim != 2:
            raise EmbeddingError(f"embedder {self.name!r} returned vectors of shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise EmbeddingError(f"embedder {self.name!r} returned NaN or infinite values")
        norms = np.linalg.norm(arr, axis=1, keepdims=True)
        unit = np.zeros_like(arr)
        np.divide(arr, norms, out=unit, where=norms > 0)
        return unit

    def _embed_batch(self, texts: list[str], is_query: bool) -> Matrix:
        return self._request(texts)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAIEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["OpenAIEmbedder"]
