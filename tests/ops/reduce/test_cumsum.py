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
