"""Quantization statistics against direct numpy computations on constructed tensors."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.mli.target import MLI2, MLI11
from mlitool.mli.types import ElType, MliTensor, Role
from mlitool.report.quant_stats import in_mli_layout, snr_db, tensor_stats
from tests.support.paths import shared_path


def _sa8_weights(real: np.ndarray, dim: int, scale16, frac) -> MliTensor:
    """Per-axis SA8 weights quantized here directly: q = clip(round(real / s), -127, 127)."""
    scale16, frac = np.asarray(scale16, np.int16), np.asarray(frac, np.int8)
    s = scale16.astype(np.float64) * 2.0 ** -frac.astype(np.float64)
    shape = [1] * real.ndim
    shape[dim] = -1
    q = np.clip(np.round(real / s.reshape(shape)), -128, 127).astype(np.int8)
    return MliTensor(
        "w",
        Role.WEIGHTS,
        real.shape,
        ElType.SA8,
        layout="HWCN",
        data=q,
        zero_point=np.zeros(len(s), np.int16),
        scale=scale16,
        scale_frac_bits=frac,
        dim=dim,
    )


def test_per_axis_sa8_statistics():
    rng = np.random.default_rng(0)
    real = rng.normal(0, 1, (3, 3, 4, 5))
    real[..., 2] = 0.0  # an all-zero output channel
    real[0, 0, 0, 4] = 50.0  # beyond channel 4's range: saturates
    scale16 = [16384, 20000, 30000, 12000, 24576]
    frac = [20, 21, 22, 20, 21]
    t = _sa8_weights(real, 3, scale16, frac)
    s = tensor_stats(t, real, snr_threshold_db=30.0)

    steps = np.array(scale16) / 2.0 ** np.array(frac)
    deq = t.data.astype(np.float64) * steps
    expect_snr = 10 * np.log10(np.sum(real**2) / np.sum((real - deq) ** 2))
    assert s.snr_db == pytest.approx(expect_snr, rel=1e-12)
    assert s.channels == 5
    assert (s.scale_min, s.scale_median, s.scale_max) == (
        steps.min(),
        np.median(steps),
        steps.max(),
    )
    assert (s.frac_min, s.frac_median, s.frac_max) == (20, 21.0, 22)
    assert (s.int_min, s.int_max) == (int(t.data.min()), int(t.data.max()))
    assert (s.real_min, s.real_max) == (deq.min(), deq.max())
    assert s.saturated == int(np.sum(np.abs(real / steps) > 127.5))
    assert s.saturated >= 1
    assert s.at_limits == int(np.sum((t.data == -128) | (t.data == 127)))
    assert s.unused_range == pytest.approx(1 - (int(t.data.max()) - int(t.data.min())) / 255)
    assert s.zero_channels == 1
    assert "saturation" in s.flags and "zero_channel" in s.flags


def test_fx_statistics_and_frac_limits():
    real = np.linspace(-3.0, 3.0, 64).reshape(8, 8)
    frac = 12
    q = np.clip(np.round(real * 2**frac), -32768, 32767).astype(np.int16)
    t = MliTensor("a", Role.WEIGHTS, (8, 8), ElType.FX16, data=q, frac_bits=frac)
    s = tensor_stats(t, real)
    deq = q / 2.0**frac
    assert s.snr_db == pytest.approx(10 * np.log10(np.sum(real**2) / np.sum((real - deq) ** 2)))
    assert s.saturated == 0 and s.flags == ()
    assert (s.scale_min, s.frac_min, s.frac_max) == (2.0**-12, 12, 12)
    # MLI 1.x keeps FX frac bits in a uint8: 0 is the end of the field
    t0 = MliTensor(
        "b", Role.WEIGHTS, (4,), ElType.FX8, data=np.array([1, 2, 3, 4], np.int8), frac_bits=0
    )
    assert "frac_bits_limit" in tensor_stats(t0, target=MLI11).flags
    assert "frac_bits_limit" not in tensor_stats(t0, target=MLI2).flags


def test_low_snr_flag_and_threshold():
    real = np.array([0.1, 0.26, -0.3, 0.05])
    t = MliTensor(
        "w", Role.WEIGHTS, (4,), ElType.FX8, data=np.array([0, 1, -1, 0], np.int8), frac_bits=2
    )
    deq = np.array([0, 0.25, -0.25, 0])
    expect = 10 * np.log10(np.sum(real**2) / np.sum((real - deq) ** 2))
    s = tensor_stats(t, real, snr_threshold_db=expect + 1)
    assert s.snr_db == pytest.approx(expect) and "low_snr" in s.flags
    assert "low_snr" not in tensor_stats(t, real, snr_threshold_db=expect - 1).flags


def test_snr_edge_cases():
    assert snr_db(np.ones(3), np.ones(3)) == float("inf")
    assert snr_db(np.zeros(3), np.ones(3)) == float("-inf")
    assert snr_db(np.array([3.0, 4.0]), np.array([3.0, 3.0])) == pytest.approx(10 * np.log10(25))


def test_activation_without_data_reports_parameters_only():
    t = MliTensor(
        "x",
        Role.ACTIVATION,
        (4, 4, 8),
        ElType.SA8,
        zero_point=np.array([-5], np.int16),
        scale=np.array([24000], np.int16),
        scale_frac_bits=np.array([22], np.int8),
    )
    s = tensor_stats(t)
    assert s.snr_db is None and s.int_min is None and s.saturated is None
    assert s.scale_min == s.scale_max == 24000 * 2.0**-22
    # with executor data: integer range, values at the limits
    data = np.full((4, 4, 8), 10, np.int8)
    data[0, 0, :3] = 127
    s = tensor_stats(t, data=data)
    assert (s.int_min, s.int_max, s.at_limits) == (10, 127, 3)
    assert s.real_min == pytest.approx((10 + 5) * 24000 * 2.0**-22)


def test_in_mli_layout_picks_the_permutation():
    rng = np.random.default_rng(3)
    ohwi = rng.normal(size=(6, 3, 3, 4))  # TFLite conv weights
    hwcn = np.ascontiguousarray(ohwi.transpose(1, 2, 3, 0))  # MLI 2.x layout
    t = _sa8_weights(hwcn, 3, [16384] * 6, [20] * 6)
    got = in_mli_layout(ohwi, t)
    np.testing.assert_array_equal(got, hwcn)  # not the H<->W swapped candidate
    fc = rng.normal(size=(10, 64))
    t2 = MliTensor(
        "f",
        Role.WEIGHTS,
        (64, 10),
        ElType.FX16,
        data=np.round(fc.T * 2**12).astype(np.int16),
        frac_bits=12,
    )
    np.testing.assert_array_equal(in_mli_layout(fc, t2), fc.T)


def test_real_model_weight_snr_against_direct_computation():
    """kws int8: MLI weights against TFLite's dequantized int8 weights, per layer."""
    from mlitool.mli.lower.driver import lower
    from mlitool.report.quant_section import quant_stats
    from mlitool.tflite.reader import read_model

    path = shared_path("models", "mlperf_tiny", "kws_ref_model_int8.tflite")
    graph = read_model(path).main
    model = lower(graph, format="sa8", mli_version="2.0", source=str(path))
    stats = {s.stats.name: s.stats for s in quant_stats(model, graph)}
    checked = 0
    for op in graph.ops:
        if op.type != "CONV_2D":
            continue
        w = graph.tensors[op.inputs[1]]
        real = w.data.astype(np.float64) * w.quant.scale.reshape(-1, 1, 1, 1)  # OHWI, axis 0
        mli = [t for t in model.tensors.values() if t.source_index == w.index][0]
        s16 = mli.scale.astype(np.float64) * 2.0 ** -mli.scale_frac_bits.astype(np.float64)
        deq = w.data.astype(np.float64) * s16.reshape(-1, 1, 1, 1)  # same integers
        expect = 10 * np.log10(np.sum(real**2) / np.sum((real - deq) ** 2))
        assert stats[mli.name].snr_db == pytest.approx(expect, rel=1e-9)
        assert stats[mli.name].saturated == 0
        checked += 1
    assert checked == 5
