"""`float` mode kernels of the pools over float32 windows."""

from __future__ import annotations

import numpy as np

from mlitool.execute import windows as win
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.kernel_common import activated, merge_batch, real_input

f32 = np.float32


def _pool(c: Call, value):
    x = merge_batch(real_input(c, 0))
    kh, kw, geom = win.pool_geometry(
        c.op.options, x.shape[1], x.shape[2], c.opt("filter_h"), c.opt("filter_w")
    )
    oh, ow, pt, pl, sh, sw, _, _ = geom
    v = win.windows(x, kh, kw, oh, ow, pt, pl, sh, sw, value=value)
    return x, v, (kh, kw, oh, ow, pt, pl, sh, sw)


def average_pool_2d(c: Call):
    x, v, (kh, kw, oh, ow, pt, pl, sh, sw) = _pool(c, 0)
    count = win.valid_counts(x.shape[1], x.shape[2], kh, kw, oh, ow, pt, pl, sh, sw)
    return activated(c, v.sum(axis=(4, 5)) / count[None, :, :, None].astype(f32))


def max_pool_2d(c: Call):
    _, v, _ = _pool(c, -np.inf)
    return activated(c, v.max(axis=(4, 5)))
