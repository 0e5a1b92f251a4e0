"""Exact integer dot products on float BLAS (numpy's integer matmul has no BLAS path).

A float type sums integers exactly while every partial sum, in whatever order BLAS adds, stays
below 2^(mantissa bits + 1): with terms bounded by |x|max * |w|max, a reduction of length k is
exact when k * |x|max * |w|max <= 2^24 (float32) or 2^53 (float64). float32 sgemm is about twice
as fast as dgemm and moves half the bytes, so a long reduction is cut into chunks that each stay
exact in float32 and the chunk results (integers below 2^24) are added in float64. That total
needs no bound of its own: chunks of at least 16 terms mean terms below 2^20, so it passes 2^53
only past 2^33 terms, whose float32 weight copy alone would take 32 GiB.
"""

from __future__ import annotations

import numpy as np

F32_EXACT = 1 << 24
F64_EXACT = 1 << 53
_MIN_F32_CHUNK = 16  # shorter chunks: more sgemm calls than a single dgemm is worth


def max_abs(a: np.ndarray) -> int:
    """max |a| as a Python int (0 for an empty array)."""
    if a.size == 0:
        return 0
    return max(-int(a.min()), int(a.max()))


def f32_chunk(term_bound: int) -> int:
    """The longest reduction whose partial sums of terms bounded by `term_bound` float32 holds."""
    return F32_EXACT // max(term_bound, 1)


def sum_dtype(length: int, term_bound: int) -> type:
    """float32 or float64 when a `length`-term sum of terms bounded by `term_bound` is exact in
    it, else int64."""
    for dtype, limit in ((np.float32, F32_EXACT), (np.float64, F64_EXACT)):
        if length * term_bound <= limit:
            return dtype
    return np.int64


def exact_matmul(x: np.ndarray, w: np.ndarray, term_bound: int) -> np.ndarray:
    """x (..., K) @ w (K, N) for integer-valued arrays whose products are bounded by `term_bound`.

    Returns float32 (one exact sgemm), float64 (float32 chunks added, or one dgemm) or int64
    (the sums exceed 2^53), every value the exact integer sum.
    """
    k = w.shape[0]
    chunk = f32_chunk(term_bound)
    if chunk >= k:
        return np.matmul(x.astype(np.float32, copy=False), w.astype(np.float32, copy=False))
    if chunk >= _MIN_F32_CHUNK:
        x32, w32 = x.astype(np.float32, copy=False), w.astype(np.float32, copy=False)
        acc = np.matmul(x32[..., :chunk], w32[:chunk]).astype(np.float64)
        for start in range(chunk, k, chunk):
            acc += np.matmul(x32[..., start : start + chunk], w32[start : start + chunk])
        return acc
    dtype = sum_dtype(k, term_bound)
    return np.matmul(x.astype(dtype, copy=False), w.astype(dtype, copy=False))
