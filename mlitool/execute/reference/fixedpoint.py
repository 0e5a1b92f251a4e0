"""TFLite / gemmlowp fixed-point primitives, vectorized over int64 numpy arrays.

These are the integer building blocks of TFLite's reference kernels (double-rounding build, the
default of the LiteRT wheels): QuantizeMultiplier, SaturatingRoundingDoublingHighMul,
RoundingDivideByPOT, MultiplyByQuantizedMultiplier and the gemmlowp exp / reciprocal / inverse
square root used by SOFTMAX and L2_NORMALIZATION. Values are int64 arrays holding int32 values;
every function returns int64. The MLI primitives live in `mli_intops.py`; these are TFLite's own.
"""

from __future__ import annotations

import numpy as np

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


def _i64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def round_away(x) -> np.ndarray:
    """C's round(): nearest, halves away from zero (exact on float64, unlike floor(x + 0.5))."""
    x = np.asarray(x, dtype=np.float64)
    t = np.trunc(x)
    return t + np.sign(x) * (np.abs(x - t) >= 0.5)


def round_away_f32(x) -> np.ndarray:
    """roundf() on float32 values, result float32."""
    x = np.asarray(x, dtype=np.float32)
    t = np.trunc(x)
    return (t + np.sign(x) * (np.abs(x - t) >= np.float32(0.5))).astype(np.float32)


