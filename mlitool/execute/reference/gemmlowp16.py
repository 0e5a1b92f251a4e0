"""gemmlowp's logistic and tanh on 16-bit fixed point (`FixedPoint<int16_t, k>`), as tables.

TFLite's integer LSTM (the 8x8_16 kernel) applies them to its int16 gates (Q3.12) and to the
cell state (Q(15 + cell scale power)). The 16-bit arithmetic differs from the 32-bit one in
`tflite_fixedpoint` where C++ narrows: sums wrap to int16, the doubling high multiply divides by
2^15, every constant is the 32-bit constant rounding-shifted right by 16, and the final
exp-series add saturates. The functions are evaluated once for all 65,536 inputs (int64 arrays
holding int16 values) and cached; kernels index the table.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from mlitool.execute.reference.fixedpoint import EXP_BARREL, rdbpot

INT16_MIN, INT16_MAX = -(1 << 15), (1 << 15) - 1
_ALL_INT16 = np.arange(INT16_MIN, INT16_MAX + 1, dtype=np.int64)


def wrap16(x) -> np.ndarray:
    """C++'s narrowing of an int to int16_t (two's complement wrap)."""
    return ((np.asarray(x, np.int64) + (1 << 15)) & 0xFFFF) - (1 << 15)


def _const(raw32: int) -> int:
    """gemmlowp RescaleConstantInitializer: a 32-bit constant for a 16-bit FixedPoint."""
    return int(wrap16(rdbpot(np.int64(raw32), 16)))


def _trunc_div_pot(x: np.ndarray, bits: int) -> np.ndarray:
    """C's integer division by 2^bits (toward zero)."""
    return np.where(x >= 0, x >> bits, -((-x) >> bits))


def srdhm16(a, b) -> np.ndarray:
    """SaturatingRoundingDoublingHighMul for int16: (a*b + nudge) / 2^15, -1 * -1 saturating."""
    ab = np.asarray(a, np.int64) * np.asarray(b, np.int64)
    out = wrap16(_trunc_div_pot(ab + np.where(ab >= 0, 1 << 14, 1 - (1 << 14)), 15))
    return np.where(ab == 1 << 30, INT16_MAX, out)  # only -32768 * -32768 reaches 2^30


def _sat_add16(a, b) -> np.ndarray:
    return np.clip(np.asarray(a, np.int64) + b, INT16_MIN, INT16_MAX)


def _mul_pot16(x: np.ndarray, exponent: int) -> np.ndarray:
    """SaturatingRoundingMultiplyByPOT<exponent> on int16 values."""
    if exponent > 0:
        threshold = (1 << (15 - exponent)) - 1
        return np.where(
            x > threshold, INT16_MAX, np.where(x < -threshold, INT16_MIN, wrap16(x << exponent))
        )
    if exponent < 0:
        return rdbpot(x, -exponent)
    return x


def _rescale16(x: np.ndarray, src_integer_bits: int, dst_integer_bits: int) -> np.ndarray:
    return _mul_pot16(x, src_integer_bits - dst_integer_bits)


def _exp_quarter_interval(a: np.ndarray) -> np.ndarray:
    """exp on [-1/4, 0) for Q0.15 raw values (Taylor series around -1/8)."""
    constant_term, one_third = _const(1895147668), _const(715827883)
    x = wrap16(a + (1 << 12))  # a + 1/8
    x2 = srdhm16(x, x)
    x3 = srdhm16(x2, x)
    x4 = srdhm16(x2, x2)
    x4_over_4 = rdbpot(x4, 2)
    poly = rdbpot(wrap16(srdhm16(wrap16(x4_over_4 + x3), one_third) + x2), 1)
    return _sat_add16(constant_term, srdhm16(constant_term, wrap16(x + poly)))


def exp_on_negative_values16(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """exp(a) for a <= 0 in Q(integer_bits); result Q0.15."""
    frac_bits = 15 - integer_bits
    one_quarter = 1 << (frac_bits - 2)
    a_mod_quarter_minus_quarter = wrap16((a & (one_quarter - 1)) - one_quarter)
    result = _exp_quarter_interval(_rescale16(a_mod_quarter_minus_quarter, integer_bits, 0))
    remainder = wrap16(a_mod_quarter_minus_quarter - a)
    for exponent, multiplier in EXP_BARREL:  # its 32-bit constants, rescaled
        if integer_bits > exponent:
            bit = (remainder >> (frac_bits + exponent)) & 1
            result = np.where(bit == 1, srdhm16(result, _const(multiplier)), result)
    if integer_bits > 5:
        result = np.where(a < _const(-(1 << (36 - integer_bits))), 0, result)  # below -32
    return np.where(a == 0, INT16_MAX, result)


def _newton_reciprocal_f2(a: np.ndarray) -> np.ndarray:
    """x ≈ 1 / ((1 + a) / 2) in Q2.13 for a in Q0.15 (three Newton-Raphson steps). a is an exp
    result, never negative: RoundingHalfSum(a, 1) = (a + 32767 + 1) / 2 needs no negative case."""
    half_denominator = (a + INT16_MAX + 1) >> 1
    x = wrap16(
        _const(1515870810) + srdhm16(half_denominator, _const(-1010580540))
    )  # 48/17 - 32/17 d
    one = 1 << 13
    for _ in range(3):
        one_minus = wrap16(one - srdhm16(half_denominator, x))
        x = wrap16(x + _rescale16(srdhm16(x, one_minus), 4, 2))
    return x


def _logistic(a: np.ndarray, integer_bits: int) -> np.ndarray:
    positive = a > 0
    magnitude = np.where(positive, a, wrap16(-a))
    e = exp_on_negative_values16(wrap16(-magnitude), integer_bits)
    if_positive = _rescale16(_newton_reciprocal_f2(e), 1, 0)  # 1 / (1 + e)
    if_negative = wrap16(INT16_MAX - if_positive)
    return np.where(a == 0, _const(1 << 30), np.where(positive, if_positive, if_negative))


def _tanh(a: np.ndarray, integer_bits: int) -> np.ndarray:
    negative = a < 0
    e = exp_on_negative_values16(np.where(negative, a, wrap16(-a)), integer_bits + 1)  # exp(-2|a|)
    t = _rescale16(wrap16(_newton_reciprocal_f2(e) - (1 << 13)), 2, 0)  # (1 - e) / (1 + e)
    return np.where(a == 0, 0, np.where(negative, wrap16(-t), t))


@lru_cache(maxsize=None)
def logistic_table(integer_bits: int) -> np.ndarray:
    """gemmlowp::logistic(FixedPoint<int16_t, integer_bits>) → Q0.15, indexed by raw + 32768."""
    table = _logistic(_ALL_INT16, integer_bits).astype(np.int16)
    table.flags.writeable = False
    return table


@lru_cache(maxsize=None)
def tanh_table(integer_bits: int) -> np.ndarray:
    """gemmlowp::tanh(FixedPoint<int16_t, integer_bits>) → Q0.15, indexed by raw + 32768."""
    table = _tanh(_ALL_INT16, integer_bits).astype(np.int16)
    table.flags.writeable = False
    return table


def lookup(table: np.ndarray, x: np.ndarray) -> np.ndarray:
    """table[x] for int16 values x, as int64 (the products that follow need 32 bits)."""
    return table[np.asarray(x, np.int64) + (1 << 15)].astype(np.int64)
