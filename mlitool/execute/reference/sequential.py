"""Float32 dot products added one term at a time, in a given order, as TFLite's reference
kernels add them (`float total = 0.f; total += a * b;` compiled without FMA: each product rounded
to float32, then each sum): the same bits as LiteRT's BUILTIN_REF resolver, not merely float32
rounding of the exact sum (`repro.matmul`, float mode's order-free sums).

Vectorized over the outputs: the Python loop runs over the terms (K) and over blocks of the
output that stay in cache, never over output elements. Every step is an element-wise float32
multiply or add, correctly rounded by IEEE 754, so the result is the same on any CPU.
"""

from __future__ import annotations

import numpy as np

f32 = np.float32
_BLOCK = 1 << 15  # accumulators per block: the block and its products stay in L1 / L2
_TERMS = 1 << 18  # products formed at once when every output fits one block


def ordered_matmul(x: np.ndarray, w: np.ndarray, acc: np.ndarray | None = None) -> np.ndarray:
    """x (..., M, K) @ w (..., K, N) as float32: each output starts at +0.0 (or at `acc`, (M, N))
    and adds x[m, k] * w[k, n] for k = 0, 1, ..., K - 1 in turn. Leading (batch) dimensions
    broadcast as np.matmul's do."""
    x, w = np.asarray(x, f32), np.asarray(w, f32)
    if x.ndim > 2 or w.ndim > 2:
        return _ordered_batched(x, w)
    m, n = x.shape[0], w.shape[1]
    if n < m:  # the longer output axis innermost: numpy's loops are slow along short axes
        start = None if acc is None else np.asarray(acc, f32).T
        return np.ascontiguousarray(_ordered(w.T, x.T, start).T)
    return _ordered(x, w, acc)


def _ordered(x: np.ndarray, w: np.ndarray, acc: np.ndarray | None) -> np.ndarray:
    m, k_terms = x.shape
    n = w.shape[1]
    out = np.zeros((m, n), f32) if acc is None else np.array(acc, f32, order="C")
    if out.size == 0 or k_terms == 0:
        return out
    w = np.ascontiguousarray(w)
    if m * n <= _BLOCK and k_terms > 1:
        return _few_outputs(x, w, out)
    rows = max(1, min(m, _BLOCK // n))
    cols = min(n, max(1, _BLOCK // rows))
    tmp = np.empty((rows, cols), f32)
    for r in range(0, m, rows):
        xb = x[r : r + rows]
        for c in range(0, n, cols):
            block = out[r : r + rows, c : c + cols]
            prod = tmp[: block.shape[0], : block.shape[1]]
            for k in range(k_terms):
                np.multiply(xb[:, k, None], w[k, c : c + cols], out=prod)
                block += prod
    return out


def _few_outputs(x: np.ndarray, w: np.ndarray, out: np.ndarray) -> np.ndarray:
    """`_ordered` for outputs that fit one block (a fully connected layer of a few samples): the
    products of a run of terms formed in one step, then added in turn; one numpy call per term
    instead of two (the calls, not the arithmetic, cost the time here)."""
    m, n = out.shape
    step = max(1, _TERMS // (m * n))
    prods = np.empty((min(step, x.shape[1]), m, n), f32)
    for k in range(0, x.shape[1], step):
        wk = w[k : k + step]
        run = prods[: len(wk)]
        np.multiply(x[:, k : k + step].T[:, :, None], wk[:, None, :], out=run)
        for p in run:
            out += p
    return out


def _ordered_batched(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The batched product, one step per term over every batch at once (batches are small)."""
    if x.ndim == 1 or w.ndim == 1:
        raise ValueError("ordered_matmul: batched operands need two dimensions each")
    shape = np.broadcast_shapes(x.shape[:-2], w.shape[:-2]) + (x.shape[-2], w.shape[-1])
    out = np.zeros(shape, f32)
    prod = np.empty(shape, f32)
    for k in range(x.shape[-1]):
        np.multiply(x[..., :, k, None], w[..., None, k, :], out=prod)
        out += prod
    return out
