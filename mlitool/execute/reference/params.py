"""TFLite's quantization parameters and output stage, derived as its kernels' Prepare() does:
float32 scales widened to double, QuantizeMultiplier with frexp, float32 arithmetic where TFLite
uses float, fused activation ranges, and the final clamp to the output type.
"""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.execute.channels import long_rows
from mlitool.execute.reference import fixedpoint as fp

f32 = np.float32


def quant_of(t: ir.Tensor, what: str = "tensor") -> ir.Quant:
    if t.quant is None:
        raise UnsupportedError(f"{what} {t.name!r} ({t.dtype}) has no quantization parameters")
    return t.quant


def scale_of(t: ir.Tensor) -> float:
    return float(quant_of(t).scale[0])


def zp_of(t: ir.Tensor) -> int:
    return int(quant_of(t).zero_point[0]) if t.quant is not None else 0


def checked_log2(scale: float) -> tuple[int, bool]:
    """TFLite's CheckedLog2: log2 of the scale in float32, rounded, and whether the scale is a
    power of two (within 1e-3 of the rounded log)."""
    if not (np.isfinite(scale) and scale > 0):
        return 0, False  # no power of two (TFLite's log2 is not finite there)
    log2 = np.log(f32(scale)) * (f32(1) / np.log(f32(2)))  # logf, float arithmetic
    power = int(np.round(log2))
    return power, bool(abs(float(log2) - power) < 1e-3)


def quantize_scalar(t: ir.Tensor, real: float) -> int:
    """TFLite's Quantize(): zero_point + roundf(f / scale), in float32."""
    return zp_of(t) + int(fp.round_away_f32(f32(real) / f32(scale_of(t))))


def activation_range(t: ir.Tensor, act: str) -> tuple[int, int]:
    """CalculateActivationRangeQuantized for output tensor `t` and a fused activation."""
    info = np.iinfo(np.dtype(t.dtype))
    lo, hi = int(info.min), int(info.max)
    if act in (None, "NONE"):
        return lo, hi
    if act == "RELU":
        return max(lo, quantize_scalar(t, 0.0)), hi
    if act == "RELU6":
        return max(lo, quantize_scalar(t, 0.0)), min(hi, quantize_scalar(t, 6.0))
    if act == "RELU_N1_TO_1":
        return max(lo, quantize_scalar(t, -1.0)), min(hi, quantize_scalar(t, 1.0))
    raise UnsupportedError(f"fused activation {act} on quantized tensor {t.name!r}")


def finish(acc: np.ndarray, t: ir.Tensor, act: str | None) -> np.ndarray:
    lo, hi = activation_range(t, act)
    y = np.add(acc, zp_of(t))
    return np.clip(y, lo, hi, out=y).astype(t.dtype)


def affine_quantize(x: np.ndarray, t: ir.Tensor) -> np.ndarray:
    """Reference AffineQuantize: round(val / float(scale)) + zero_point, clamped (float32 math)."""
    q = quant_of(t)
    info = np.iinfo(np.dtype(t.dtype))
    if q.per_axis:  # the sample axis shifts the quantized axis by one
        scale = q.scale.astype(f32).reshape([-1 if i == q.axis + 1 else 1 for i in range(x.ndim)])
        zp = q.zero_point.reshape(scale.shape)
    else:
        scale, zp = f32(q.scale[0]), int(q.zero_point[0])
    with np.errstate(over="ignore"):  # a tiny scale: ±inf, clamped below
        v = np.asarray(x, dtype=f32) / scale
    r = fp.round_away_f32(np.clip(v, f32(-(2.0**31)), f32(2.0**31))).astype(np.int64) + zp
    return np.clip(r, info.min, info.max).astype(t.dtype)


def channel_multipliers(in_t: ir.Tensor, w_t: ir.Tensor, out_t: ir.Tensor):
    """Per-channel (or per-tensor) QuantizeMultiplier of in*w/out, as PopulateConvolutionQuant..."""
    ws = quant_of(w_t, "filter").scale
    real = (np.float64(scale_of(in_t)) * ws) / np.float64(scale_of(out_t))
    mult, shift = fp.quantize_multiplier(real)
    if mult.size == 1:
        mult, shift = mult.reshape(()), shift.reshape(())
    return mult, shift


def requant_channels(acc: np.ndarray, in_t: ir.Tensor, w_t: ir.Tensor, out_t: ir.Tensor):
    """`channel_multipliers` applied to acc; int16 activations (16x8) take the int64
    MultiplyByQuantizedMultiplier."""
    mult, shift = channel_multipliers(in_t, w_t, out_t)
    rows, mult, shift = long_rows(acc, mult, shift)
    if in_t.dtype == "int16":
        return fp.mul_by_quantized_multiplier_64(rows, mult, shift).reshape(acc.shape)
    return fp.mul_by_quantized_multiplier(rows, mult, shift).reshape(acc.shape)
