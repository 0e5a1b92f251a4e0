"""Integer primitives of the MLI 2.x reference code, vectorized over numpy arrays.

Everything works on int64 arrays holding values of a narrower container of `bits` bits (the C
type the MLI code uses); results are returned as int64. Shift amounts may be scalars or arrays
broadcasting against the values (per-channel shifts). See mli-arithmetic.md section 4.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

UP = "up"
CONVERGENT = "convergent"


@dataclass(frozen=True)
class Arith:
    """An MLI build configuration: ROUND_MODE and FULL_ACCU."""

    round_mode: str = UP
    full_accu: bool = False

    def __post_init__(self) -> None:
        if self.round_mode not in (UP, CONVERGENT):
            raise ValueError(
                f"round_mode must be {UP!r} or {CONVERGENT!r}, not {self.round_mode!r}"
            )

    @property
    def name(self) -> str:
        """The golden-vector directory name of this build, e.g. 'UP_ACCU_OFF'."""
        return f"{self.round_mode.upper()}_ACCU_{'ON' if self.full_accu else 'OFF'}"


def _i64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def limits(bits: int) -> tuple[int, int]:
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def sat(x, bits: int) -> np.ndarray:
    """Clamp to the signed `bits`-bit range."""
    lo, hi = limits(bits)
    return np.clip(_i64(x), lo, hi)


def wrap(x, bits: int) -> np.ndarray:
    """Two's-complement wrap-around to `bits` bits (C integer overflow on the target)."""
    x = _i64(x)
    if bits >= 64:
        return x
    shift = 64 - bits
    return (x << shift) >> shift


def add_sat(a, b, bits: int) -> np.ndarray:
    if bits >= 64:
        return _i64(a) + _i64(b)
    return sat(_i64(a) + _i64(b), bits)


def asl(x, n, bits: int) -> np.ndarray:
    """Saturating left shift by n (n < 0 shifts right arithmetically)."""
    x, n = np.broadcast_arrays(_i64(x), _i64(n))
    out = np.empty(x.shape, dtype=np.int64)
    left = n >= 0
    if left.any():
        nl = np.minimum(n[left], bits)
        xl = x[left]
        lo, hi = limits(bits)
        # Saturate where the shift would leave the container: as MLI, keep x when its bits above
        # position bits-1-n are all sign bits (x >> (bits-1-n) is 0 or -1). Also exact for bits=64.
        high = xl >> np.clip(bits - 1 - nl, 0, 63)
        ok = ((high == 0) | (high == -1)) & (nl < bits)
        shifted = np.where(ok, np.left_shift(xl, np.where(ok, nl, 0)), 0)
        res = np.where(ok, shifted, np.where(xl > 0, hi, np.where(xl < 0, lo, 0)))
        out[left] = res
    if (~left).any():
        out[~left] = asr(x[~left], -n[~left], bits)
    return out


def asr(x, n, bits: int) -> np.ndarray:
    """Arithmetic right shift; shifts beyond bits-1 give -1 or 0."""
    return np.right_shift(_i64(x), np.minimum(_i64(n), bits - 1))


def asr_rnd(x, n, bits: int, mode: str) -> np.ndarray:
    """MLI's rounding right shift (every cast uses it). n < 0: saturating left shift."""
    n_arr = _i64(n)
    if n_arr.size and 1 <= n_arr.min() and n_arr.max() <= bits - 1:
        # Fast path for large arrays: every shift is an ordinary rounding shift, no masking needed.
        return _rounding_shift(_i64(x), n_arr, bits, mode)
    x, n = np.broadcast_arrays(_i64(x), n_arr)
    out = np.empty(x.shape, dtype=np.int64)
    neg = n < 0
    if neg.any():
        out[neg] = asl(x[neg], -n[neg], bits)
    zero = n == 0
    out[zero] = x[zero]
    big = n > bits - 1
    out[big] = 0
    mid = ~(neg | zero | big)
    if mid.any():
        out[mid] = _rounding_shift(x[mid], n[mid], bits, mode)
    return out


def _rounding_shift(xm: np.ndarray, nm: np.ndarray, bits: int, mode: str) -> np.ndarray:
    """asr_rnd for shifts 1 <= n <= bits-1 (x and n broadcast)."""
    if mode == UP:
        if bits >= 64:
            # floor((x + 2^(n-1)) / 2^n) without overflowing int64; where MLI's add_sat saturates
            # (x within 2^(n-1) of int64 max, so x >= 2^62) it is int64 max >> n.
            up = ((xm >> (nm - 1)) + 1) >> 1
            if int(xm.max(initial=0)) < (1 << 62):
                return up
            top = np.iinfo(np.int64).max
            return np.where(xm > top - np.left_shift(np.int64(1), nm - 1), top >> nm, up)
        return add_sat(xm, np.left_shift(np.int64(1), nm - 1), bits) >> nm
    if mode == CONVERGENT:
        q = xm >> nm
        rem = xm & ~(np.int64(-1) << nm)
        half = np.left_shift(np.int64(1), nm - 1)
        return q + ((rem > half) | ((rem == half) & ((q & 1) == 1)))
    raise ValueError(f"unknown rounding mode {mode!r}")


def bit_length(x) -> np.ndarray:
    """Bits needed for |x| as an unsigned number (0 for 0), exact for all int64 >= 0."""
    x = _i64(x).copy()
    n = np.zeros(x.shape, dtype=np.int64)
    for step in (32, 16, 8, 4, 2, 1):
        big = (x >> step) > 0
        n += np.where(big, step, 0)
        x = np.where(big, x >> step, x)
    return n + (x > 0)


def norm(x, bits: int) -> np.ndarray:
    """Redundant sign bits of x in a `bits`-bit container (bits-1 for 0 and for -1)."""
    x = _i64(x)
    mag = np.where(x < 0, ~x, x)
    return (bits - 1) - bit_length(mag)
