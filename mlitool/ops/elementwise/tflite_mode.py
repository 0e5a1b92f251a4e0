"""`tflite` mode kernels of ADD, SUB, MUL, MAXIMUM, MINIMUM: TFLite's integer reference arithmetic."""

from __future__ import annotations

import numpy as np

from mlitool.execute.reference import fixedpoint as fp
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.kernel_common import is_float
from mlitool.execute.reference.params import (
    finish,
    scale_of,
    zp_of,
)
from mlitool.ops.elementwise import float_mode as float_ops

f32 = np.float32


def _add_sub(c: Call, sign: int):
    t1, t2, out_t = c.tin(0), c.tin(1), c.tout()
    if is_float(t1):
        return float_ops.add(c) if sign > 0 else float_ops.sub(c)
    if out_t.dtype not in ("int8", "uint8", "int16"):
        raise c.unsupported(f"{out_t.dtype} {c.op.type}")
    if out_t.dtype == "int16" and c.opt("pot_scale_int16", True):
        raise c.unsupported(f"int16 {c.op.type} with power-of-two scales (pot_scale_int16)")
    left_shift = 15 if out_t.dtype == "int16" else 20  # 16x8 general-scale path: 15
    s1, s2, so = f32(scale_of(t1)), f32(scale_of(t2)), f32(scale_of(out_t))
    twice_max = np.float64(f32(2) * max(s1, s2))
    m1, sh1 = fp.quantize_multiplier(np.float64(s1) / twice_max)
    m2, sh2 = fp.quantize_multiplier(np.float64(s2) / twice_max)
    mo, sho = fp.quantize_multiplier(twice_max / np.float64(f32(1 << left_shift) * so))
    a, b = c.aligned(0, 1)
    a = a.astype(np.int64) - zp_of(t1)
    b = b.astype(np.int64) - zp_of(t2)
    sa = fp.mul_smaller_than_one(a << left_shift, m1, sh1)
    sb = fp.mul_smaller_than_one(b << left_shift, m2, sh2)
    raw = sa + sb if sign > 0 else sa - sb
    if sho > 0:  # SUB allows an output multiplier above one
        out = fp.mul_by_quantized_multiplier(raw, mo, sho)
    else:
        out = fp.mul_smaller_than_one(raw, mo, sho)
    return [finish(out, out_t, c.opt("fused_activation"))]


def add(c: Call):
    return _add_sub(c, +1)


def sub(c: Call):
    return _add_sub(c, -1)


def mul(c: Call):
    t1, t2, out_t = c.tin(0), c.tin(1), c.tout()
    if is_float(t1):
        return float_ops.mul(c)
    real = np.float64(f32(scale_of(t1)) * f32(scale_of(t2)) / f32(scale_of(out_t)))
    m, s = fp.quantize_multiplier(real)
    a, b = c.aligned(0, 1)
    a = a.astype(np.int64) - zp_of(t1)
    b = b.astype(np.int64) - zp_of(t2)
    out = fp.mul_by_quantized_multiplier(a * b, m, s)
    return [finish(out, out_t, c.opt("fused_activation"))]


def _min_max(c: Call, fn, float_kernel):
    if is_float(c.tin(0)):
        return float_kernel(c)
    return [fn(*c.aligned(0, 1)).astype(c.tout().dtype)]


def maximum(c: Call):
    return _min_max(c, np.maximum, float_ops.maximum)


def minimum(c: Call):
    return _min_max(c, np.minimum, float_ops.minimum)
