"""`tflite` mode kernels of the MAC ops (convolutions, transpose convolution, fully connected):
TFLite's integer reference arithmetic with exact integer sums; float ops run TFLite's float
reference sums term by term (`tflite_float.py`; depthwise: float mode's kernel, already in order).
The other ops' kernels are in tflite_ops.py."""

from __future__ import annotations

import numpy as np

from mlitool.errors import UnsupportedError
from mlitool.execute import windows as win
from mlitool.execute.channels import by_blocks, long_rows
from mlitool.execute.exact_sums import exact_matmul, max_abs, sum_dtype
from mlitool.execute.reference import fixedpoint as fp
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.kernel_common import is_float, merge_batch
from mlitool.execute.reference.params import (
    activation_range,
    channel_multipliers,
    finish,
    quant_of,
    requant_channels,
    scale_of,
    zp_of,
)
from mlitool.ops.conv import float_mode as float_ops
from mlitool.ops.conv import tflite_float

f32 = np.float32


def _weighted_float(c: Call) -> bool:
    """True for a float op (run by the float kernel); rejects what tflite mode cannot reproduce."""
    x_t, w_t = c.tin("input"), c.tin("weights")
    if is_float(x_t):
        if not is_float(w_t):
            raise UnsupportedError(
                f"{c.op.label}: hybrid (dynamic-range) op with {w_t.dtype} weights "
                "and float activations; run it in float mode"
            )
        return True
    if x_t.dtype not in ("int8", "int16") or w_t.dtype != "int8":
        raise c.unsupported(f"{x_t.dtype} activations with {w_t.dtype} weights")
    if x_t.dtype == "int16" and zp_of(x_t) != 0:
        raise c.unsupported("int16 activations with a non-zero zero point")
    return False


# --------------------------------------------------------------------------------------------
# Convolutions and fully connected


def _weights(c: Call) -> np.ndarray:
    """w - w_zp as integer-valued float32."""
    w_t = c.tin("weights")
    w = c.const("weights").astype(f32)
    wq = quant_of(w_t, "filter")
    if wq.per_axis:
        if np.any(wq.zero_point != 0):
            raise UnsupportedError(f"{c.op.label}: per-channel filter with non-zero zero points")
    else:
        w = w - f32(int(wq.zero_point[0]))
    return w


def _offsets(c: Call):
    """(x - x_zp, w - w_zp) as integer-valued float32 (|values| <= 2^16: exact), and the bound
    of their products that decides how the sums stay exact."""
    x = np.subtract(merge_batch(c.x("input")), f32(zp_of(c.tin("input"))), dtype=f32)
    w = _weights(c)
    return x, w, max_abs(x) * max_abs(w)


def real_bias(c: Call):
    if not c.has("bias"):
        return 0
    return c.const("bias").astype(np.int64)


def _per_channel_output(c: Call, acc: np.ndarray) -> list:
    """Exact sums → int64, + bias, per-channel requantization, zero point and clamp."""
    bias, in_t, w_t = real_bias(c), c.tin("input"), c.tin("weights")
    out_t, act = c.tout(), c.opt("fused_activation")
    mult, shift = channel_multipliers(in_t, w_t, out_t)
    lo, hi = activation_range(out_t, act)

    def block(a: np.ndarray) -> np.ndarray:
        if in_t.dtype == "int8":
            rows, m, s, b = long_rows(a, mult, shift, bias)
            y = fp.mul_by_quantized_multiplier_f64(rows, b, m, s, zp_of(out_t))
            if y is not None:
                return np.clip(y, lo, hi, out=y).astype(out_t.dtype).reshape(a.shape)
        a = a.astype(np.int64)  # integer-valued floats: the cast is exact
        a += bias
        return finish(requant_channels(a, in_t, w_t, out_t), out_t, act)

    return [by_blocks(block, acc, out_t.dtype).reshape(c.out_shape())]


def conv_2d(c: Call):
    if _weighted_float(c):
        return tflite_float.conv_2d(c)
    x, w, bound = _offsets(c)
    o, kh, kw, ci = w.shape
    geom = win.geometry(c.op.options, x.shape[1], x.shape[2], kh, kw)
    # a grouped conv (filter depth < input depth, as LiteRT's kernels run it): group g reads
    # input channels g*ci.. and writes its share of the outputs; each sum exact as one conv's
    sums = [
        exact_matmul(win.im2col(xg, kh, kw, geom), wg.reshape(len(wg), -1).T, bound)
        for xg, wg in float_ops.groups(c, x, w)
    ]
    return _per_channel_output(c, np.concatenate(sums, axis=-1))


def depthwise_conv_2d(c: Call):
    if _weighted_float(c):
        return float_ops.depthwise_conv_2d(c)
    x, zp, w = merge_batch(c.x("input")), zp_of(c.tin("input")), _weights(c)
    info = np.iinfo(x.dtype)  # |x - zp| from the type: no pass over the data
    dtype = sum_dtype(
        w.shape[1] * w.shape[2], max(zp - int(info.min), int(info.max) - zp) * max_abs(w)
    )
    if dtype is np.int64:
        raise UnsupportedError(f"{c.op.label}: depthwise sums beyond 2^53")
    # the raw integers, padded with the zero point: x - zp is formed block by block in the sum
    return _per_channel_output(c, win.depthwise_sum(x, w.astype(dtype), c.op.options, zp, dtype))


def transpose_conv(c: Call):
    """reference_integer_ops::TransposeConv (int8, and 16x8 with an int64 accumulator): the
    scatter of every input pixel's products, + bias, per-channel requantization."""
    if _weighted_float(c):
        return tflite_float.transpose_conv(c)
    x, w, _ = _offsets(c)
    out_h, out_w = c.tout().shape[1:3]
    # float64 taps: a 16x8 product reaches 2^23, so float32 sums would not stay exact
    acc = win.transpose_conv_sum(
        x.astype(np.float64), w.astype(np.float64), c.op.options, out_h, out_w
    )
    return _per_channel_output(c, acc)


def fully_connected(c: Call):
    x_t, w_t, out_t = c.tin("input"), c.tin("weights"), c.tout()
    if _weighted_float(c):
        return tflite_float.fully_connected(c)
    w = c.const("weights").astype(np.float64)
    wq = quant_of(w_t, "weights")
    if not wq.per_axis:
        w = w - int(wq.zero_point[0])
    depth = w.shape[-1]
    x = c.x("input").reshape(-1, depth).astype(np.float64) - zp_of(x_t)
    acc = exact_matmul(x, w.reshape(-1, depth).T, max_abs(x) * max_abs(w)).astype(
        np.int64
    ) + real_bias(c)
    # BUILTIN_REF requantizes in double: round(acc * (in_scale * w_scale / out_scale)), C round()
    # (int8 and 16x8 alike; measured against LiteRT).
    real = (np.float64(scale_of(x_t)) * wq.scale) / np.float64(scale_of(out_t))
    scaled = fp.round_away(acc.astype(np.float64) * real).astype(np.int64)
    return [finish(scaled, out_t, c.opt("fused_activation")).reshape(c.out_shape())]
