"""Exact accumulation for the MLI MAC kernels: products summed by BLAS in float32 (a long reduction
cut into chunks that each stay below 2^24, see `exact_sums`) or float64 whenever every partial sum
is provably an integer that type represents, in int64 otherwise; convolution sums by im2col in
blocks, per tap for depthwise and grouped convolutions.
"""

from __future__ import annotations

import numpy as np

from mlitool.execute.exact_sums import exact_matmul, max_abs, sum_dtype
from mlitool.execute.mli.kernels._window import Window
from mlitool.execute.windows import tap_sum

_CHUNK_BYTES = 1 << 25  # im2col block size: bounds memory, keeps the matmul cache friendly


def term_bound(x: np.ndarray, w: np.ndarray) -> int:
    """max |x| * max |w|: the largest product a sum of x and w terms can hold."""
    return max_abs(x) * max_abs(w)


def matmul_exact(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """x (..., N) @ w (N, M), exactly (int64, or a float type holding the integers exactly)."""
    return exact_matmul(x, w, term_bound(x, w))


def conv_sums(
    x: np.ndarray, w: np.ndarray, win: Window, groups: int, zp: int = 0, x_bound: int | None = None
) -> np.ndarray:
    """Exact sums over the valid taps of x - zp: x (B, H, W, Ci), w (Kh, Kw, Ci/g, Co).

    Taps outside the input contribute 0 (MLI skips them; SA8 subtracts the input zero point
    `zp`, so padding is real zero). `x_bound` bounds |x - zp| when the caller knows it (else it
    is read off the data). x - zp is formed once, in the type the sums run in, after padding
    (the raw integers, padded with zp) so that the padding copies the narrow type.
    Returns (B, Ho, Wo, Co) exact integer sums (int64, or a float type holding them exactly).
    """
    kh_n, kw_n, cig, co = w.shape
    b = x.shape[0]
    ho, wo = win.out
    if x_bound is None:
        x_bound = max(int(x.max(initial=zp)) - zp, zp - int(x.min(initial=zp))) if x.size else 0
    bound = x_bound * max_abs(w)
    dtype = sum_dtype(kh_n * kw_n * cig, bound)
    fdtype = np.float32 if dtype != np.int64 else dtype  # sums chunked in float32
    if (
        groups == 1
        and (kh_n, kw_n) == (1, 1)
        and win.stride == (1, 1)
        and win.pad == (0, 0)
        and tuple(win.out) == tuple(x.shape[1:3])
    ):
        # pointwise convolution: the input already is the im2col matrix
        xs = np.subtract(x.reshape(-1, x.shape[3]), zp, dtype=fdtype)
        return exact_matmul(xs, w.reshape(-1, co), bound).reshape(b, ho, wo, co)
    if zp and not np.can_cast(np.min_scalar_type(zp), x.dtype):
        x = x.astype(np.int64)
    xp = win.pad_input(x, zp)
    if groups == 1:
        # im2col in blocks of samples: one matmul of (n*Ho*Wo, Kh*Kw*Ci) @ (Kh*Kw*Ci, Co) each.
        xp = np.subtract(xp, zp, dtype=fdtype)
        wmat = w.reshape(-1, co)
        per_sample = max(ho * wo * wmat.shape[0] * 4, 1)
        step = max(1, _CHUNK_BYTES // per_sample)
        acc = None
        for s in range(0, b, step):
            cols = np.concatenate([tap for _, _, tap in win.taps(xp[s : s + step])], axis=-1)
            part = exact_matmul(cols.reshape(-1, wmat.shape[0]), wmat, bound)
            if acc is None:
                acc = np.empty((b, ho, wo, co), dtype=part.dtype)
            acc[s : s + step] = part.reshape(-1, ho, wo, co)
        return acc
    wd = w.astype(dtype)
    cog = co // groups
    if cig == 1 and cog == 1:  # depthwise: one product per channel, on the views
        return tap_sum(xp, wd[:, :, 0, :], win.stride, win.dilation, (ho, wo), dtype, zp)
    xp = np.subtract(xp, zp, dtype=dtype)
    n = b * ho * wo
    acc = np.zeros((n, co), dtype=dtype)
    for kh, kw, tap in win.taps(xp):
        tap = tap.reshape(n, groups * cig)
        wt = wd[kh, kw]
        xg = tap.reshape(n, groups, cig).transpose(1, 0, 2)
        wg = wt.reshape(cig, groups, cog).transpose(1, 0, 2)
        acc += np.matmul(xg, wg).transpose(1, 0, 2).reshape(n, co)
    return acc.reshape(b, ho, wo, co)