def quantize_multiplier(real) -> tuple[np.ndarray, np.ndarray]:
    """TFLite QuantizeMultiplier: real = mult * 2^(shift - 31), mult a 31-bit fraction (frexp)."""
    real = np.asarray(real, dtype=np.float64)
    q, shift = np.frexp(real)
    q_fixed = round_away(q * float(1 << 31)).astype(np.int64)
    shift = shift.astype(np.int64)
    full = q_fixed == (1 << 31)
    q_fixed = np.where(full, q_fixed // 2, q_fixed)
    shift = np.where(full, shift + 1, shift)
    tiny = shift < -31
    q_fixed = np.where(tiny, 0, q_fixed)
    shift = np.where(tiny | (real == 0), 0, shift)
    return q_fixed, shift


def srdhm(a, b) -> np.ndarray:
    """gemmlowp SaturatingRoundingDoublingHighMul on int32 values."""
    a, b = _i64(a), _i64(b)
    ab = a * b
    # Nudge by 2^30, or 1 - 2^30 below zero, then divide by 2^31 truncating toward zero as C
    # does (a shift floors: add 2^31 - 1 to negatives first). In place: this is a hot loop.
    s = np.asarray(ab + (1 << 30))
    np.subtract(s, (1 << 31) - 1, out=s, where=ab < 0)
    s += (s >> 63) & ((1 << 31) - 1)
    s >>= 31
    if np.any(b == INT32_MIN):  # the one product that overflows
        s = np.where((a == b) & (a == INT32_MIN), INT32_MAX, s)
    return s


def rdbpot(x, exponent) -> np.ndarray:
    """gemmlowp RoundingDivideByPOT: x / 2^exponent, rounding half away from zero."""
    x, e = _i64(x), _i64(exponent)
    mask = (np.int64(1) << e) - 1
    threshold = (mask >> 1) + (x < 0)
    out = x >> e
    out += (x & mask) > threshold
    return out


def wrap32(x) -> np.ndarray:
    x = _i64(x)
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def mul_by_quantized_multiplier(x, multiplier, shift) -> np.ndarray:
    """TFLite MultiplyByQuantizedMultiplier(int32 x, ...), double-rounding variant."""
    shift = _i64(shift)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    multiplier = _i64(multiplier)
    x = _i64(x)
    if left.any() or not _in_int32(x):
        x = wrap32(x << left)
    return _srdhm_then_rdbpot(x, multiplier, right, int32=True)


def _in_int32(x: np.ndarray) -> bool:
    return x.size == 0 or (INT32_MIN <= int(x.min()) and int(x.max()) <= INT32_MAX)


def _srdhm_then_rdbpot(
    x: np.ndarray, multiplier: np.ndarray, e: np.ndarray, int32: bool = False
) -> np.ndarray:
    """rdbpot(srdhm(x, m), e): in one rounding shift where its conditions hold (`int32`: the
    caller knows x is inside the int32 range)."""
    if (
        x.ndim
        and x.size
        and int(e.max()) <= 31
        and int(e.min()) >= 0
        and not np.any(multiplier == INT32_MIN)
        and (int32 or _in_int32(x))
    ):
        return _srdhm_rdbpot(x, multiplier, e)
    return rdbpot(srdhm(x, multiplier), e)


def _srdhm_rdbpot(x: np.ndarray, multiplier: np.ndarray, e: np.ndarray) -> np.ndarray:
    """rdbpot(srdhm(x, m), e) as one rounding shift, for int32 x, m != INT32_MIN, 0 <= e <= 31.

    srdhm is floor((x*m + 2^30) / 2^31) (its truncating division of the nudged product rounds
    the same way for both signs), and rdbpot(v, e) is floor((v + 2^(e-1) - [v < 0]) / 2^e) for
    e >= 1; floor(floor(a) / b) = floor(a / b) joins them: (p + 2^(30+e) - 2^31*[p < 0]) >> (31+e)
    with p = x*m + 2^30. |x*m| < 2^62, so nothing overflows int64.
    """
    p = np.multiply(x, multiplier)
    p += 1 << 30
    below = np.right_shift(p, 63)  # -1 where the srdhm result is negative
    p += np.where(e >= 1, np.left_shift(np.int64(1), 30 + e), 0)
    np.left_shift(below, 31, out=below)  # (masked ops with where= are 10x slower)
    if not np.all(e >= 1):
        below &= np.where(e >= 1, np.int64(-1), np.int64(0))
    p += below
    return np.right_shift(p, 31 + e, out=p)


def mul_by_quantized_multiplier_f64(
    acc: np.ndarray, bias, multiplier, shift, offset: int
) -> np.ndarray | None:
    """MultiplyByQuantizedMultiplier(acc + bias, m, shift) + offset in float64 (integer-valued
    result), or None where float64 cannot hold every step exactly.

    With p = (acc + bias)*m + 2^30 and e = -shift >= 1 the result is
    floor((p + 2^(30+e) - 2^31*[p < 0]) / 2^(31+e)) (see `_srdhm_rdbpot`); scaled by 2^-(31+e),
    every term is an exact float64 while the numerator stays below 2^53, and p < 0 is
    t < offset + 1/2 for t the scaled sum without the correction. float64 SIMD passes beat
    int64 ones (no vector int64 multiply on x86).
    """
    m, e = _i64(multiplier), -_i64(shift)
    b = _i64(bias)
    if (
        acc.size == 0
        or int(e.min()) < 0
        or int(e.max()) > 31
        or int(m.min()) < 0
        or int(m.max()) >= (1 << 31)
    ):
        return None
    amax = max(-float(acc.min()), float(acc.max())) + float(np.abs(b).max(initial=0))
    emax = int(e.max())
    if amax >= 2.0**31 or amax * float(m.max()) + (abs(offset) + 3) * 2.0 ** (31 + emax) >= 2.0**52:
        return None
    scale = np.ldexp(m.astype(np.float64), -(31 + e))
    up = np.where(e >= 1, np.ldexp(1.0, 30 + e), 0.0)
    k = b * scale + np.ldexp((1 << 30) + up, -(31 + e)) + offset
    t = np.multiply(acc, scale, dtype=np.float64)
    t += k
    below = t < np.where(e >= 1, offset + 0.5, -np.inf)  # srdhm result negative (e >= 1)
    t -= below * np.where(e >= 1, np.ldexp(1.0, -e), 0.0)
    return np.floor(t, out=t)


def mul_by_quantized_multiplier_64(x, multiplier, shift) -> np.ndarray:
    """TFLite MultiplyByQuantizedMultiplier(int64 x, ...) of the 16x8 kernels: the multiplier
    reduced to 16 bits (rounded), one rounding shift by 15 - shift."""
    multiplier = _i64(multiplier)
    reduced = np.where(multiplier < 0x7FFF0000, (multiplier + (1 << 15)) >> 16, 0x7FFF)
    total = 15 - _i64(shift)
    return (_i64(x) * reduced + (np.int64(1) << (total - 1))) >> total


def mul_smaller_than_one(x, multiplier, shift) -> np.ndarray:
    """MultiplyByQuantizedMultiplierSmallerThanOneExp (shift <= 0)."""
    return _srdhm_then_rdbpot(_i64(x), _i64(multiplier), -_i64(shift))


def mul_greater_than_one(x, multiplier, left_shift) -> np.ndarray:
    """MultiplyByQuantizedMultiplierGreaterThanOne (left_shift >= 0)."""
    return srdhm(wrap32(_i64(x) << _i64(left_shift)), multiplier)


def sat_shift_left(x, exponent: int) -> np.ndarray:
    """gemmlowp SaturatingRoundingMultiplyByPOT with a positive exponent, on int32."""
    x = _i64(x)
    threshold = (1 << (31 - exponent)) - 1
    return np.where(
        x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, wrap32(x << exponent))
    )


def rescale(x, src_int_bits: int, dst_int_bits: int) -> np.ndarray:
    """gemmlowp Rescale between FixedPoint<int32, src> and FixedPoint<int32, dst>."""
    e = src_int_bits - dst_int_bits
    if e > 0:
        return sat_shift_left(x, e)
    if e < 0:
        return rdbpot(x, -e)
    return _i64(x)


def _exp_quarter_interval(a: np.ndarray) -> np.ndarray:
    """exp on [-1/4, 0) for FixedPoint<int32, 0> raw values (gemmlowp Taylor series at -1/8)."""
    constant_term = 1895147668
    constant_1_over_3 = 715827883
    x = wrap32(a + (1 << 28))
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = rdbpot(x4, 2)
    poly = rdbpot(wrap32(srdhm(wrap32(x4_over_4 + x3), constant_1_over_3) + x2), 1)
    return wrap32(constant_term + srdhm(constant_term, wrap32(x + poly)))


