"""mli_intops.asl saturates exactly as mli_math_asl_fx, including in a 64-bit container."""

import numpy as np

from mlitool.execute.mli.kernels import intops as intops


def _mli_asl(x: int, n: int, bits: int) -> int:
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if n > bits - 1:
        return 0 if x == 0 else (hi if x > 0 else lo)
    high = x >> (bits - 1 - n)
    return x << n if high in (0, -1) else (hi if high > 0 else lo)


def test_asl_8bit_exhaustive():
    xs = np.arange(-128, 128)
    for n in range(10):
        assert intops.asl(xs, n, 8).tolist() == [_mli_asl(int(x), n, 8) for x in xs]


def test_asl_64bit_zero_shift_keeps_value():
    assert intops.asl(np.array([5, -5, 0]), 0, 64).tolist() == [5, -5, 0]
    assert intops.asl(1 << 61, 1, 64) == 1 << 62
    assert intops.asl(1 << 62, 1, 64) == (1 << 63) - 1
    assert intops.asl(-(1 << 62), 1, 64) == -(1 << 63)
