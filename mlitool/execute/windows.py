"""Sliding-window geometry shared by the float and tflite kernels (TFLite's padding rules).

Arrays here are NHWC with the batch axis holding samples × model batch (the walker merges them).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from mlitool.errors import UnsupportedError
from mlitool.geometry import safe_pool_axis, tflite_padding, transpose_conv_padding

_TAP_BLOCK_BYTES = 1 << 21  # depthwise sums per block of samples: fits the L2 cache


def geometry(op_options: dict, in_h: int, in_w: int, k_h: int, k_w: int):
    """(out_h, out_w, pad_top, pad_left, stride_h, stride_w, dil_h, dil_w) of a conv/pool op."""
    sh, sw = op_options.get("stride_h", 1), op_options.get("stride_w", 1)
    dh, dw = op_options.get("dilation_h", 1), op_options.get("dilation_w", 1)
    padding = op_options.get("padding", "VALID")
    oh, pt, _ = tflite_padding(padding, in_h, k_h, sh, dh)
    ow, pl, _ = tflite_padding(padding, in_w, k_w, sw, dw)
    return oh, ow, pt, pl, sh, sw, dh, dw


def pool_geometry(op_options: dict, in_h: int, in_w: int, k_h: int, k_w: int):
    """(k_h, k_w, geometry) of a pooling op: `geometry`, but where a window is wider than twice
    the input (LiteRT runs SAME windows of 65536 over a few columns) the equivalent narrower
    window that covers the same input elements (pooling counts valid elements only), so the
    padded input stays small; UnsupportedError when there is none."""
    geom = geometry(op_options, in_h, in_w, k_h, k_w)
    if k_h <= 2 * in_h + 1 and k_w <= 2 * in_w + 1:
        return k_h, k_w, geom
    oh, ow, pt, pl, sh, sw, dh, dw = geom
    axes = []
    for n, k, s, before, out in ((in_h, k_h, sh, pt, oh), (in_w, k_w, sw, pl, ow)):
        after = max((out - 1) * s + k - n - before, 0)
        safe = safe_pool_axis(n, k, s, before, after, out) if k > 2 * n + 1 else (k, s, before)
        if safe is None or safe[0] > 2 * n + 1:
            raise UnsupportedError(f"pooling window {k} over an input of {n} is too wide to run")
        axes.append(safe[:3])
    (k_h, sh, pt), (k_w, sw, pl) = axes
    return k_h, k_w, (oh, ow, pt, pl, sh, sw, dh, dw)


MOST_PADDING = 1 << 16  # elements of padding on one side of a spatial axis


def pad_hw(x: np.ndarray, top: int, left: int, need_h: int, need_w: int, value=0) -> np.ndarray:
    """Pad axes 1 and 2 of NHWC `x` so it is at least need_h × need_w, `top`/`left` before."""
    bottom = max(need_h - x.shape[1] - top, 0)
    right = max(need_w - x.shape[2] - left, 0)
    if max(top, left, bottom, right) > MOST_PADDING:  # a dilation of 2^31: TFLite's ints overflow
        raise UnsupportedError(
            f"a window that pads the input by {max(top, left, bottom, right)} elements "
            "is too wide to run"
        )
    if top == left == bottom == right == 0:
        return x
    return np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=value)


def windows(
    x: np.ndarray,
    k_h: int,
    k_w: int,
    oh: int,
    ow: int,
    pt: int,
    pl: int,
    sh: int,
    sw: int,
    dh: int = 1,
    dw: int = 1,
    value=0,
) -> np.ndarray:
    """Strided view (B, OH, OW, C, KH, KW) of the padded input's receptive fields."""
    eh, ew = (k_h - 1) * dh + 1, (k_w - 1) * dw + 1
    xp = pad_hw(x, pt, pl, (oh - 1) * sh + eh, (ow - 1) * sw + ew, value)
    v = sliding_window_view(xp, (eh, ew), axis=(1, 2))
    return v[:, : (oh - 1) * sh + 1 : sh, : (ow - 1) * sw + 1 : sw, :, ::dh, ::dw]


def valid_counts(
    in_h: int, in_w: int, k_h: int, k_w: int, oh: int, ow: int, pt: int, pl: int, sh: int, sw: int
) -> np.ndarray:
    """Number of in-bounds taps per output position, (OH, OW) — TFLite pooling divides by it."""
    rows = np.arange(oh) * sh - pt
    cols = np.arange(ow) * sw - pl
    n_r = np.minimum(rows + k_h, in_h) - np.maximum(rows, 0)
    n_c = np.minimum(cols + k_w, in_w) - np.maximum(cols, 0)
    return np.outer(n_r, n_c)


def im2col(x: np.ndarray, k_h: int, k_w: int, geom, value=0) -> np.ndarray:
    """Patch matrix (B*OH*OW, KH*KW*C) in TFLite filter order (kh, kw, c)."""
    oh, ow, pt, pl, sh, sw, dh, dw = geom
    if k_h == k_w == 1 and sh == sw == 1 and pt == pl == 0:
        return x[:, :oh, :ow, :].reshape(-1, x.shape[3])
    v = windows(x, k_h, k_w, oh, ow, pt, pl, sh, sw, dh, dw, value)
    return np.ascontiguousarray(v.transpose(0, 1, 2, 4, 5, 3)).reshape(-1, k_h * k_w * x.shape[3])