# gemmlowp exp_on_negative_values: exp(-2^exponent) in Q0.31 per bit of the remainder (the
# 16-bit version rescales these).
EXP_BARREL = (
    (-2, 1672461947),
    (-1, 1302514674),
    (0, 790015084),
    (1, 290630308),
    (2, 39332535),
    (3, 720401),
    (4, 242),
)


def exp_on_negative_values(a, integer_bits: int) -> np.ndarray:
    """gemmlowp exp_on_negative_values: FixedPoint<int32, integer_bits> -> FixedPoint<int32, 0>."""
    a = _i64(a)
    frac_bits = 31 - integer_bits
    one_quarter = 1 << (frac_bits - 2)
    mask = one_quarter - 1
    a_mod_quarter_minus_one_quarter = wrap32((a & mask) - one_quarter)
    result = _exp_quarter_interval(rescale(a_mod_quarter_minus_one_quarter, integer_bits, 0))
    remainder = wrap32(a_mod_quarter_minus_one_quarter - a)
    for exponent, multiplier in EXP_BARREL:
        if integer_bits > exponent:
            bit = (remainder >> (frac_bits + exponent)) & 1
            result = np.where(bit == 1, srdhm(result, multiplier), result)
    if integer_bits > 5:
        clamp = -(1 << (36 - integer_bits))
        result = np.where(a < clamp, 0, result)
    return np.where(a == 0, INT32_MAX, result)


def one_over_one_plus_x_for_x_in_0_1(a) -> np.ndarray:
    """gemmlowp Newton-Raphson reciprocal: FixedPoint<int32,0> a in [0,1) -> 1/(1+a)."""
    a = _i64(a)
    s = a + INT32_MAX
    half_denominator = np.where(s >= 0, (s + 1) // 2, -((-(s - 1)) // 2))
    constant_48_over_17 = 1515870810
    constant_neg_32_over_17 = -1010580540
    x = wrap32(constant_48_over_17 + srdhm(half_denominator, constant_neg_32_over_17))
    one_f2 = 1 << 29
    for _ in range(3):
        half_denominator_times_x = srdhm(half_denominator, x)
        one_minus = wrap32(one_f2 - half_denominator_times_x)
        x = wrap32(x + rescale(srdhm(x, one_minus), 4, 2))
    return rescale(x, 1, 0)


def count_leading_zeros32(x) -> np.ndarray:
    """Leading zeros of x as uint32 (32 for 0)."""
    x = _i64(x) & 0xFFFFFFFF
    n = np.zeros(x.shape, dtype=np.int64)
    for step in (16, 8, 4, 2, 1):
        big = (x >> step) > 0
        n += np.where(big, step, 0)
        x = np.where(big, x >> step, x)
    bits = n + (x > 0)
    return 32 - bits


def get_reciprocal(x, x_integer_digits: int) -> tuple[np.ndarray, np.ndarray]:
    """TFLite GetReciprocal: (FixedPoint<int32,0> shifted scale, num_bits_over_unit)."""
    x = _i64(x)
    headroom_plus_one = count_leading_zeros32(x)
    num_bits_over_unit = x_integer_digits - headroom_plus_one
    shifted = ((x << headroom_plus_one) & 0xFFFFFFFF) - (1 << 31)
    return one_over_one_plus_x_for_x_in_0_1(wrap32(shifted)), num_bits_over_unit


def inv_sqrt_multiplier(x, reverse_shift: int) -> tuple[np.ndarray, np.ndarray]:
    """TFLite GetInvSqrtQuantizedMultiplierExp on int32 values >= 0: (multiplier, shift)."""
    x = _i64(x).copy()
    small = x <= 1
    shift = np.full(x.shape, 11, dtype=np.int64)
    for _ in range(2):  # x < 2^31: at most two divisions by 4 bring it below 2^29
        big = x >= (1 << 29)
        x = np.where(big, x // 4, x)
        shift += big
    x = np.where(small, 1 << 28, x)  # placeholder, result replaced below
    max_left_shift_bits = count_leading_zeros32(x) - 1
    left_shift_bit_pairs = max_left_shift_bits // 2 - 1
    shift -= left_shift_bit_pairs
    x = x << (2 * left_shift_bit_pairs)
    f3_input = x >> 1
    f3_half_input = rdbpot(f3_input, 1)
    half_three = (1 << 28) + (1 << 27)
    v = np.full(x.shape, 1 << 28, dtype=np.int64)  # F3::One()
    for _ in range(5):
        v3 = rescale(srdhm(srdhm(v, v), v), 9, 3)
        v = rescale(wrap32(srdhm(half_three, v) - srdhm(f3_half_input, v3)), 6, 3)
    half_sqrt_2 = 1518500250
    v = srdhm(v, half_sqrt_2)
    neg = shift < 0
    v = np.where(neg, wrap32(v << np.where(neg, -shift, 0)), v)
    shift = np.where(neg, 0, shift)
    shift = shift * reverse_shift
    return np.where(small, INT32_MAX, v), np.where(small, 0, shift)
