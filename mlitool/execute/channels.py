"""Per-channel arithmetic on long rows.

numpy runs a broadcast loop along the last axis; with activations (..., C) and per-channel
parameters (C,), a short channel axis (C = 16) makes every element-wise pass about twice as
slow. Viewing the values as rows of r*C and tiling the parameters r times gives the same
result with long inner loops.
"""

from __future__ import annotations

import numpy as np

ROW = 2048  # target row length (values)


def long_rows(values: np.ndarray, *per_channel):
    """(values as rows of r*C, per-channel arrays tiled r times); scalars and None pass as they
    are, and anything that is not per-channel along the last axis leaves everything unchanged.
    Reshape the result back to values.shape."""
    c = values.shape[-1] if values.ndim else 1
    r = 1
    while r * c * 2 <= ROW and values.size % (r * c * 2) == 0:
        r *= 2
    if r == 1 or any(
        v is not None and np.ndim(v) and (np.ndim(v) > 1 or np.shape(v)[-1] != c)
        for v in per_channel
    ):
        return (values, *per_channel)
    tiled = tuple(v if v is None or not np.ndim(v) else np.tile(v, r) for v in per_channel)
    return (values.reshape(-1, r * c), *tiled)


BLOCK = 1 << 18  # values per block of a multi-pass per-channel computation: 2 MB of float64


def by_blocks(fn, values: np.ndarray, dtype) -> np.ndarray:
    """fn applied to blocks of whole rows of `values` (..., C), results (of `dtype`, the same
    shape as each block) gathered in one array. A computation of several numpy passes then keeps
    its temporaries in the L2 cache: twice as fast as passes over a whole layer's output."""
    c = values.shape[-1] if values.ndim else 1
    rows = values.reshape(-1, c)
    step = 1 << max(0, (BLOCK // max(c, 1)).bit_length() - 1)  # a power of two: long_rows
    if rows.shape[0] <= step:
        return np.asarray(fn(values), dtype=dtype)
    out = np.empty(rows.shape, dtype=dtype)
    for s in range(0, rows.shape[0], step):
        out[s : s + step] = fn(rows[s : s + step])
    return out.reshape(values.shape)
