"""Topic segmentation: cut a sequence of statements into windows (future Facets).

With embeddings, a cut is worth taking where the similarity between the statements before and
after a gap dips (TextTiling's depth score, Hearst 1997, over mean vectors of ``k`` neighbours on
each side). Paragraph breaks add a bonus. A dynamic programme then picks the cuts with the highest
total gain subject to a minimum and maximum window size, so the result is deterministic and never
produces a window that is too small or too large.
"""

from __future__ import annotations

import math
from collections.abc import Collection

import numpy as np
import numpy.typing as npt

from memflow.errors import ExtractionError

Spans = list[tuple[int, int]]
FloatArray = npt.NDArray[np.float64]


def fixed_windows(n: int, size: int) -> Spans:
    """``ceil(n / size)`` consecutive windows of near-equal length (never longer than ``size``)."""
    if n <= 0:
        return []
    count = math.ceil(n / max(1, size))
    base, extra = divmod(n, count)
    spans: Spans = []
    start = 0
    for i in range(count):
        end = start + base + (1 if i < extra else 0)
        spans.append((start, end))
        start = end
    return spans


def depth_scores(vectors: npt.NDArray[np.floating], k: int = 2) -> FloatArray:
    """Depth of the similarity dip at each gap; ``out[g]`` is the gap before item ``g`` (out[0]=0)."""
    n = len(vectors)
    out = np.zeros(n, dtype=np.float64)
    if n < 2:
        return out
    vecs = np.asarray(vectors, dtype=np.float64)
    sims = np.zeros(n, dtype=np.float64)
    for g in range(1, n):
        left = vecs[max(0, g - k) : g].mean(axis=0)
        right = vecs[g : g + k].mean(axis=0)
        denom = float(np.linalg.norm(left) * np.linalg.norm(right))
        sims[g] = float(left @ right) / denom if denom > 0 else 0.0
    for g in range(1, n):
        lpeak = sims[g]
        i = g - 1
        while i >= 1 and sims[i] >= lpeak:
            lpeak = sims[i]
            i -= 1
        rpeak = sims[g]
        i = g + 1
        while i < n and sims[i] >= rpeak:
            rpeak = sims[i]
            i += 1
        out[g] = (lpeak - sims[g]) + (rpeak - sims[g])
    return out


def _standardised(values: FloatArray) -> FloatArray:
    body = values[1:]
    if len(body) == 0:
        return values
    std = float(body.std())
    out = np.zeros_like(values)
    if std > 1e-9:
        out[1:] = (body - float(body.mean())) / std
    return out


def best_spans(gain: FloatArray, min_size: int, max_size: int, cut_cost: float) -> Spans:
    """Windows maximising the summed ``gain[g] - cut_cost`` of their cuts, sizes in [min, max]."""
    n = len(gain)
    if n == 0:
        return []
    if n < min_size:
        return [(0, n)]
    best = [-math.inf] * (n + 1)
    prev = [-1] * (n + 1)
    best[0] = 0.0
    for i in range(1, n + 1):
        for j in range(max(0, i - max_size), i - min_size + 1):
            if best[j] == -math.inf:
                continue
            score = best[j] + (float(gain[j]) - cut_cost if j > 0 else 0.0)
            if score > best[i] + 1e-12:
                best[i], prev[i] = score, j
    if best[n] == -math.inf:
        return [(0, n)]
    spans: Spans = []
    i = n
    while i > 0:
        spans.append((prev[i], i))
        i = prev[i]
    return spans[::-1]


def segment(
    n: int,
    *,
    vectors: npt.NDArray[np.floating] | None = None,
    breaks: Collection[int] = (),
    min_size: int = 3,
    max_size: int = 8,
    window: int = 4,
    break_bonus: float = 1.5,
    cut_cost: float = 0.25,
) -> Spans:
    """Cut ``n`` statements into windows.

    ``breaks`` are gaps (index of the first statement after a paragraph break) where a cut is
    preferred. Without vectors and breaks the result is :func:`fixed_windows` of ``window``.
    """
    if n <= 0:
        return []
    min_size = max(1, min_size)
    max_size = max(max_size, 2 * min_size - 1)  # every n >= min_size stays feasible
    if vectors is None and not breaks:
        return fixed_windows(n, window)
    if vectors is not None and len(vectors) != n:
        raise ExtractionError(f"segment: {len(vectors)} vectors for {n} statements")
    gain = _standardised(depth_scores(vectors)) if vectors is not None else np.zeros(n)
    for g in breaks:
        if 0 < g < n:
            gain[g] += break_bonus
    return best_spans(gain, min_size, max_size, cut_cost)


__all__ = ["best_spans", "depth_scores", "fixed_windows", "segment"]
