"""Parameter encodings (mli-arithmetic.md section 3), checked against independent scalar math."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.mli import quant
from mlitool.mli.target import MLI2, MLI11


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
    expected = [
        int(np.trunc(np.float32(np.float32(x) * np.float32(2.0**frac)) + np.float32(0.5)))
        for x in s
    ]
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


def test_bias_scale_just_below_a_power_of_two():
    # The case: float bias scale 0.99999 * 2^-13 (frac 28) while the encoded product
    # 18716 * 28686 * 2^-(20 + 22) is just above 2^-13: TFLite's (18716 * 28686) >> 14 = 32768.
    in_f, w_f = f32(18715.6 * 2.0**-20), f32(28685.6 * 2.0**-22)
    b_float = np.float32(in_f) * np.float32(w_f)
    assert math.frexp(float(b_float)) == (pytest.approx(0.99999, abs=1e-5), -13)
    in_s, in_frac = quant.encode_scale_mli2(in_f)
    w_s, w_frac = quant.encode_scale_mli2(w_f)
    assert (int(in_s[0]), int(in_frac[0]), int(w_s[0]), int(w_frac[0])) == (18716, 20, 28686, 22)
    assert (18716 * 28686) >> (20 + 22 - 28) == 32768
    b_s, b_f = quant.bias_scale_mli2(18716, 20, w_s, w_frac, np.array([b_float]))
    # one frac bit less: (18716 * 28686) >> 15 = 536887176 >> 15 = 16384
    assert (b_s.tolist(), b_f.tolist()) == ([16384], [27])
    assert b_s.dtype == np.int16 and b_f.dtype == np.int8


def test_bias_scale_after_a_weight_scale_encoded_16384():
    # input 2^-8 = 16384 * 2^-22; weight the float32 below 2^-7, encoded 16384 * 2^-21 (its
    # int16 rounds to 32768); bias float just below 2^-15 (frac 30): the encoded product is
    # exactly 2^-15 = 2^28 * 2^-43, and 2^28 >> (22 + 21 - 30) = 32768. Expected 16384 * 2^-29.
    w_f = float(np.nextafter(np.float32(2.0**-7), np.float32(0)))
    w_s, w_frac = quant.encode_scale_mli2(w_f)
    assert (int(w_s[0]), int(w_frac[0])) == (16384, 21)
    b_float = np.float32(2.0**-8) * np.float32(w_f)
    assert 15 - math.frexp(float(b_float))[1] == 30
    b_s, b_f = quant.bias_scale_mli2(16384, 22, w_s, w_frac, np.array([b_float]))
    assert (b_s.tolist(), b_f.tolist()) == ([16384], [29])


def test_bias_scales_near_powers_of_two_pass_mlis_check():
    """Per-channel weight scales a few float32 steps around powers of two and input scales of
    several mantissas: every bias scale passes MLI 2.0.2's own debug check
    (mli_chk_bias_scale_asym: |asr_rnd(in * w, in_frac + w_frac - b_frac) - b| <= 1) with a
    positive int16, and its frac bits are the float bias scale's or one less."""
    # float32 bit patterns: powers of two 2^-12..2^-5 and their 6 neighbours either side
    powers = (np.arange(-12, -4, dtype=np.int32) + 127) << 23
    w = (powers[:, None] + np.arange(-6, 7, dtype=np.int32)).reshape(-1).view(np.float32)
    w = np.concatenate([w, (w * np.float32(0.57116)).astype(np.float32)])
    for in_f in (2.0**-7, f32(18715.6 * 2.0**-20), f32(0.7071 * 2.0**-6), f32(0.99999 * 2.0**-5)):
        in_s, in_frac = (int(v[0]) for v in quant.encode_scale_mli2(in_f))
        w_s, w_frac = quant.encode_scale_mli2(w)
        b_float = (np.float32(in_f) * w).astype(np.float32)
        b_s, b_f = quant.bias_scale_mli2(in_s, in_frac, w_s, w_frac, b_float.astype(np.float64))
        prod = in_s * w_s.astype(np.int64)
        shift = in_frac + w_frac.astype(np.int64) - b_f
        expected = (prod + (1 << (shift - 1))) >> shift  # asr_rnd, shift > 0 here
        assert (shift > 0).all()
        assert (np.abs(expected - b_s) <= 1).all() and (b_s > 0).all()
        float_frac = np.array([15 - math.frexp(float(x))[1] for x in b_float])
        assert set((float_frac - b_f).tolist()) <= {0, 1}


def test_bad_scale_refused():
    with pytest.raises(UnsupportedError):
        quant.encode_scale_mli2(np.array([0.1, 0.0]))
    with pytest.raises(UnsupportedError):
        quant.encode_scale_mli2(1e-40)  # frac bits beyond int8


def test_fx_frac_bits_and_headroom():
    assert quant.fx_frac_bits(1.0, 16) == 15
    assert quant.fx_frac_bits(1.5, 16) == 14
    assert quant.fx_frac_bits(0.2, 8) == 9  # ceil(log2 0.2) = -2
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
    assert quant.mli_quant_dim("CONV_2D", MLI2, "hwc") == 3
    assert quant.mli_quant_dim("DEPTHWISE_CONV_2D", MLI2, "hwc") == 3
    assert quant.mli_quant_dim("FULLY_CONNECTED", MLI2, "hwc") == 1
    assert quant.mli_quant_dim("CONV_2D", MLI11, "hwc") == 0
    assert quant.mli_quant_dim("DEPTHWISE_CONV_2D", MLI11, "hwc") == 3