def depthwise_sum(x: np.ndarray, w: np.ndarray, options: dict, offset=0, dtype=None) -> np.ndarray:
    """Depthwise convolution sum of NHWC `x` - `offset` and TFLite filter `w` (1, KH, KW, C*M)
    with the op's stride/dilation/padding: Σ over taps of (x[..., c // M] - offset) *
    w[0, kh, kw, c] in `dtype` (default: x's and w's), looping over the taps only; padding is
    x = offset (a zero term)."""
    _, kh, kw, co = w.shape
    mult = co // x.shape[3]
    if mult > 1:
        x = np.repeat(x, mult, axis=3)
    oh, ow, pt, pl, sh, sw, dh, dw = geometry(options, x.shape[1], x.shape[2], kh, kw)
    xp = pad_hw(
        x,
        pt,
        pl,
        (oh - 1) * sh + (kh - 1) * dh + 1,
        (ow - 1) * sw + (kw - 1) * dw + 1,
        value=offset,
    )
    dtype = np.result_type(x, w) if dtype is None else dtype
    return tap_sum(xp, w[0], (sh, sw), (dh, dw), (oh, ow), dtype, offset)


def tap_sum(
    xp: np.ndarray,
    w: np.ndarray,
    stride: tuple[int, int],
    dilation: tuple[int, int],
    out_hw: tuple[int, int],
    dtype,
    offset=0,
) -> np.ndarray:
    """Σ over the kernel taps (i, j) of (xp[:, i*dh + oh*sh, j*dw + ow*sw, c] - offset) * w[i, j, c]:
    the depthwise sum of a padded NHWC input `xp` with weights w (KH, KW, C), as (B, OH, OW, C)
    in `dtype`.

    Each multiply runs along a whole output row (OW*C contiguous values, the weights tiled):
    numpy's loops along a short last axis (C = 16) take twice the time. The input is converted
    to `dtype` (minus `offset`) one block of samples at a time, a strided one split into its `sw`
    column phases so that every tap reads contiguous rows; the block's sums stay in cache."""
    (sh, sw), (dh, dw), (oh, ow) = stride, dilation, out_hw
    b, c = xp.shape[0], xp.shape[3]
    acc = np.empty((b, oh, ow * c), dtype=dtype)
    step = max(1, _TAP_BLOCK_BYTES // max(oh * ow * c * acc.itemsize, 1))
    prod = np.empty((min(step, b), oh, ow * c), dtype=dtype)
    taps = [(i, j, w[i, j]) for i in range(w.shape[0]) for j in range(w.shape[1])]
    tiled = [np.tile(wt.astype(dtype, copy=False), ow) for _, _, wt in taps]
    for s in range(0, b, step):
        block, tmp, xb = acc[s : s + step], prod[: min(step, b - s)], xp[s : s + step]
        if sw == 1 and not offset and xb.dtype == dtype:
            phases = [xb]
        else:
            phases = [np.subtract(xb[:, :, p::sw, :], offset, dtype=dtype) for p in range(sw)]
        for (i, j, _), wt in zip(taps, tiled):
            rows = slice(i * dh, i * dh + (oh - 1) * sh + 1, sh)
            phase, start = phases[(j * dw) % sw], (j * dw) // sw
            tap = phase[:, rows, start : start + ow, :].reshape(len(block), oh, ow * c)
            if i == j == 0:
                np.multiply(tap, wt, out=block)
            else:  # in place: no temporary per tap
                np.multiply(tap, wt, out=tmp)
                block += tmp
    return acc.reshape(b, oh, ow, c)


def transpose_conv_sum(
    x: np.ndarray, w: np.ndarray, options: dict, out_h: int, out_w: int, dot=np.matmul
) -> np.ndarray:
    """TRANSPOSE_CONV sums of NHWC `x` and TFLite filter `w` (O, KH, KW, I) into an
    (B, out_h, out_w, O) output: out[i * stride + k - pad] += x[i] @ w[:, k, :].T, taps that
    land outside the output dropped (TFLite's scatter). One matmul per kernel tap, added to a
    strided slice of an accumulator that spans every reachable position; `dot(a (M, K), b (K, N))`
    computes the products."""
    b, h, wd, _ = x.shape
    o, kh, kw, _ = w.shape
    sh, sw = options.get("stride_h", 1), options.get("stride_w", 1)
    padding = options.get("padding", "SAME")
    pt, _ = transpose_conv_padding(padding, h, out_h, kh, sh)
    pl, _ = transpose_conv_padding(padding, wd, out_w, kw, sw)
    full_h, full_w = max((h - 1) * sh + kh, pt + out_h), max((wd - 1) * sw + kw, pl + out_w)
    acc = np.zeros((b, full_h, full_w, o), dtype=np.result_type(x, w))
    for i in range(kh):
        for j in range(kw):
            acc[:, i : i + (h - 1) * sh + 1 : sh, j : j + (wd - 1) * sw + 1 : sw, :] += dot(
                x.reshape(-1, x.shape[3]), w[:, i, j, :].T
            ).reshape(b, h, wd, o)
    return acc[:, pt : pt + out_h, pl : pl + out_w, :]
