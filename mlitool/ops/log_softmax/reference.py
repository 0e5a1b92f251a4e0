"""LOG_SOFTMAX over the last axis in the float and tflite execution modes, as LiteRT's reference
kernels compute it.

- float: per row, the max, the float32 sum of expf(x - max) element after element, then
  x - max - logf(sum) (reference_ops::LogSoftmax).
- int8: reference_integer_ops::LogSoftmax. Output scale 16/256, zero point 127 (Prepare requires
  them). Prepare scales the input differences to Q5.26 (`prepare`: PreprocessLogSoftmaxScalingExp
  with beta 1, the reverse scaling, CalculateInputRadius); per row the kernel sums gemmlowp's
  exp_on_negative_values of the differences in Q12.19, takes TFLite's fixed-point log of the sum
  (`log_x_ge_1`), and writes (difference - log) in Q4 rounded, + 127; differences at or below
  the reverse-scaled (log - 32) give -128.

The fallback C (`mlitool.ops.log_softmax.c_kernel`) computes the same integers from `prepare`'s
numbers, and its numpy twin is `log_softmax_int8` itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlitool.errors import UnsupportedError
from mlitool.execute.reference import fixedpoint as fp
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.params import scale_of, zp_of
from mlitool.execute.reference.repro import exp as expf

f32 = np.float32
INPUT_BITS, ACCUM_BITS, OUTPUT_BITS = 5, 12, 4  # Q5.26 differences, Q12.19 sum, Q4 output
OUT_SCALE, OUT_ZP = 16.0 / 256, 127
# exp(0) is 2^19 in Q12.19: from 4096 elements on the sum can reach 2^31 and overflow (TFLite's
# log of it then shifts by negative amounts: undefined behaviour), so longer rows are refused.
MAX_DEPTH = 4095
INT32_MIN, INT32_MAX = fp.INT32_MIN, fp.INT32_MAX


@dataclass(frozen=True)
class Params:
    """What TFLite's Prepare computes from the input scale."""

    multiplier: int  # input scale * 2^26 as a multiplier > 1 ...
    shift: int  # ... and its left shift (>= 0)
    reverse_multiplier: int  # 2^(31 - shift) / multiplier, < 1 ...
    reverse_shift: int  # ... and its shift (<= 0): MultiplyByQuantizedMultiplier's argument
    diff_min: int  # differences below it contribute nothing


def prepare(input_scale: float) -> Params:
    """PreprocessLogSoftmaxScalingExp(beta 1, scale, 5 bits) and -CalculateInputRadius(5, shift)
    (the input scale is float32, read as double as TFLite does)."""
    real = min(np.float64(f32(input_scale)) * float(1 << (31 - INPUT_BITS)), float(INT32_MAX))
    if not real > 1.0:  # TFLite's QuantizeMultiplierGreaterThanOne aborts
        raise UnsupportedError(
            f"LOG_SOFTMAX with input scale {input_scale!r}: TFLite needs it above 2^-26"
        )
    m, s = (int(v) for v in fp.quantize_multiplier(real))
    rm, rs = (int(v) for v in fp.quantize_multiplier(float(1 << (31 - s)) / float(m)))
    radius = np.floor(((1 << INPUT_BITS) - 1) * float(1 << (31 - INPUT_BITS)) / float(1 << s))
    return Params(m, s, rm, rs, -int(radius))


def depth_reason(depth: int) -> str:
    return (
        f"int8 LOG_SOFTMAX over rows of {depth} elements (more than {MAX_DEPTH}: TFLite's "
        "Q12.19 sum of exps can overflow, undefined behaviour in its C++)"
    )


# --- TFLite's fixed-point log ----------------------------------------------------------------


def _sat_pot(x, e) -> np.ndarray:
    """SaturatingRoundingMultiplyByPOTParam with exponents 0 <= e <= 31, per element."""
    x, e = np.asarray(x, np.int64), np.asarray(e, np.int64)
    threshold = (np.int64(1) << (31 - e)) - 1
    y = np.where(x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, x << e))
    return np.where(e == 0, x, y)


def _sat32(x) -> np.ndarray:
    return np.clip(np.asarray(x, np.int64), INT32_MIN, INT32_MAX)


