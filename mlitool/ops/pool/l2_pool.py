"""L2_POOL_2D (TFLite and TFLite Micro: float32 only): TFLite's float32 kernel, each window's
squares summed in float32 one after the other (rows, then columns; padding outside the input
not counted), then sqrt(sum / count) and the fused activation. tflite mode refuses an int8 one
(no TFLite kernel to equal)."""

from __future__ import annotations

import numpy as np

from mlitool.execute import windows as win
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.kernel_common import activated, is_float, merge_batch, real_input

f32 = np.float32


def float_l2_pool_2d(c: Call):
    x = merge_batch(real_input(c, 0)).astype(f32)
    kh, kw = c.opt("filter_h"), c.opt("filter_w")
    oh, ow, pt, pl, sh, sw, _, _ = win.geometry(c.op.options, x.shape[1], x.shape[2], kh, kw)
    v = win.windows(x, kh, kw, oh, ow, pt, pl, sh, sw, value=0)
    total = np.zeros(v.shape[:4], f32)
    for i in range(kh):
        for j in range(kw):
            total = (total + v[..., i, j] * v[..., i, j]).astype(f32)
    count = win.valid_counts(x.shape[1], x.shape[2], kh, kw, oh, ow, pt, pl, sh, sw)
    return activated(c, np.sqrt(total / count[None, :, :, None].astype(f32)).astype(f32))


def tflite_l2_pool_2d(c: Call):
    if not is_float(c.tin(0)):
        raise c.unsupported(f"{c.tin(0).dtype} L2_POOL_2D (TFLite's kernel takes float32 only)")
    return float_l2_pool_2d(c)
