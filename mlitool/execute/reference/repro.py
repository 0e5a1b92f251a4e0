"""Float32 arithmetic whose every bit is the same on any CPU, BLAS kernel and batch split: matrix
products (below) and exp / tanh (numpy's own differ with the SIMD level numpy picks for the CPU).

BLAS adds a dot product's terms in an order that depends on the kernel OpenBLAS picks for the CPU
and on the matrix shape (so on how many samples share a call): float32 sums that differ in the
last bits, and calibration ranges (so emitted bytes) that differ between machines. Here x is
rounded to a grid of 2^-a of its sample's largest magnitude (`on_grid`; a >= 24 up to K = 8192,
so float32 samples whose values are within a factor 2 of each other stay exact) and w is split
into two slices of W_BITS bits of its column's largest magnitude: integers whose products, and
every sum of K of them, stay below 2^53, so float64 BLAS computes each one exactly in whatever
order it adds. The two sums are combined element-wise and rounded once to float32. The result is
x @ w to about K * 2^-(a+1) * max|x_sample| * max|w_col|, and depends on its own sample and
column of w alone.
"""

from __future__ import annotations

import math

import numpy as np

W_BITS = 16  # w keeps 2 * 16 bits of its column's largest magnitude


def _pow2_scale(m: np.ndarray, bits: int) -> np.ndarray:
    """The power of two (float64) that maps max magnitudes `m` just below 2^bits."""
    _, e = np.frexp(m)  # m < 2^e
    return np.ldexp(1.0, bits - e)


def x_bits(k: int) -> int:
    """Grid bits of x for a K-term product: K products of |x| <= 2^a and |w| <= 2^W_BITS, and
    every partial sum, are exact in float64 while K * 2^(a + W_BITS) <= 2^53."""
    return 53 - W_BITS - max(k - 1, 0).bit_length()


def on_grid(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(integers, scale): x (N, ...) rounded to x_bits(k) bits of each sample's max |x|, as
    integer-valued float64, and the per-sample power-of-two scale (N,) they carry."""
    scale = _pow2_scale(np.abs(x).reshape(len(x), -1).max(axis=1, initial=0), x_bits(k))
    ints = np.multiply(x, scale.reshape((-1,) + (1,) * (x.ndim - 1)), dtype=np.float64)
    return np.rint(ints, out=ints), scale


def grid_matmul(xi: np.ndarray, x_scale: np.ndarray, w: np.ndarray) -> np.ndarray:
    """xi (M, K) @ w (K, N) as float32 for xi and its row scales (M,) from `on_grid`."""
    n = w.shape[1]
    w_scale = _pow2_scale(np.abs(w).max(axis=0, initial=0), W_BITS)
    s = np.multiply(w, w_scale, dtype=np.float64)
    w_hi = np.rint(s)
    w_lo = np.rint((s - w_hi) * 2.0**W_BITS)  # s - w_hi is exact
    both = xi @ np.concatenate([w_hi, w_lo], axis=1)  # one exact dgemm
    acc = both[:, n:] * 2.0**-W_BITS
    acc += both[:, :n]
    acc /= x_scale[:, None]  # exact: powers of two
    acc /= w_scale
    return acc.astype(np.float32)


def finite(*arrays: np.ndarray) -> bool:
    """Whether every value is finite: the grid needs a finite max (inf and NaN take numpy's
    product, whose result is not finite either)."""
    return all(np.isfinite(a).all() for a in arrays)


def matmul(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """x (M, K) @ w (K, N) as float32, each row of x one sample's (see the module docstring)."""
    if not finite(x, w) or x.size == 0:  # no grid for an empty batch: nothing to add
        return np.matmul(x, w, dtype=np.float32)
    return grid_matmul(*on_grid(x, w.shape[0]), w)


# exp in float64 from +, *, rint and ldexp only (each correctly rounded by IEEE 754, so the same
# on every machine): x = k ln2 + r with |r| <= ln2 / 2, exp(r) by its Taylor series to r^13/13!
# (truncation below 2^-56), then times 2^k built from its bits. Rounded to float32 it is float32's
# exp correctly rounded except within about 2^-50 of a rounding tie.
_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10  # fdlibm's split
_TAYLOR = [1.0 / math.factorial(n) for n in range(13, -1, -1)]


def _exp64(x: np.ndarray) -> np.ndarray:
    """exp of float64 `x` clipped to [-110, 90] (0 and inf once rounded to float32)."""
    v = np.clip(x, -110.0, 90.0)
    k = np.rint(v * (1 / np.log(2.0)))
    r = (v - k * _LN2_HI) - k * _LN2_LO
    p = np.full_like(r, _TAYLOR[0])
    for coef in _TAYLOR[1:]:
        p *= r
        p += coef
    p *= ((np.nan_to_num(k).astype(np.int64) + 1023) << 52).view(np.float64)  # 2^k, exact
    return p


def exp(x: np.ndarray) -> np.ndarray:
    """exp of float32 `x` as float32."""
    return _exp64(np.asarray(x, np.float64)).astype(np.float32)


def tanh(x: np.ndarray) -> np.ndarray:
    """tanh of float32 `x` as float32: (e - 1) / (e + 1) with e = exp(2|x|), and near 0, where
    e - 1 cancels, x - x^3/3 + 2x^5/15 (below 2^-12 the next term is under 2^-75 of x)."""
    x = np.asarray(x, np.float64)
    e = _exp64(2 * np.abs(x))
    big = np.copysign((e - 1) / (e + 1), x)
    xs = np.clip(x, -1.0, 1.0)  # no inf - inf
    x2 = xs * xs
    small = xs - xs * x2 / 3 + 2 * xs * x2 * x2 / 15
    return np.where(np.abs(x) < 2.0**-12, small, big).astype(np.float32)
