"""The exactness guards of the executor's fast paths, driven to their bounds: float32 sums of
-128 x -128 products just past 2^24 (`exact_sums`), and sa8_result's float64 rounding of
products just past 2^52, with the zero point taken inside the floor (`macquant`). Every expected
value is computed here with Python's unbounded integers."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute import exact_sums
from mlitool.execute.mli.kernels import mac, macquant
from mlitool.execute.mli.kernels._window import Window
from mlitool.execute.mli.kernels.intops import CONVERGENT, UP, Arith

MODES = (UP, CONVERGENT)


def _exact_dot(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """x @ w in Python integers (object arrays: no float, no wrap)."""
    return x.astype(object) @ w.astype(object)


def _past_f32(chunk: int, term: tuple[int, int], extra: int) -> tuple[np.ndarray, np.ndarray]:
    """One row of `2 * chunk` terms: `chunk` products term[0] * term[1] (a float32-exact chunk
    when chunk * |product| <= 2^24), then `extra` products 1 * 1: an odd total above 2^24 that
    no float32 holds, whatever order the sum is taken in."""
    x = np.zeros(2 * chunk, np.int64)
    w = np.zeros(2 * chunk, np.int64)
    x[:chunk], w[:chunk] = term
    x[chunk : chunk + extra] = w[chunk : chunk + extra] = 1
    return x, w


@pytest.mark.parametrize("extra", [1, 3, 1023])
def test_exact_matmul_past_float32(extra):
    """-128 x -128 over 2048 terms: 1024 products fill 2^24, one more odd term goes past it.
    Two float32 chunks of 1024 added in float64 are exact; one float32 sum is not."""
    x, w = _past_f32(1024, (-128, -128), extra)
    xs = np.stack([x, x[::-1]])  # the -128 chunk first, then last
    ws = np.stack([w, w[::-1]], axis=1)
    got = exact_sums.exact_matmul(xs.astype(np.int8), ws.astype(np.int8), 128 * 128)
    want = _exact_dot(xs, ws)
    assert abs(int(want[0, 0])) > 1 << 24 and int(want[0, 0]) % 2
    np.testing.assert_array_equal(got.astype(np.int64), want.astype(np.int64))


def test_exact_sums_of_one_term_and_of_zeros():
    """A single int16 product above 2^24 (the bound is read off one-element operands), all-zero
    operands (a term bound of 0) and no row at all."""
    x = np.array([[32767]], np.int16)
    np.testing.assert_array_equal(mac.matmul_exact(x, x).astype(np.int64), [[32767 * 32767]])
    zeros = np.zeros((2, 40), np.int8)
    np.testing.assert_array_equal(mac.matmul_exact(zeros, zeros.T.copy()), np.zeros((2, 2)))
    assert mac.matmul_exact(zeros[:0], zeros.T.copy()).shape == (0, 2)


@pytest.mark.parametrize(
    "k, bound, dtype",
    [
        (1024, 128 * 128, np.float32),  # k * bound = 2^24: one float32 sum
        (1025, 128 * 128, np.float64),  # float32 chunks added in float64
        (4, 1 << 22, np.float32),
        (5, 1 << 22, np.float64),  # chunks of 4 (< 16 terms): one float64 sum
    ],
)
def test_exact_matmul_takes_the_fastest_exact_type(k, bound, dtype):
    """The fast paths stay taken up to their bounds (the exactness cases above check past them)."""
    x = np.ones((1, k), np.int64)
    assert exact_sums.exact_matmul(x, x.T, bound).dtype == dtype


def test_sum_dtype_bounds():
    assert exact_sums.sum_dtype(1 << 10, 1 << 14) is np.float32
    assert exact_sums.sum_dtype((1 << 10) + 1, 1 << 14) is np.float64
    assert exact_sums.sum_dtype(1 << 23, 1 << 30) is np.float64
    assert exact_sums.sum_dtype((1 << 23) + 1, 1 << 30) is np.int64


@pytest.mark.parametrize("kernel", [(1, 1), (1, 2)])  # pointwise, im2col
def test_conv_sums_past_float32(kernel):
    """SA8 input -128 with zero point 127 (|x - zp| = 255) against weights -128: the chunk length
    conv_sums derives (2^24 // (255 * 128) = 514) is exact, twice that in one float32 is not."""
    kh, kw = kernel
    ci = 1028 // (kh * kw)
    x = np.full((1, 1, kw, ci), -128, np.int8)
    x[0, 0, -1, -1] = 126  # x - zp = -1: an odd last term
    w = np.full((kh, kw, ci, 2), -128, np.int8)
    w[..., -1, -1, 1] = -1
    win = Window(kernel=kernel, stride=(1, 1), dilation=(1, 1), pad=(0, 0), out=(1, 1))
    got = mac.conv_sums(x, w, win, groups=1, zp=127)
    want = _exact_dot(x.astype(np.int64).reshape(1, -1) - 127, w.reshape(-1, 2))
    assert int(want[0, 1]) > 1 << 24 and int(want[0, 1]) % 2
    np.testing.assert_array_equal(got.reshape(1, 2).astype(np.int64), want.astype(np.int64))


# ---------------------------------------------------------------------------------------------
# sa8_result (FULL_ACCU ON: the 32-bit multiplier reaches the rounding shift unchanged)


def _ref_sa8(acc: int, mul: int, shift: int, zp: int, mode: str) -> int:
    """mli-arithmetic.md section 5, FULL_ACCU ON: sat8(sat16(asr_rnd64(acc * mul, n)) + zp)."""
    n, p = min(shift, 63), acc * mul
    q, r = p >> n, p & ((1 << n) - 1)
    half = 1 << (n - 1)
    o = q + (r > half or (r == half and (mode == UP or q & 1)))
    return min(max(min(max(o, -32768), 32767) + zp, -128), 127)


def _check(acc: int, mul: int, shift: int, zp: int, mode: str) -> None:
    got = macquant.sa8_result(
        np.array([[acc]], np.int64), np.array([mul]), np.array([shift]), zp, Arith(mode, True)
    )
    assert int(got[0, 0]) == _ref_sa8(acc, mul, shift, zp, mode), (acc, mul, shift, zp, mode)


# acc * mul one below a rounding tie, both factors the size of a real accumulator and multiplier
# (< 2^31, < 2^30), products between 2^52 and 2^55: float64 rounds them (or them + 1/2) onto the tie.
_PAST_FLOAT64 = [
    (441650591, 20394401, 54),  # 2^53 - 1: exact in float64, not once 1/2 is added (UP)
    ((1 << 27) + 1, (1 << 27) - 1, 55),  # 2^54 - 1: 0.5 - 2^-55 rounds to 0 (UP: 1 if inexact)
    (95230081, 141875327, 53),  # 3 * 2^52 - 1: 1.5 - 2^-53 rounds to 1 (CONVERGENT: 2)
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("acc, mul, shift", _PAST_FLOAT64)
def test_sa8_result_products_past_float64(acc, mul, shift, mode):
    """Products of 53 to 55 bits next to a tie: exact only off the float64 path."""
    assert (1 << 52) < acc * mul < 1 << 55
    for sign in (1, -1):
        for zp in (0, -128, 127):
            _check(sign * acc, mul, shift, zp, mode)


# acc * mul = 2^(n-1) - 1: n in 41..53 (2^50 - 1's factors do not fit), |acc|, mul < 2^31.
_BELOW_TIE = {
    41: (1048575, 1048577),
    43: (2097151, 2097153),
    45: (4194303, 4194305),
    46: (5058487, 6955513),
    47: (8388607, 8388609),
    48: (10610063, 13264529),
    49: (16777215, 16777217),
    51: (33554431, 33554433),
    53: (67108863, 67108865),
}


@pytest.mark.parametrize("n", sorted(_BELOW_TIE))
def test_sa8_result_zero_point_outside_the_floor_at_long_shifts(n):
    """UP adds the zero point inside the floor only while p * 2^-n + zp + 1/2 keeps every bit:
    with |zp| ~ 100 that needs n <= 46. Just below a tie (p = 2^(n-1) - 1, under 2^52: the float64
    path) the output is zp, never zp + 1."""
    acc, mul = _BELOW_TIE[n]
    assert acc * mul == (1 << (n - 1)) - 1
    for zp in (100, -100, 127, -128):
        for a, m in ((acc, mul), (-acc, -mul), (mul, acc)):
            _check(a, m, n, zp, UP)
