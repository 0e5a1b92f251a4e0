"""`tflite` mode kernels of the activations: TFLite's integer reference arithmetic (int8; int16 through
`sigmoid16.py` / `softmax16.py`), float tensors through the float kernels."""

from __future__ import annotations

import numpy as np

from mlitool.execute.reference import fixedpoint as fp
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.kernel_common import is_float
from mlitool.execute.reference.params import (
    scale_of,
    zp_of,
)
from mlitool.ops.activation import float_mode as float_ops
from mlitool.ops.activation.sigmoid16 import logistic_int16, tanh_int16
from mlitool.ops.activation.softmax16 import softmax_int16

f32 = np.float32


def _relu_x(c: Call, act_min: float, act_max: float | None, float_kernel):
    """QuantizedReluX: requantize in→out with MultiplyByQuantizedMultiplier, then clamp."""
    in_t, out_t = c.tin(0), c.tout()
    if is_float(in_t):
        return float_kernel(c)
    info = np.iinfo(np.dtype(out_t.dtype))
    so, zo = f32(scale_of(out_t)), zp_of(out_t)
    lo = max(int(info.min), zo + int(fp.round_away_f32(f32(act_min) / so)))
    hi = (
        int(info.max)
        if act_max is None
        else min(int(info.max), zo + int(fp.round_away_f32(f32(act_max) / so)))
    )
    # ReluPrepare divides the float scales in float32.
    m, s = fp.quantize_multiplier(np.float64(f32(scale_of(in_t)) / so))
    x = c.x(0).astype(np.int64) - zp_of(in_t)
    y = fp.mul_by_quantized_multiplier(x, m, s) + zo
    return [np.clip(y, lo, hi).astype(out_t.dtype)]


def relu(c: Call):
    return _relu_x(c, 0.0, None, float_ops.relu)


def relu6(c: Call):
    return _relu_x(c, 0.0, 6.0, float_ops.relu6)


def relu_n1_to_1(c: Call):
    return _relu_x(c, -1.0, 1.0, float_ops.relu_n1_to_1)


def leaky_relu(c: Call):
    in_t, out_t = c.tin(0), c.tout()
    if is_float(in_t):
        return float_ops.leaky_relu(c)
    alpha = f32(c.opt("alpha", 0.2))
    si, so = f32(scale_of(in_t)), f32(scale_of(out_t))
    m_a, s_a = fp.quantize_multiplier(np.float64(si * alpha / so))
    m_i, s_i = fp.quantize_multiplier(np.float64(si / so))  # float32 division, as Prepare
    x = c.x(0).astype(np.int64) - zp_of(in_t)
    pos = fp.mul_by_quantized_multiplier(x, m_i, s_i)
    neg = fp.mul_by_quantized_multiplier(x, m_a, s_a)
    info = np.iinfo(np.dtype(out_t.dtype))
    y = np.where(x >= 0, pos, neg) + zp_of(out_t)
    return [np.clip(y, info.min, info.max).astype(out_t.dtype)]


def prelu(c: Call):
    in_t, a_t, out_t = c.tin(0), c.tin(1), c.tout()
    if is_float(in_t):
        return float_ops.prelu(c)
    si, sa, so = f32(scale_of(in_t)), f32(scale_of(a_t)), f32(scale_of(out_t))
    m1, s1 = fp.quantize_multiplier(np.float64(si / so))  # float32 math, as Prepare
    m2, s2 = fp.quantize_multiplier(np.float64(si * sa / so))
    x, alpha = c.aligned(0, 1)
    x = x.astype(np.int64) - zp_of(in_t)
    alpha = alpha.astype(np.int64) - zp_of(a_t)
    pos = fp.mul_by_quantized_multiplier(x, m1, s1)
    neg = fp.mul_by_quantized_multiplier(x * alpha, m2, s2)
    info = np.iinfo(np.dtype(out_t.dtype))
    y = np.where(x >= 0, pos, neg) + zp_of(out_t)
    return [np.clip(y, info.min, info.max).astype(out_t.dtype)]


