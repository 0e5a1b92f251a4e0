"""`tflite` mode kernels: TFLite's integer reference arithmetic (BUILTIN_REF kernels) on int8 models.

Each kernel takes a `call.Call` and returns the batched output arrays. Parameters are derived
exactly as TFLite's Prepare() does (`tflite_params`), so outputs equal the interpreter's
reference kernels bit for bit. Integer sums are exact: float BLAS on integer-valued offsets
(`exact_sums`).
Ops on float tensors (e.g. a float model's QUANTIZE input) use the float kernels. The MAC ops'
kernels are in tflite_mac.py.
"""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.execute import float_ops
from mlitool.execute import tflite_fixedpoint as fp
from mlitool.execute import windows as win
from mlitool.execute.call import Call
from mlitool.execute.layout_ops import concat_parts, pad_with
from mlitool.execute.tflite_params import (
    activation_range,
    affine_quantize,
    finish,
    quant_of,
    scale_of,
    zp_of,
)
from mlitool.execute.tflite_sigmoid16 import logistic_int16, tanh_int16
from mlitool.execute.tflite_softmax16 import softmax_int16

f32 = np.float32


# --------------------------------------------------------------------------------------------
# Helpers


def _merge(x: np.ndarray) -> np.ndarray:
    """(N, B, ...) → (N*B, ...)."""
    return x.reshape((-1,) + x.shape[2:])


def _is_float(t: ir.Tensor) -> bool:
    return np.dtype(t.dtype).kind == "f"


# --------------------------------------------------------------------------------------------
# Pooling


def _pool_setup(c: Call):
    x = _merge(c.x(0))
    kh, kw, geom = win.pool_geometry(
        c.op.options, x.shape[1], x.shape[2], c.opt("filter_h"), c.opt("filter_w")
    )
    return x, kh, kw, geom


def average_pool_2d(c: Call):
    if _is_float(c.tin(0)):
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
    if _is_float(c.tin(0)):
        return float_ops.max_pool_2d(c)
    x, kh, kw, (oh, ow, pt, pl, sh, sw, _, _) = _pool_setup(c)
    lowest = np.iinfo(x.dtype).min
    v = win.windows(x, kh, kw, oh, ow, pt, pl, sh, sw, value=lowest)
    m = v.max(axis=(4, 5)).astype(np.int64)
    lo, hi = activation_range(c.tout(), c.opt("fused_activation"))
    return [np.clip(m, lo, hi).astype(c.tout().dtype).reshape(c.out_shape())]


# --------------------------------------------------------------------------------------------
# Element-wise arithmetic


def _add_sub(c: Call, sign: int):
    t1, t2, out_t = c.tin(0), c.tin(1), c.tout()
    if _is_float(t1):
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
    if _is_float(t1):
        return float_ops.mul(c)
    real = np.float64(f32(scale_of(t1)) * f32(scale_of(t2)) / f32(scale_of(out_t)))
    m, s = fp.quantize_multiplier(real)
    a, b = c.aligned(0, 1)
    a = a.astype(np.int64) - zp_of(t1)
    b = b.astype(np.int64) - zp_of(t2)
    out = fp.mul_by_quantized_multiplier(a * b, m, s)
    return [finish(out, out_t, c.opt("fused_activation"))]


def _min_max(c: Call, fn, float_kernel):
    if _is_float(c.tin(0)):
        return float_kernel(c)
    return [fn(*c.aligned(0, 1)).astype(c.tout().dtype)]


def maximum(c: Call):
    return _min_max(c, np.maximum, float_ops.maximum)


def minimum(c: Call):
    return _min_max(c, np.minimum, float_ops.minimum)


# --------------------------------------------------------------------------------------------
# Activations


def _relu_x(c: Call, act_min: float, act_max: float | None, float_kernel):
    """QuantizedReluX: requantize in→out with MultiplyByQuantizedMultiplier, then clamp."""
    in_t, out_t = c.tin(0), c.tout()
    if _is_float(in_t):
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
    if _is_float(in_t):
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
    if _is_float(in_t):
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
    if _is_float(in_t):
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
    if _is_float(in_t):
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
    if _is_float(in_t):
        return float_ops.l2_normalization(c)
    if in_t.dtype != "int8":
        raise c.unsupported(f"{in_t.dtype} L2_NORMALIZATION")
    x = c.x(0).astype(np.int64) - zp_of(in_t)
    acc = (x * x).sum(axis=-1, keepdims=True)
    mult, shift = fp.inv_sqrt_multiplier(acc, -1)
    y = fp.mul_by_quantized_multiplier(x, mult, shift + 7)
    return [np.clip(y, -128, 127).astype(np.int8)]


# --------------------------------------------------------------------------------------------
# Data movement, reductions, (de)quantization


def quantize(c: Call):
    in_t, out_t = c.tin(0), c.tout()
    if _is_float(in_t):
        return [affine_quantize(c.x(0), out_t)]
    m, s = fp.quantize_multiplier(np.float64(scale_of(in_t)) / np.float64(scale_of(out_t)))
    x = c.x(0).astype(np.int64) - zp_of(in_t)
    y = fp.mul_by_quantized_multiplier(x, m, s) + zp_of(out_t)
    info = np.iinfo(np.dtype(out_t.dtype))
    return [np.clip(y, info.min, info.max).astype(out_t.dtype)]


def dequantize(c: Call):
    in_t, out_t = c.tin(0), c.tout()
    if _is_float(in_t):
        return [c.x(0).astype(out_t.dtype)]
    q = quant_of(in_t)
    x = c.x(0)
    if q.per_axis:  # the sample axis shifts the quantized axis by one
        q = ir.Quant(q.scale, q.zero_point, q.axis + 1)
    return [q.dequantize(x).astype(out_t.dtype)]


def concatenation(c: Call):
    out_t = c.tout()
    if _is_float(out_t):
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
    if _is_float(out_t):
        return float_ops.pad(c)
    value = zp_of(out_t)
    if c.has(2):
        value = int(np.asarray(c.const(2)).reshape(-1)[0])
    return pad_with(c, value)
