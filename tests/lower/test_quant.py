"""Parameter encodings (mli-arithmetic.md section 3), checked against independent scalar math."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.mli import quant


def f32(x: float) -> float:
    """Round a Python float to the nearest C float (the scale as the flatbuffer stores it)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def scalar_mli2(s: float) -> tuple[int, int]:
    m, e = math.frexp(f32(s))
    frac = 15 - e
    scale = math.floor(m * 2**15 + 0.5)
    if scale == 32768:
        return 16384, frac - 1
    return scale, frac


def test_mli2_known_values():
    # 1/256: m = 0.5, e = -7 -> 16384 * 2^-22
    assert quant.encode_scale_mli2(1 / 256) == (np.array([16384]), np.array([22]))
    s, f = quant.encode_scale_mli2(np.array([0.58470291, 0.0787254, 1.0, 3.0]))
    assert s.dtype == np.int16 and f.dtype == np.int8
    assert s.tolist() == [19160, 20637, 16384, 24576]
    assert f.tolist() == [15, 18, 14, 13]


@pytest.mark.parametrize("seed", range(3))
def test_mli2_matches_scalar_frexp(seed):
    rng = np.random.default_rng(seed)
    s = np.exp(rng.uniform(-20, 3, size=500))
    scale, frac = quant.encode_scale_mli2(s)
    expected = [scalar_mli2(float(x)) for x in s]
    assert scale.tolist() == [e[0] for e in expected]
    assert frac.tolist() == [e[1] for e in expected]


def test_mli2_int16_overflow_case():
    # largest float32 below 1: m * 2^15 = 32767.998 rounds to 32768, which int16 cannot hold
    s = np.nextafter(np.float32(1.0), np.float32(0))
    assert quant.mli2_scale_overflows(s).tolist() == [True]
    scale, frac = quant.encode_scale_mli2(s)
    assert (int(scale[0]), int(frac[0])) == (16384, 14)
    assert int(scale[0]) * 2.0 ** -int(frac[0]) == pytest.approx(float(s), rel=1e-4)
    # just below the tie stays at 32767
    s2 = f32((32767.49 / 32768) * 0.25)
    assert quant.encode_scale_mli2(s2)[0].tolist() == [32767]
    assert not quant.mli2_scale_overflows(s2)[0]


def test_mli11_per_axis_shares_min_frac():
    s = np.array([0.002, 0.0005, 0.03], dtype=np.float32)
    scale, frac = quant.encode_scale_mli11(s, per_axis=True)
    fracs = [31 - math.frexp(float(x))[1] for x in s]
    assert frac == min(fracs)
    # float32 evaluation: s * 2^frac is exact, + 0.5f is absorbed at this magnitude for big values
    expected = [int(np.trunc(np.float32(np.float32(x) * np.float32(2.0**frac)) + np.float32(0.5)))
                for x in s]
    assert scale.tolist() == expected
    assert scale.dtype == np.int32
    one, f1 = quant.encode_scale_mli11(np.float32(0.58470291), per_axis=False)
    m, e = math.frexp(f32(0.58470291))
    assert f1 == 31 - e and one.tolist() == [int(m * 2**31)]


def test_bias_scale_rule():
    in_s, in_f = quant.encode_scale_mli2(0.0787254)
    w_s, w_f = quant.encode_scale_mli2(np.array([0.00855152, 0.0051726, 0.00925239]))
    b_float = np.float32(0.0787254) * np.array([0.00855152, 0.0051726, 0.00925239], np.float32)
    b_s, b_f = quant.bias_scale_mli2(int(in_s[0]), int(in_f[0]), w_s, w_f, b_float)
    for k in range(3):
        bf = 15 - math.frexp(float(b_float[k]))[1]
        assert b_f[k] == bf
        assert b_s[k] == (int(in_s[0]) * int(w_s[k])) >> (int(in_f[0]) + int(w_f[k]) - bf)
    # consistent with the real product within the int16 resolution
    real = b_s.astype(float) * 2.0 ** -b_f.astype(float)
    np.testing.assert_allclose(real, b_float, rtol=2e-4)


def test_bad_scale_refused():
    with pytest.raises(UnsupportedError):
        quant.encode_scale_mli2(np.array([0.1, 0.0]))
    with pytest.raises(UnsupportedError):
        quant.encode_scale_mli2(1e-40)   # frac bits beyond int8


def test_fx_frac_bits_and_headroom():
    assert quant.fx_frac_bits(1.0, 16) == 15
    assert quant.fx_frac_bits(1.5, 16) == 14
    assert quant.fx_frac_bits(0.2, 8) == 9          # ceil(log2 0.2) = -2
    assert quant.fx_frac_bits(300.0, 8) == -2
    assert quant.fx_frac_bits(0.0, 16) == 15
    # fx16: 40-bit acc, guard 40-1-30 = 9 bits; K=511 needs 9, K=512 needs 10
    assert quant.mac_headroom_deficit(511, 16, 16, 40) == 0
    assert quant.mac_headroom_deficit(512, 16, 16, 40) == 1
    # fx16_fx8_fx8: guard 32-1-22 = 9; K = 3*3*64 = 576 -> ceil(log2 577) = 10
    assert quant.mac_headroom_deficit(576, 16, 8, 32) == 1
    assert quant.acc_bits_of("fx16") == 40 and quant.acc_bits_of("fx8w16d") == 32


def test_fx_quantize_rounding_and_saturation():
    q, n = quant.fx_quantize(np.array([0.5, -0.5, 1.25, -1.25, 100.0, -100.0]), 1, 8)
    assert q.tolist() == [1, -1, 3, -3, 127, -128] and n == 2
    assert q.dtype == np.int8
    q, n = quant.fx_quantize(np.array([1.0]), 15, 16)
    assert q.tolist() == [32767] and n == 1


def test_sa8_params_from_range():
    scale, zp = quant.sa8_params_from_range(0.0, 6.0)
    assert scale == pytest.approx(6 / 255) and zp == -128
    scale, zp = quant.sa8_params_from_range(-1.0, 1.0)
    assert scale == pytest.approx(2 / 255) and zp in (-1, 0)


def test_mli_quant_dim():
    assert quant.mli_quant_dim("CONV_2D", "2.0", "hwc") == 3
    assert quant.mli_quant_dim("DEPTHWISE_CONV_2D", "2.0", "hwc") == 3
    assert quant.mli_quant_dim("FULLY_CONNECTED", "2.0", "hwc") == 1
    assert quant.mli_quant_dim("CONV_2D", "1.1", "hwc") == 0
    assert quant.mli_quant_dim("DEPTHWISE_CONV_2D", "1.1", "hwc") == 3
