"""Every rounding / shift helper of the mli executor on rounding ties (x = k * 2^n + 2^(n-1)) and
their neighbours, both signs, every shift, both ROUND_MODEs, against one scalar reference written
from mli-arithmetic.md section 4 with Python's unbounded integers."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.mli.kernels import intops as mli_intops
from mlitool.execute.mli.kernels import macquant
from mlitool.execute.mli.kernels.intops import CONVERGENT, UP
from mlitool.execute.reference.fixedpoint import rdbpot

MODES = (UP, CONVERGENT)


def ref_asr_rnd(x: int, n: int, bits: int, mode: str) -> int:
    """MLI's asr_rnd on one value: n == 0 keeps x, n > bits-1 gives 0; UP is asr(add_sat(x, half), n),
    CONVERGENT rounds half to even. (n < 0 is the saturating asl, tested in test_intops_asl.)"""
    if n == 0:
        return x
    if n > bits - 1:
        return 0
    half = 1 << (n - 1)
    if mode == UP:
        return min(x + half, (1 << (bits - 1)) - 1) >> n  # add_sat: half > 0 saturates up only
    q, r = x >> n, x & ((1 << n) - 1)
    return q + (r > half or (r == half and q & 1))


def ties(n: int, bits: int) -> list[int]:
    """Ties k*2^n + 2^(n-1) for small k of both signs, each with its neighbours +-1, plus the
    container's extremes: every value inside the signed `bits`-bit range."""
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    values = {lo, lo + 1, -1, 0, 1, hi - 1, hi}
    half = (1 << (n - 1)) if n else 0
    for k in range(-5, 5):
        for d in (-1, 0, 1):
            values.add(k * (1 << n) + half + d)
    for k in (lo >> n, (hi >> n) - 1):  # ties at both ends of the range
        values.add(k * (1 << n) + half)
    return sorted(v for v in values if lo <= v <= hi)


def _case(shifts, bits: int) -> tuple[np.ndarray, np.ndarray]:
    pairs = [(x, n) for n in shifts for x in ties(n, bits)]
    x, n = np.array(pairs, dtype=np.int64).T
    return x, n


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bits", [8, 16, 32, 64])
def test_asr_rnd_ties(bits, mode):
    """Per-element shifts 1..bits-1 (the fast path), then with 0 and > bits-1 mixed in (masked path)."""
    for shifts in (range(1, bits), range(0, bits + 3)):
        x, n = _case(shifts, bits)
        got = mli_intops.asr_rnd(x, n, bits, mode)
        want = [ref_asr_rnd(int(a), int(b), bits, mode) for a, b in zip(x, n)]
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", MODES)
def test_asr_rnd_scalar_shift(mode):
    """One shift for a whole array (how kernels call it), every shift of a 64-bit container."""
    for n in range(0, 64):
        x = np.array(ties(n, 64), dtype=np.int64)
        want = [ref_asr_rnd(int(a), n, 64, mode) for a in x]
        np.testing.assert_array_equal(mli_intops.asr_rnd(x, n, 64, mode), want)


@pytest.mark.parametrize("mode", MODES)
def test_rounding_shift64_ties(mode):
    """sa8_result's in-place int64 path: 1 <= n <= 63, |p| < 2^62."""
    x, n = _case(range(1, 64), 63)
    want = [ref_asr_rnd(int(a), int(b), 64, mode) for a, b in zip(x, n)]
    np.testing.assert_array_equal(macquant._rounding_shift64(x.copy(), n, mode), want)


