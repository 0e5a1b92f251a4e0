"""`float` mode kernels of CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV and FULLY_CONNECTED: float32
sums in the order TFLite's reference kernels add (`repro.matmul`)."""

from __future__ import annotations

import numpy as np

from mlitool.errors import UnsupportedError
from mlitool.execute import windows as win
from mlitool.execute.reference import repro
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.kernel_common import (
    activated,
    merge_batch,
    plus_bias,
    real_bias,
    real_input,
)
from mlitool.execute.reference.repro import matmul

f32 = np.float32


def groups(c: Call, x: np.ndarray, w: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(input channels, filters) of each group of a CONV_2D: one group, or as many as the filter
    depth divides the input depth (a grouped convolution, Keras `groups`; LiteRT's kernels run
    it, each group's filters over its own slice of the input channels)."""
    o, ci = w.shape[0], w.shape[3]
    n = x.shape[3] // ci
    if ci * n != x.shape[3] or o % n:
        raise UnsupportedError(
            f"{c.op.label}: filter depth {ci} and {o} filters do not group {x.shape[3]} channels"
        )
    og = o // n
    return [(x[..., g * ci : (g + 1) * ci], w[g * og : (g + 1) * og]) for g in range(n)]


def conv_2d(c: Call):
    x = merge_batch(real_input(c, "input"))
    w = c.const("weights").astype(f32)
    kh, kw = w.shape[1:3]
    geom = win.geometry(c.op.options, x.shape[1], x.shape[2], kh, kw)
    sums = [_conv_sums(xg, wg, kh, kw, geom) for xg, wg in groups(c, x, w)]
    return activated(c, plus_bias(c, np.concatenate(sums, axis=-1)))


def _conv_sums(x: np.ndarray, w: np.ndarray, kh: int, kw: int, geom) -> np.ndarray:
    """The float32 sums of one conv (of one group) in TFLite's order, before the bias."""
    w = w.reshape(len(w), -1).T
    if not repro.finite(x, w):
        return matmul(win.im2col(x, kh, kw, geom), w)
    # The grid of each sample's input, before im2col: a K-times smaller array to round
    xi, scale = repro.on_grid(x, w.shape[0])
    rows = np.repeat(scale, geom[0] * geom[1])
    return repro.grid_matmul(win.im2col(xi, kh, kw, geom), rows, w)


def depthwise_conv_2d(c: Call):
    x = merge_batch(real_input(c, "input"))
    w = c.const("weights").astype(f32)
    return activated(c, plus_bias(c, win.depthwise_sum(x, w, c.op.options)))


def transpose_conv(c: Call):
    """TRANSPOSE_CONV: inputs output_shape, weights (O, KH, KW, I), input, optional bias."""
    x = merge_batch(real_input(c, "input"))
    w = c.const("weights").astype(f32)
    out_h, out_w = c.tout().shape[1:3]
    y = win.transpose_conv_sum(x, w, c.op.options, out_h, out_w, matmul) + real_bias(c)
    return activated(c, y)


def fully_connected(c: Call):
    w = c.const("weights").astype(f32)
    depth = w.shape[-1]
    x = real_input(c, "input").reshape(-1, depth)
    return activated(c, plus_bias(c, matmul(x, w.reshape(-1, depth).T)))
