"""`tflite` mode SOFTMAX on int16 (16x8 models): TFLite's reference `SoftmaxInt16`, vectorized.

TFLite computes it with two 513-entry int16 tables made once at Prepare() and read with linear
interpolation (`LUTLookup`): exp(x) over [-10, 0] and 1 / (1 + x) over [0, 1], both quantized
to [-1, 1]. Every row: the difference to the row's maximum, rescaled so that [-65535, 0]
spans [-10, 0], looked up in the exp table (Q0.15); the sum of the row's exps normalized by its
leading zeros, looked up in the reciprocal table; each exp times that reciprocal, shifted back
to Q0.15 (output scale 1/32768, zero point 0).

Table generation is in float64, as TFLite's Prepare() asks for (`LUTPopulate<int16_t>` with
double), with C's round() (halves away from zero).
"""

from __future__ import annotations

import numpy as np

from mlitool.execute.reference import fixedpoint as fp
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.params import scale_of, zp_of

INT16_MIN, INT16_MAX = -(1 << 15), (1 << 15) - 1
_RANGE = INT16_MAX - INT16_MIN  # 65535
_STEPS = 512  # table entries - 1


def lut_int16(
    transform, input_scale: float, input_zp: int, output_scale: float, output_zp: int
) -> np.ndarray:
    """TFLite's int16 table of `transform` (513 entries): samples at 512 even steps over the
    input range, each lowered by half the error its linear interpolation makes at the step's
    midpoint, and the exact value at the end."""
    in_min = input_scale * (INT16_MIN - input_zp)
    in_max = input_scale * (INT16_MAX - input_zp)
    out_min = output_scale * (INT16_MIN - output_zp)
    out_max = output_scale * (INT16_MAX - output_zp)
    step = (in_max - in_min) / _STEPS
    inv = float(_RANGE + 1) / (out_max - out_min)
    i = np.arange(_STEPS, dtype=np.float64)
    val = transform(in_min + i * step)
    mid = transform(in_min + i * step + step / 2)
    nxt = transform(in_min + (i + 1) * step)
    sample = fp.round_away(val * inv)
    interp_mid = fp.round_away((nxt * inv + sample) / 2)
    bias = fp.round_away((interp_mid - fp.round_away(mid * inv)) / 2)
    last = fp.round_away(transform(np.array([in_max])) * inv)
    table = np.concatenate([sample - bias, last])
    return np.clip(table, INT16_MIN, INT16_MAX).astype(np.int64)


def lut_lookup(value: np.ndarray, table: np.ndarray) -> np.ndarray:
    """TFLite LUTLookup on int16 values: entry value >> 7 (of 512, centred), interpolated by
    the low 7 bits with rounding."""
    value = np.asarray(value, dtype=np.int64)
    index = 256 + (value >> 7)
    base = table[index]
    slope = fp.wrap32(table[index + 1] - base)
    slope = ((slope + (1 << 15)) & 0xFFFF) - (1 << 15)  # int16_t
    delta = (slope * (value & 0x7F) + 64) >> 7
    return ((base + delta + (1 << 15)) & 0xFFFF) - (1 << 15)  # int16_t


def _exp_table() -> np.ndarray:
    return lut_int16(np.exp, 10.0 / _RANGE, INT16_MAX, 2.0 / _RANGE, 0)


def _reciprocal_table() -> np.ndarray:
    return lut_int16(lambda x: 1.0 / (1.0 + x), 1.0 / _RANGE, INT16_MIN, 2.0 / _RANGE, 0)


def softmax_int16(c: Call) -> list:
    """SOFTMAX int16 -> int16 along the last axis."""
    in_t = c.tin(0)
    if zp_of(in_t) != 0 or zp_of(c.tout()) != 0:
        raise c.unsupported("int16 SOFTMAX with a non-zero zero point")
    # float scale * float beta (a float product in C), then over the double 10 / 65535
    scale_beta = np.float32(scale_of(in_t)) * np.float32(c.opt("beta", 1.0))
    mult, shift = (int(v) for v in fp.quantize_multiplier(float(scale_beta) / (10.0 / 65535.0)))
    x = c.x(0).astype(np.int64)
    diff = x - x.max(axis=-1, keepdims=True)
    scaled = fp.mul_by_quantized_multiplier(diff, mult, shift)
    exps = lut_lookup(np.clip(scaled + INT16_MAX, INT16_MIN, INT16_MAX), _exp_table())
    total = exps.sum(axis=-1, keepdims=True)  # Q16.15, int32 in TFLite
    headroom_plus_one = fp.count_leading_zeros32(total)
    shifted = ((total << (headroom_plus_one - 1)) + (1 << 13)) >> 14
    centred = np.clip(shifted - ((1 << 15) + (1 << 16)), INT16_MIN, INT16_MAX)
    reciprocal = lut_lookup(centred, _reciprocal_table())
    right_shift = 31 - headroom_plus_one
    y = (exps * reciprocal + (np.int64(1) << (right_shift - 1))) >> right_shift
    return [np.clip(y, 0, INT16_MAX).astype(np.int16)]
