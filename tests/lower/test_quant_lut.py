"""The table path for 8-bit quantized weights (quant.fx_requantize_8bit, dequantized_abs_max) gives
exactly what dequantizing to float64 and rounding each value gives, written out here directly."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.mli import quant


def _expected(q, scale, zp, axis, frac, bits):
    shape = [1] * q.ndim
    if axis is not None:
        shape[axis] = -1
    real = (q.astype(np.float64) - np.reshape(zp, shape)) * np.reshape(scale, shape)
    v = real * 2.0**frac
    r = np.sign(v) * np.floor(np.abs(v) + 0.5)
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return np.abs(real).max(), np.clip(r, lo, hi), int(((r < lo) | (r > hi)).sum())


CASES = [
    ((6, 3, 3, 5), 0),
    ((1, 3, 3, 7), 3),
    ((9, 17), 0),
    ((4, 6), 1),
    ((5, 4, 3), None),
    ((300,), None),
    ((2, 1, 1, 4), 0),
]


@pytest.mark.parametrize("shape,axis", CASES)
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("bits,frac_shift", [(16, 0), (8, 0), (8, 2), (16, 3)])
def test_table_path_equals_direct_computation(shape, axis, dtype, bits, frac_shift):
    rng = np.random.default_rng(sum(shape) * 7 + bits + frac_shift)
    info = np.iinfo(dtype)
    q = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    n = 1 if axis is None else shape[axis]
    scale = rng.uniform(0.001, 0.05, n)
    zp = rng.integers(-10, 10, n) if dtype == np.int8 else rng.integers(100, 150, n)
    assert quant.lut_applies(q, scale, axis)
    want_max, _, _ = _expected(q, scale, zp, axis, 0, bits)
    assert quant.dequantized_abs_max(q, scale, zp, axis) == want_max
    frac = quant.fx_frac_bits(want_max, bits) + frac_shift  # shift > 0 forces saturation
    _, want, want_sat = _expected(q, scale, zp, axis, frac, bits)
    got, n_sat = quant.fx_requantize_8bit(q, scale, zp, axis, frac, bits)
    assert got.dtype == (np.int8 if bits == 8 else np.int16)
    assert got.shape == q.shape
    np.testing.assert_array_equal(got, want)
    assert n_sat == want_sat
    if frac_shift:
        assert n_sat > 0


def test_table_path_in_small_steps(monkeypatch):
    monkeypatch.setattr(quant, "_LUT_CHUNK", 5)
    q = np.arange(-128, 128, dtype=np.int8).reshape(8, 32)
    scale, zp = np.linspace(0.01, 0.08, 8), np.arange(8) - 4
    _, want, want_sat = _expected(q, scale, zp, 0, 9, 16)
    got, n_sat = quant.fx_requantize_8bit(q, scale, zp, 0, 9, 16)
    np.testing.assert_array_equal(got, want)
    assert n_sat == want_sat
    got1, _ = quant.fx_requantize_8bit(q, scale[:1], zp[:1], None, 9, 16)
    np.testing.assert_array_equal(got1, _expected(q, scale[:1], zp[:1], None, 9, 16)[1])


def test_table_path_declines_what_it_cannot_do():
    q8 = np.zeros((2, 3), np.int8)
    assert not quant.lut_applies(np.zeros((2, 3), np.int16), [0.1, 0.2], 0)
    assert not quant.lut_applies(np.zeros((2, 3), np.float32), [0.1], None)
    assert not quant.lut_applies(q8, [0.1, np.inf], 0)
    assert not quant.lut_applies(q8, [0.1, 0.2, 0.3], 0)
    assert not quant.lut_applies(np.zeros((0, 3), np.int8), [0.1], None)
