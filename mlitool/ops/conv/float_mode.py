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


def conv_2d(c: Call):
    x = merge_batch(real_input(c, "input"))
    w = c.const("weights").astype(f32)
    o, kh, kw, ci = w.shape
    if x.shape[3] != ci:
        raise UnsupportedError(f"{c.op.label}: grouped convolution")
    geom = win.geometry(c.op.options, x.shape[1], x.shape[2], kh, kw)
    w = w.reshape(o, -1).T
    if not repro.finite(x, w):
        return activated(c, plus_bias(c, matmul(win.im2col(x, kh, kw, geom), w)))
    # The grid of each sample's input, before im2col: a K-times smaller array to round
    xi, scale = repro.on_grid(x, w.shape[0])
    rows = np.repeat(scale, geom[0] * geom[1])
    return activated(c, plus_bias(c, repro.grid_matmul(win.im2col(xi, kh, kw, geom), rows, w)))


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
