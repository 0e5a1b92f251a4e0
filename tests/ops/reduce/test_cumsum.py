"""CUMSUM (plain, exclusive, reverse; several axes): float and tflite mode equal LiteRT's float32
kernel bit for bit; a float model quantized by mlitool (calibrated) runs the `cumsum8` fallback C,
whose results are within one step of the real running sums, and whose emitted C equals the mli
executor on the real MLI 2.0.2 library in the four builds (sa8)."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options

SHAPE = [1, 6, 5, 8]
# (axis, exclusive, reverse)
CASES = [(2, False, False), (2, True, False), (1, False, True), (3, True, True), (-1, False, False)]


def _model(tmp_path, axis, exclusive, reverse, dtype="float32"):
    t = T(SHAPE, "float32") if dtype == "float32" else T(SHAPE, scale=[0.05], zero_point=[3])
    tensors = [t, T([], "int32", data=np.int32(axis)), t]
    opts = options("CumsumOptions", exclusive=exclusive, reverse=reverse)
    path = tmp_path / f"cumsum_{axis}_{int(exclusive)}{int(reverse)}_{dtype}.tflite"
    path.write_bytes(graph_model(tensors, [("CUMSUM", [0, 1], [2], opts)], [0], [2]))
    return path


@pytest.mark.parametrize("axis, exclusive, reverse", CASES)
def test_float_and_tflite_mode_equal_litert_bit_exactly(axis, exclusive, reverse, tmp_path):
    path = _model(tmp_path, axis, exclusive, reverse)
    g = read(path).main
    x = np.random.default_rng(3).uniform(-3, 3, (4, *SHAPE)).astype(np.float32)
    x[0] *= np.float32(1e4)  # large and small terms: the order of the additions shows
    ref = reference_outputs(path, g, {0: x})[2]
    for mode in ("float", "tflite"):
        np.testing.assert_array_equal(
            run_graph(g, {0: x}, mode)[2].view(np.int32), ref.view(np.int32)
        )


def test_int8_cumsum_is_refused_in_tflite_mode(tmp_path):
    """LiteRT has no int8 CUMSUM (TFLite's converter leaves it a float island)."""
    g = read(_model(tmp_path, 2, False, False, "int8")).main
    with pytest.raises(UnsupportedError, match="float32, int32 and int64"):
        run_graph(g, {0: np.zeros((1, *SHAPE), np.int8)}, "tflite")


@pytest.mark.parametrize("axis, exclusive, reverse", CASES)
def test_calibrated_model_within_one_step_and_c_equals_the_executor(
    axis, exclusive, reverse, mli_builds, tmp_path
):
    path = _model(tmp_path, axis, exclusive, reverse)
    rng = np.random.default_rng(5)
    calib = tmp_path / "calib.npy"
    np.save(calib, rng.uniform(-1, 1, (8, *SHAPE)).astype(np.float32))
    conv = H.run_case(
        path, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0"), calibration=calib
    )
    H.assert_bit_exact(conv)


@pytest.mark.parametrize("exclusive, reverse", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("seed", range(4))
def test_cumsum8_arithmetic_within_one_step_of_the_real_sums(exclusive, reverse, seed):
    """The numpy twin (which the C equals, above) against the real running sums."""
    from mlitool.ops.reduce.cumsum_c import requantized_cumsum
    from mlitool.ops.reduce.reference import mean_or_sum_multiplier

    rng = np.random.default_rng(seed)
    s_in, s_out = float(10 ** rng.uniform(-3, -1)), float(10 ** rng.uniform(-2, 0))
    z_in, z_out = (int(v) for v in rng.integers(-128, 128, 2))
    x = rng.integers(-128, 128, (2, 3, 40, 2)).astype(np.int8)
    m, s = mean_or_sum_multiplier(s_in, s_out, 1, mean=False)
    got = requantized_cumsum(x, 2, exclusive, reverse, z_in, m, s, z_out, np.int8)
    real = (x.astype(np.float64) - z_in) * s_in
    if reverse:
        real = real[:, :, ::-1]
    real = np.cumsum(real, axis=2) - (real if exclusive else 0)
    if reverse:
        real = real[:, :, ::-1]
    want = np.clip(np.round(real / s_out) + z_out, -128, 127)
    assert np.abs(got.astype(np.int64) - want).max() <= 1


# --- an int8 model's float island -------------------------------------------------------------

ISLAND_Q = [(0.05, -3, 0.4, 10), (0.0157, -1, 0.2, -128), (0.1, 20, 0.05, 0)]


def _island(tmp_path, q, axis=2, exclusive=False, reverse=False, relu=False):
    """int8 x [-> RELU] -> DEQUANTIZE -> CUMSUM -> QUANTIZE [-> RELU]."""
    s_in, z_in, s_out, z_out = q
    qi, qo = dict(scale=[s_in], zero_point=[z_in]), dict(scale=[s_out], zero_point=[z_out])
    tensors = [
        T(SHAPE, **qi),
        T(SHAPE, "float32"),
        T([], "int32", data=np.int32(axis)),
        T(SHAPE, "float32"),
        T(SHAPE, **qo),
        T(SHAPE, **qi),
        T(SHAPE, **qo),
    ]
    opts = options("CumsumOptions", exclusive=exclusive, reverse=reverse)
    x, y = (5, 6) if relu else (0, 4)
    ops = [
        ("DEQUANTIZE", [x], [1], None),
        ("CUMSUM", [1, 2], [3], opts),
        ("QUANTIZE", [3], [4], None),
    ]
    if relu:
        ops = [("RELU", [0], [5], None), *ops, ("RELU", [4], [6], None)]
    path = tmp_path / f"cumsum_island_{axis}_{int(exclusive)}{int(reverse)}.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [y]))
    return path


@pytest.mark.parametrize("q", ISLAND_Q, ids=str)
@pytest.mark.parametrize("axis, exclusive, reverse", CASES)
def test_island_is_one_int8_cumsum_equal_to_litert(axis, exclusive, reverse, q, tmp_path):
    from mlitool.execute.mli.bridge import run_mli
    from mlitool.execute.mli.presets import arith_for
    from mlitool.mli.lower.driver import lower

    path = _island(tmp_path, q, axis, exclusive, reverse)
    g = read(path).main
    assert [op.type for op in g.ops] == ["CUMSUM"]
    rng = np.random.default_rng(9)
    x = rng.integers(-128, 128, (4, *SHAPE)).astype(np.int8)
    x.reshape(-1)[:256] = np.arange(-128, 128)
    ours = run_graph(g, {0: x}, "tflite")[4]
    np.testing.assert_array_equal(ours, reference_outputs(path, g, {0: x})[4])
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    assert [la.kernel for la in model.layers] == ["mlitool_cumsum_island8"]
    got, _ = run_mli(g, model, {0: x}, arith_for())
    np.testing.assert_array_equal(got[4].reshape(ours.shape), ours)


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("axis, exclusive, reverse", CASES[:3])
def test_island_c_equals_the_executor(axis, exclusive, reverse, fmt, mli_builds, tmp_path):
    path = _island(tmp_path, ISLAND_Q[0], axis, exclusive, reverse, relu=True)
    assert [op.type for op in read(path).main.ops] == ["RELU", "CUMSUM", "RELU"]
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))
