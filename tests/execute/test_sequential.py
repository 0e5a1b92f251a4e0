"""`sequential.ordered_matmul`: float32 dot products added term by term (TFLite's reference
kernels' `total += a * b`), against a scalar loop of float32 operations written out here, for
both output layouts, cache blocks, a starting accumulator and broadcast batch dimensions."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.reference import sequential
from mlitool.execute.reference.sequential import ordered_matmul

f32 = np.float32


def _scalar_loop(x: np.ndarray, w: np.ndarray, acc: np.ndarray | None = None) -> np.ndarray:
    """`float total = start; for k: total += x[m][k] * w[k][n];` one float32 scalar at a time."""
    m, k = x.shape
    n = w.shape[1]
    out = np.zeros((m, n), f32) if acc is None else acc.astype(f32).copy()
    for i in range(m):
        for j in range(n):
            total = out[i, j]
            for t in range(k):
                total = f32(total + f32(x[i, t] * w[t, j]))
            out[i, j] = total
    return out


def _operands(m, k, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, (m, k)).astype(f32)
    w = rng.uniform(-1, 1, (k, n)).astype(f32)
    return x, w


# (M, K, N): wide outputs, tall outputs (computed transposed), one row, one column
@pytest.mark.parametrize("shape", [(3, 40, 17), (29, 33, 2), (1, 64, 5), (7, 50, 1)])
def test_equals_the_scalar_loop_bit_for_bit(shape):
    x, w = _operands(*shape, seed=shape[0])
    want = _scalar_loop(x, w)
    got = ordered_matmul(x, w)
    assert got.dtype == f32 and got.flags.c_contiguous
    assert got.tobytes() == want.tobytes()
    # the order matters: float64 sums rounded once differ somewhere (the test can fail)
    assert (np.matmul(x.astype(np.float64), w.astype(np.float64)).astype(f32) != want).any()


def test_blocks_and_a_starting_accumulator(monkeypatch):
    monkeypatch.setattr(sequential, "_BLOCK", 6)  # several row and column blocks
    x, w = _operands(5, 21, 13, seed=1)
    acc = np.random.default_rng(2).uniform(-3, 3, (5, 13)).astype(f32)
    assert ordered_matmul(x, w, acc).tobytes() == _scalar_loop(x, w, acc).tobytes()
    x2, w2 = _operands(13, 21, 4, seed=3)  # transposed layout, with a start
    acc2 = np.random.default_rng(4).uniform(-3, 3, (13, 4)).astype(f32)
    assert ordered_matmul(x2, w2, acc2).tobytes() == _scalar_loop(x2, w2, acc2).tobytes()


def test_broadcast_batches():
    rng = np.random.default_rng(5)
    x = rng.uniform(-2, 2, (2, 1, 3, 30)).astype(f32)
    w = rng.uniform(-1, 1, (1, 4, 30, 5)).astype(f32)
    got = ordered_matmul(x, w)
    assert got.shape == (2, 4, 3, 5)
    for a in range(2):
        for b in range(4):
            assert got[a, b].tobytes() == _scalar_loop(x[a, 0], w[0, b]).tobytes()


def test_empty_sums_are_zero():
    assert ordered_matmul(np.zeros((3, 0), f32), np.zeros((0, 2), f32)).tolist() == [[0, 0]] * 3