def _lut(c: Call, fn, float_kernel):
    """LUTPopulate<int8>: float32 transform of each of the 256 inputs, roundf, clamp."""
    in_t, out_t = c.tin(0), c.tout()
    if is_float(in_t):
        return float_kernel(c)
    if in_t.dtype != "int8":
        raise c.unsupported(f"{in_t.dtype} {c.op.type}")
    vals = np.arange(-128, 128, dtype=np.int64)
    deq = f32(scale_of(in_t)) * (vals - zp_of(in_t)).astype(f32)
    y = fn(deq.astype(f32)).astype(f32)
    inv = f32(1) / f32(scale_of(out_t))
    q = fp.round_away_f32(y * inv).astype(np.int64) + zp_of(out_t)
    table = np.clip(q, -128, 127).astype(np.int8)
    return [table[c.x(0).astype(np.int64) + 128]]


def _sigmoid_f32(v: np.ndarray) -> np.ndarray:
    one = f32(1)
    return one / (one + _expf(-v))


def _expf(v: np.ndarray) -> np.ndarray:
    # glibc expf is correctly rounded in practice; float64 exp rounded to float32 matches it.
    return np.exp(v.astype(np.float64)).astype(f32)


def _tanhf(v: np.ndarray) -> np.ndarray:
    return np.tanh(v.astype(np.float64)).astype(f32)


def logistic(c: Call):
    if c.tin(0).dtype == "int16":
        return logistic_int16(c)
    return _lut(c, _sigmoid_f32, float_ops.logistic)


def tanh(c: Call):
    if c.tin(0).dtype == "int16":
        return tanh_int16(c)
    return _lut(c, _tanhf, float_ops.tanh)


def softmax(c: Call):
    in_t, out_t = c.tin(0), c.tout()
    if is_float(in_t):
        return float_ops.softmax(c)
    if in_t.dtype == "int16" and out_t.dtype == "int16":
        return softmax_int16(c)
    if in_t.dtype != "int8" or out_t.dtype != "int8":
        raise c.unsupported(f"{in_t.dtype}→{out_t.dtype} SOFTMAX")
    beta = np.float64(f32(c.opt("beta", 1.0)))
    int_bits = 5
    real = min(
        beta * np.float64(scale_of(in_t)) * float(1 << (31 - int_bits)), float((1 << 31) - 1)
    )
    mult, left_shift = (int(v) for v in fp.quantize_multiplier(real))
    radius = np.floor(
        1.0 * ((1 << int_bits) - 1) * float(1 << (31 - int_bits)) / float(1 << left_shift)
    )
    diff_min = -int(radius)

    x = c.x(0).astype(np.int64)
    diff = x - x.max(axis=-1, keepdims=True)
    use = diff >= diff_min
    rescaled = fp.mul_greater_than_one(np.where(use, diff, 0), mult, left_shift)
    exps = fp.exp_on_negative_values(rescaled, int_bits)
    acc_bits = 12
    sum_of_exps = np.where(use, fp.rescale(exps, 0, acc_bits), 0).sum(axis=-1, keepdims=True)
    shifted_scale, bits_over_unit = fp.get_reciprocal(sum_of_exps, acc_bits)
    exponent = bits_over_unit + 31 - 8
    unsat = fp.rdbpot(fp.srdhm(shifted_scale, exps), exponent)
    y = np.clip(unsat - 128, -128, 127)
    return [np.where(use, y, -128).astype(np.int8)]


def l2_normalization(c: Call):
    in_t = c.tin(0)
    if is_float(in_t):
        return float_ops.l2_normalization(c)
    if in_t.dtype != "int8":
        raise c.unsupported(f"{in_t.dtype} L2_NORMALIZATION")
    x = c.x(0).astype(np.int64) - zp_of(in_t)
    acc = (x * x).sum(axis=-1, keepdims=True)
    mult, shift = fp.inv_sqrt_multiplier(acc, -1)
    y = fp.mul_by_quantized_multiplier(x, mult, shift + 7)
    return [np.clip(y, -128, 127).astype(np.int8)]