@pytest.mark.parametrize("mode", MODES)
def test_round_scaled_ties(mode):
    """sa8_result's float64 path: round(acc * mul * 2^-n) for |acc * mul| < 2^52, every n 0..63,
    with products that are ties (acc * mul = k * 2^n + 2^(n-1), mul odd or even)."""
    for n in range(0, 64):
        for mul in (1, 3, 2, -5, 1 << 20):
            products = [p for p in ties(n, 53) if p % mul == 0 and abs(p) < (1 << 52)]
            acc = np.array([p // mul for p in products], dtype=np.int64)
            got = macquant._round_scaled(acc, mul * np.ldexp(1.0, -n), mode)
            want = [ref_asr_rnd(p, n, 64, mode) for p in products]
            np.testing.assert_array_equal(got, want, err_msg=f"n={n} mul={mul}")


def ref_sa8_result(
    acc: int, mul: int, shift: int, out_zp: int, mode: str, full_accu: bool
) -> tuple[int, bool]:
    """mli-arithmetic.md section 5, "Output", on one value: (the int8 output, whether the final
    rounding shift met a tie)."""
    pre = 0
    if not full_accu:
        mul, shift = ref_asr_rnd(mul, 16, 32, mode), shift - 16
        pre = min(max(shift - 21, 0), 8)
        acc = min(max(ref_asr_rnd(acc, pre, 32, mode), -32768), 32767)
    n = min(shift - pre, 63)
    tie = n >= 1 and (acc * mul) % (1 << n) == 1 << (n - 1)
    o = min(max(ref_asr_rnd(acc * mul, n, 64, mode), -32768), 32767)
    return min(max(o + out_zp, -128), 127), tie


def _tie_accumulators(mul: int, shift: int, mode: str, full_accu: bool) -> list[int]:
    """Accumulators whose product with the (reduced) multiplier is a tie of the final shift."""
    pre = 0
    if not full_accu:
        mul, shift = ref_asr_rnd(mul, 16, 32, mode), shift - 16
        pre = min(max(shift - 21, 0), 8)
    trailing_zeros = (mul & -mul).bit_length() - 1
    n = max(min(shift - pre, 63) - trailing_zeros, 1)
    return [v << pre for v in ties(n, 32) if abs(v) < 1 << 15]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("full_accu", [False, True])
@pytest.mark.parametrize("paths_off", [(), ("float64",), ("float64", "shift64")])
def test_sa8_result_ties(mode, full_accu, paths_off, monkeypatch):
    """sa8_result with each of its three paths forced, on accumulators whose products are ties of
    the final shift (and their neighbours), every output shift, normalised and small multipliers."""
    if "float64" in paths_off:
        monkeypatch.setattr(macquant, "_FLOAT64_EXACT", 0)
    if "shift64" in paths_off:
        monkeypatch.setattr(macquant, "_SHIFT64_ACC", 0)
    arith = mli_intops.Arith(mode, full_accu)
    inside_ties = 0
    for mul in (1 << 30, 3 << 28, -(5 << 27)) if not full_accu else (1, 3, -(1 << 12)):
        for shift in range(17, 80) if not full_accu else range(1, 64):
            # The accumulator's extremes alone: |acc| = 2^31 leaves the int64 shortcut.
            for acc in (
                _tie_accumulators(mul, shift, mode, full_accu),
                [(1 << 31) - 1, -(1 << 31)],
            ):
                want = [ref_sa8_result(v, mul, shift, 3, mode, full_accu) for v in acc]
                got = macquant.sa8_result(
                    np.array(acc, dtype=np.int64), np.array([mul]), np.array([shift]), 3, arith
                )
                np.testing.assert_array_equal(
                    got, [o for o, _ in want], err_msg=f"mul={mul} shift={shift}"
                )
                inside_ties += sum(tie and -128 < o < 127 for o, tie in want)
    assert inside_ties > 300  # ties that decide an output inside int8, not on the clamp


def test_rdbpot_ties():
    """TFLite's RoundingDivideByPOT: halves away from zero, every exponent of an int32."""
    for e in range(0, 32):
        x = np.array(ties(e, 32), dtype=np.int64)
        q, r = np.divmod(x, 1 << e)
        half = (1 << e) / 2
        want = [int(a) + (int(b) > half or (int(b) == half and a >= 0)) for a, b in zip(q, r)]
        np.testing.assert_array_equal(rdbpot(x, e), want, err_msg=f"exponent {e}")
