"""Deterministic feature-hashing embedder: for tests and scale benchmarks, not for quality."""

from __future__ import annotations

import hashlib
import itertools
import re
import unicodedata

import numpy as np

from memflow.embed.base import BaseEmbedder, Matrix

_TOKEN = re.compile(r"[a-z0-9]+|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


class HashEmbedder(BaseEmbedder):
    """Bag of words and character bigrams hashed into ``dim`` buckets, L2-normalised."""

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim
        self.name = f"hash-{dim}"

    def _features(self, text: str) -> list[str]:
        norm = unicodedata.normalize("NFKC", text).casefold()
        toks = _TOKEN.findall(norm)
        feats = list(toks)
        feats += [a + b for a, b in itertools.pairwise(toks)]
        return feats or [norm]

    def _embed_batch(self, texts: list[str], is_query: bool) -> Matrix:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feat in self._features(text):
                h = hashlib.blake2b(feat.encode("utf-8"), digest_size=8).digest()
                idx = int.from_bytes(h[:4], "little") % self.dim
                sign = 1.0 if h[4] & 1 else -1.0
                out[row, idx] += sign
            norm = float(np.linalg.norm(out[row]))
            if norm == 0.0:
                out[row, 0] = 1.0
            else:
                out[row] /= norm
        return out
