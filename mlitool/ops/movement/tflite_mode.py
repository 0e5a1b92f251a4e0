"""`tflite` mode kernels of CONCATENATION and PAD(V2): TFLite's requantization of each input and the
quantized padding value."""

from __future__ import annotations

import numpy as np

from mlitool.execute.reference import fixedpoint as fp
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.kernel_common import is_float
from mlitool.execute.reference.params import (
    activation_range,
    scale_of,
    zp_of,
)
from mlitool.ops.movement import float_mode as float_ops
from mlitool.ops.movement.layout import concat_parts, pad_with

f32 = np.float32


def concatenation(c: Call):
    out_t = c.tout()
    if is_float(out_t):
        return float_ops.concatenation(c)
    if out_t.quant is None:  # int32 shape vectors: nothing to requantize
        return [concat_parts(c, [c.x(i) for i in range(len(c.op.inputs))])]
    parts = []
    so, zo = f32(scale_of(out_t)), zp_of(out_t)
    for i in range(len(c.op.inputs)):
        t, x = c.tin(i), c.x(i)
        if t.quant is None or (scale_of(t) == scale_of(out_t) and zp_of(t) == zo):
            parts.append(x)
            continue
        # ConcatenationWithScaling (TFLite's int8 kernel rejects mixed scales; uint8 and TFLM
        # rescale like this): round(q * scale + bias) in float32.
        scale = f32(scale_of(t)) * (f32(1) / so)
        bias = f32(-zp_of(t)) * scale
        y = fp.round_away_f32(x.astype(f32) * scale + bias).astype(np.int64) + zo
        info = np.iinfo(np.dtype(out_t.dtype))
        parts.append(np.clip(y, info.min, info.max).astype(out_t.dtype))
    y = concat_parts(c, parts)
    lo, hi = activation_range(out_t, c.opt("fused_activation"))
    return [np.clip(y, lo, hi).astype(out_t.dtype)]


def pad(c: Call):
    out_t = c.tout()
    if is_float(out_t):
        return float_ops.pad(c)
    value = zp_of(out_t)
    if c.has(2):
        value = int(np.asarray(c.const(2)).reshape(-1)[0])
    return pad_with(c, value)
