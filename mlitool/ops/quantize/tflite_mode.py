"""`tflite` mode kernels of QUANTIZE and DEQUANTIZE: TFLite's affine (re)quantization."""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.execute.reference import fixedpoint as fp
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.kernel_common import is_float
from mlitool.execute.reference.params import (
    affine_quantize,
    quant_of,
    scale_of,
    zp_of,
)


def quantize(c: Call):
    in_t, out_t = c.tin(0), c.tout()
    if is_float(in_t):
        return [affine_quantize(c.x(0), out_t)]
    m, s = fp.quantize_multiplier(np.float64(scale_of(in_t)) / np.float64(scale_of(out_t)))
    x = c.x(0).astype(np.int64) - zp_of(in_t)
    y = fp.mul_by_quantized_multiplier(x, m, s) + zp_of(out_t)
    info = np.iinfo(np.dtype(out_t.dtype))
    return [np.clip(y, info.min, info.max).astype(out_t.dtype)]


def dequantize(c: Call):
    in_t, out_t = c.tin(0), c.tout()
    if is_float(in_t):
        return [c.x(0).astype(out_t.dtype)]
    q = quant_of(in_t)
    x = c.x(0)
    if q.per_axis:  # the sample axis shifts the quantized axis by one
        q = ir.Quant(q.scale, q.zero_point, q.axis + 1)
    return [q.dequantize(x).astype(out_t.dtype)]
