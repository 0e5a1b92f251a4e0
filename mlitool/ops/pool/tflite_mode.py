"""`tflite` mode kernels of the pools: TFLite's integer average (rounded division) and maximum."""

from __future__ import annotations

import numpy as np

from mlitool.execute import windows as win
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.kernel_common import is_float, merge_batch
from mlitool.execute.reference.params import (
    activation_range,
)
from mlitool.ops.pool import float_mode as float_ops


def _pool_setup(c: Call):
    x = merge_batch(c.x(0))
    kh, kw, geom = win.pool_geometry(
        c.op.options, x.shape[1], x.shape[2], c.opt("filter_h"), c.opt("filter_w")
    )
    return x, kh, kw, geom


def average_pool_2d(c: Call):
    if is_float(c.tin(0)):
        return float_ops.average_pool_2d(c)
    x, kh, kw, (oh, ow, pt, pl, sh, sw, _, _) = _pool_setup(c)
    v = win.windows(x.astype(np.int64), kh, kw, oh, ow, pt, pl, sh, sw)
    acc = v.sum(axis=(4, 5))
    count = win.valid_counts(x.shape[1], x.shape[2], kh, kw, oh, ow, pt, pl, sh, sw)[
        None, :, :, None
    ]
    half = count // 2
    # C integer division truncates toward zero.
    num = np.where(acc > 0, acc + half, acc - half)
    q = np.sign(num) * (np.abs(num) // count)
    lo, hi = activation_range(c.tout(), c.opt("fused_activation"))
    return [np.clip(q, lo, hi).astype(c.tout().dtype).reshape(c.out_shape())]


def max_pool_2d(c: Call):
    if is_float(c.tin(0)):
        return float_ops.max_pool_2d(c)
    x, kh, kw, (oh, ow, pt, pl, sh, sw, _, _) = _pool_setup(c)
    lowest = np.iinfo(x.dtype).min
    v = win.windows(x, kh, kw, oh, ow, pt, pl, sh, sw, value=lowest)
    m = v.max(axis=(4, 5)).astype(np.int64)
    lo, hi = activation_range(c.tout(), c.opt("fused_activation"))
    return [np.clip(m, lo, hi).astype(c.tout().dtype).reshape(c.out_shape())]
