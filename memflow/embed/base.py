"""The embedder interface and the shared batching/dedup/validation wrapper."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

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


_WORD = re.compile(r"\S+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]")
# A token of a multilingual subword model covers at most about this many CJK characters.
_CJK_PER_TOKEN = 3
# ... and, for an upper bound on pathological words (URLs, base64), this many characters.
_CHARS_PER_TOKEN = 12


def clip_to_window(text: str, max_tokens: int) -> str:
    """The prefix of ``text`` that surely holds the first ``max_tokens`` tokens of a subword model.

    Cheap upper bound, no tokenizer: every whitespace word is at least one token, a token holds
    at most three CJK characters, and at most ``_CHARS_PER_TOKEN`` characters. What is cut is
    text the model would drop anyway, so tokenising it is work wasted."""
    if len(text) <= max_tokens:
        return text
    budget = float(max_tokens)
    for m in _WORD.finditer(text):
        word = m.group()
        cjk = len(_CJK.findall(word))
        if cjk <= _CJK_PER_TOKEN:
            budget -= 1
            if budget < 0:
                return text[: m.start()].rstrip()
            continue
        at = m.start()
        for ch in word:  # a run of CJK text with no spaces: spend the budget character by character
            budget -= 1 / _CJK_PER_TOKEN if _CJK.match(ch) else 1
            if budget < 0:
                return text[:at]
            at += 1
    return text[: max_tokens * _CHARS_PER_TOKEN]


def as_array(vec: Any) -> Vector:
    """A float32 array from a numpy array, a list, or pgvector's ``Vector`` (as rows return)."""
    if hasattr(vec, "to_numpy"):
        vec = vec.to_numpy()
    return np.asarray(vec, dtype=np.float32)


def mean_direction(vectors: Sequence[Any]) -> Vector:
    """The unit vector along the mean of the unit vectors of ``vectors`` (zero ones are left
    out): the vector of a text that only restates its parts, derived from theirs."""
    units = [as_array(v) for v in vectors]
    units = [v / n for v in units if (n := float(np.linalg.norm(v))) > 0]
    if not units:
        raise EmbeddingError("no non-zero vector to derive a direction from: embed the text itself")
    mean = np.mean(units, axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / norm if norm > 0 else units[0]).astype(np.float32)


class BaseEmbedder:
    """Batches, embeds identical texts once, and validates shape and finiteness.

    ``max_tokens``: the model's input window; longer texts are cut (:func:`clip_to_window`)
    before they reach the tokenizer."""

    name: str = "base"
    dim: int = 0
    batch_size: int = 256
    max_tokens: int | None = None

    def _embed_batch(self, texts: list[str], is_query: bool) -> Matrix:  # pragma: no cover
        raise NotImplementedError

    def _checked(self, out: object, n: int) -> Matrix:
        return _validated(self, out, n)

    def _clipped(self, text: str) -> str:
        return text if self.max_tokens is None else clip_to_window(text, self.max_tokens)

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        unique: dict[str, int] = {}
        for t in texts:
            unique.setdefault(t, len(unique))
        order = [self._clipped(t) for t in unique]
        out = np.empty((len(order), self.dim), dtype=np.float32)
        for i in range(0, len(order), self.batch_size):
            batch = order[i : i + self.batch_size]
            out[i : i + len(batch)] = self._checked(self._embed_batch(batch, False), len(batch))
        picked: Matrix = out[[unique[t] for t in texts]] if texts else out[:0]
        return picked

    def embed_query(self, text: str) -> Vector:
        vec: Vector = self._checked(self._embed_batch([self._clipped(text)], True), 1)[0]
        return vec


def _validated(embedder: Embedder, out: object, n: int) -> Matrix:
    arr = np.asarray(out, dtype=np.float32)
    name = getattr(embedder, "name", type(embedder).__name__)
    if arr.ndim != 2 or arr.shape[0] != n:
        raise EmbeddingError(
            f"embedder {name!r} returned shape {arr.shape} for {n} texts: "
            "check the provider returns one vector per input"
        )
    if arr.shape[1] != embedder.dim:
        raise EmbeddingError(
            f"embedder {name!r} returned {arr.shape[1]}-dim vectors, expected {embedder.dim}: "
            "check the model/dimensions setting"
        )
    if not np.all(np.isfinite(arr)):
        raise EmbeddingError(
            f"embedder {name!r} returned NaN or infinite values: check the provider and model"
        )
    return arr


def _call(embedder: Embedder, what: str, fn: Callable[[], object]) -> object:
    """Run a provider call; anything but an EmbeddingError becomes one, cause kept."""
    try:
        return fn()
    except EmbeddingError:
        raise
    except Exception as exc:
        name = getattr(embedder, "name", type(embedder).__name__)
        raise EmbeddingError(
            f"embedder {name!r} failed on the {what}: {exc.__class__.__name__}: {exc}; check the "
            "provider settings and retry (nothing was written)"
        ) from exc


def embed_passages_checked(embedder: Embedder, texts: Sequence[str]) -> Matrix:
    """``embedder.embed_passages`` for any embedder: provider failures and malformed output
    (wrong count, wrong dimension, NaN) become :class:`EmbeddingError` with the cause kept."""
    out = _call(embedder, "passages", lambda: embedder.embed_passages(texts))
    return _validated(embedder, out, len(texts))


def embed_query_checked(embedder: Embedder, text: str) -> Vector:
    """``embedder.embed_query`` with the same wrapping and validation."""
    out = _call(embedder, "query", lambda: embedder.embed_query(text))
    vec: Vector = _validated(embedder, np.asarray(out, dtype=np.float32).reshape(1, -1), 1)[0]
    return vec


class CheckedEmbedder:
    """Wraps any embedder so provider failures and malformed vectors (wrong count, wrong
    dimension, NaN) surface as :class:`EmbeddingError` on every path (write, route, search)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner: Embedder = inner.inner if isinstance(inner, CheckedEmbedder) else inner
        self.name = self.inner.name
        self.dim = self.inner.dim

    def __getattr__(self, attr: str) -> object:
        return getattr(self.inner, attr)

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        return embed_passages_checked(self.inner, texts)

    def embed_query(self, text: str) -> Vector:
        return embed_query_checked(self.inner, text)