def _half_sum(a, b) -> np.ndarray:
    """gemmlowp RoundingHalfSum: (a + b + sign) / 2, truncating."""
    s = np.asarray(a, np.int64) + b
    s = s + np.where(s >= 0, 1, -1)
    return np.where(s >= 0, s // 2, -((-s) // 2))


LOG_2, SQRT_SQRT_HALF, SQRT_HALF, ONE_QUARTER = 1488522236, 1805811301, 1518500250, 1 << 29
ALPHA_N, ALPHA_D, ALPHA_I, ALPHA_F = 117049297, 127690142, 1057819769, 638450708


def log_x_ge_1(x, input_bits: int, output_bits: int) -> np.ndarray:
    """TFLite's log_x_for_x_greater_than_or_equal_to_1: FixedPoint<int32, input_bits> raw
    values > 0 -> FixedPoint<int32, output_bits> raw, through an accumulator with one more
    integer bit. log2 from the leading zeros (two candidates, at z and z / sqrt 2, the closer
    kept), the rest by a rational approximation with gemmlowp's reciprocal."""
    acc_bits = output_bits + 1
    srdhm, w = fp.srdhm, fp.wrap32
    quarter = fp.rescale(ONE_QUARTER, 0, acc_bits)
    z_a = np.asarray(x, np.int64)
    clz_a = fp.count_leading_zeros32(z_a)
    r_a = _sat_pot(srdhm(_sat_pot(z_a, clz_a - 1), SQRT_HALF), 1)
    pow_a = _sat32(_sat_pot(input_bits - clz_a, 31 - acc_bits) + quarter)
    z_b = srdhm(z_a, SQRT_HALF)
    head_b = fp.count_leading_zeros32(z_b) - 1
    r_b = _sat_pot(z_a, head_b)
    pow_b = _sat32(_sat_pot(input_bits - head_b, 31 - acc_bits) - quarter)
    r, z_pow = np.minimum(r_a, r_b), np.maximum(pow_a, pow_b)
    p = _half_sum(r, SQRT_SQRT_HALF)
    q = w(r - SQRT_SQRT_HALF)
    q = w(q + q)
    sq = srdhm(q, q)
    num = w(srdhm(q, r) + srdhm(srdhm(q, sq), ALPHA_N))
    denom = w(srdhm(p, w(w(ALPHA_I + q) + srdhm(ALPHA_D, sq))) + srdhm(ALPHA_F, q))
    recip = fp.one_over_one_plus_x_for_x_in_0_1(denom)
    total = w(srdhm(z_pow, LOG_2) + srdhm(fp.rescale(num, 0, acc_bits), recip))
    return fp.rescale(total, acc_bits, output_bits)


# --- the kernels -----------------------------------------------------------------------------


def log_softmax_int8(x: np.ndarray, p: Params) -> np.ndarray:
    """reference_integer_ops::LogSoftmax of int8 `x` along its last axis."""
    x = np.asarray(x, np.int64)
    diff = x - x.max(axis=-1, keepdims=True)
    used = diff >= p.diff_min
    q5 = fp.mul_by_quantized_multiplier(np.where(used, diff, 0), p.multiplier, p.shift)
    exps = fp.rescale(fp.exp_on_negative_values(q5, INPUT_BITS), 0, ACCUM_BITS)
    total = fp.wrap32(np.where(used, exps, 0).sum(axis=-1, keepdims=True))
    log = log_x_ge_1(total, ACCUM_BITS, INPUT_BITS)
    shifted = fp.wrap32(log + INT32_MIN)  # the smallest Q5.26 value plus the log
    rev = fp.mul_by_quantized_multiplier(shifted, p.reverse_multiplier, p.reverse_shift)
    floor_diff = np.maximum(p.diff_min - 1, rev)
    y = fp.rdbpot(fp.wrap32(q5 - log), 31 - INPUT_BITS - OUTPUT_BITS) + OUT_ZP
    return np.where(diff > floor_diff, np.clip(y, -128, 127), -128).astype(np.int8)


def float_kernel(c: Call):
    x = np.asarray(c.x(0), dtype=f32)
    shifted = (x - x.max(axis=-1, keepdims=True)).astype(f32)
    e = expf(shifted)
    total = np.cumsum(e, axis=-1, dtype=f32)[..., -1:]  # float32, element after element
    log = np.log(total.astype(np.float64)).astype(f32)  # logf, correctly rounded
    return [(shifted - log).astype(f32)]


def tflite_kernel(c: Call):
    tin, tout = c.tin(0), c.tout()
    if np.dtype(tin.dtype).kind == "f":
        return float_kernel(c)
    if tin.dtype != "int8" or tout.dtype != "int8":
        raise c.unsupported(f"{tin.dtype} LOG_SOFTMAX")
    if (f32(scale_of(tout)), zp_of(tout)) != (f32(OUT_SCALE), OUT_ZP):
        raise c.unsupported("int8 LOG_SOFTMAX whose output is not scale 16/256, zero point 127")
    if tin.shape[-1] > MAX_DEPTH:
        raise c.unsupported(depth_reason(tin.shape[-1]))
    return [log_softmax_int8(c.x(0), prepare(scale_of(tin)))]
