"""PRELU with a slope of any shape (TFLite broadcasts alpha against the input): tflite and float
mode equal LiteRT's kernels; a slope MLI's prelu cannot take (several axes) runs on the `prelu8`
fallback C, equal to tflite mode in the mli executor, and its emitted C equals the executor on
the real MLI 2.0.2 library in the four builds (sa8, and fx16 with the conversions around it); a
slope along one axis stays on MLI's prelu."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, activation, graph_model

SHAPE = (1, 6, 5, 3)
# name -> slope shape
CASES = {
    "full": (6, 5, 3),
    "rows_channels": (6, 1, 3),
    "width_channels": (5, 3),
    "rank4": (1, 6, 5, 1),
}
ONE_AXIS = (1, 1, 3)  # MLI's prelu takes it
Q_IN, Q_ALPHA, Q_OUT = (0.05, 3), (0.02, -5), (0.04, -10)


def _model(tmp_path, alpha_shape, dtype="int8", between=False):
    rng = np.random.default_rng(sum(alpha_shape))
    if dtype == "float32":
        alpha = T(list(alpha_shape), "float32", data=rng.uniform(-1, 2, alpha_shape))
    else:
        data = rng.integers(-128, 128, alpha_shape).astype(np.int8)
        alpha = T(list(alpha_shape), scale=[Q_ALPHA[0]], zero_point=[Q_ALPHA[1]], data=data)
    q_in = (1 / 128, 0) if between else Q_IN  # TANH's int8 output parameters
    tensors = [activation(SHAPE, dtype, q_in), alpha, activation(SHAPE, dtype, Q_OUT)]
    ops = [("PRELU", [0, 1], [2], None)]
    graph_in = 0
    if between:
        tensors.append(activation(SHAPE, dtype))
        ops.insert(0, ("TANH", [3], [0], None))
        graph_in = 3
    name = "x".join(map(str, alpha_shape))
    path = tmp_path / f"prelu_{name}_{dtype}{'_between' if between else ''}.tflite"
    path.write_bytes(graph_model(tensors, ops, [graph_in], [2]))
    return path


def _inputs(g, n=4, seed=0) -> dict:
    rng = np.random.default_rng(seed)
    t = g.tensors[g.inputs[0]]
    if t.dtype == "float32":
        return {g.inputs[0]: rng.uniform(-4, 4, (n, *t.shape)).astype(np.float32)}
    return {g.inputs[0]: rng.integers(-128, 128, (n, *t.shape)).astype(np.int8)}


def _every_int8(g) -> dict:
    """256 samples: each element of the input takes every int8 value once (with each slope)."""
    t = g.tensors[g.inputs[0]]
    pos = np.arange(int(np.prod(t.shape))).reshape(t.shape)
    x = (np.arange(256).reshape((256,) + (1,) * len(t.shape)) + pos) % 256 - 128
    return {g.inputs[0]: x.astype(np.int8)}


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_tflite_and_float_mode_equal_litert(name, dtype, tmp_path):
    path = _model(tmp_path, CASES[name], dtype)
    g = read(path).main
    xs = _inputs(g) if dtype == "float32" else _every_int8(g)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    modes = ("tflite", "float") if dtype == "float32" else ("tflite",)
    for mode in modes:
        np.testing.assert_array_equal(run_graph(g, xs, mode)[g.outputs[0]], ref, err_msg=mode)


@pytest.mark.parametrize("name", sorted(CASES))
def test_prelu8_equal_to_tflite_mode(name, tmp_path):
    g = read(_model(tmp_path, CASES[name])).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    assert [(la.kind, la.kernel) for la in model.layers] == [("fallback", "mlitool_prelu8")]
    xs = _every_int8(g)
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    np.testing.assert_array_equal(ours[g.outputs[0]], run_graph(g, xs, "tflite")[g.outputs[0]])


def test_slope_along_one_axis_stays_on_mli(tmp_path):
    g = read(_model(tmp_path, ONE_AXIS)).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    assert [la.kind for la in model.layers] == ["prelu"]


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("name", ["full", "width_channels"])
def test_c_on_the_real_library(name, fmt, mli_builds, tmp_path):
    path = _model(tmp_path, CASES[name], between=True)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


def test_an_alpha_that_widens_the_input_widens_the_output(tmp_path):
    """TFLite's PRELU output is the broadcast of the input's and alpha's shapes (found by the
    seed-50 campaign: a stored [1, 4, 1, 3] output for alpha [4, 4, 3] ran into an internal
    error); the stored shape is replaced by the computed one, as TFLite does."""
    from mlitool.execute.reference.graph import run_graph
    from mlitool.pipeline import read
    from tests.support.tflite_build import T, graph_model

    alpha = np.linspace(0.1, 0.4, 48, dtype=np.float32).reshape(4, 4, 3)
    tensors = [
        T([1, 4, 1, 3], "float32"),
        T([4, 4, 3], "float32", data=alpha),
        T([1, 4, 1, 3], "float32"),
        T([1, 4, 4, 3], "float32"),
    ]
    ops = [("PRELU", [0, 1], [2], None), ("RELU", [2], [3], None)]
    path = tmp_path / "prelu_widen.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [3]))
    g = read(path).main
    assert g.tensors[2].shape == (1, 4, 4, 3)
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 1, 4, 1, 3)
    y = run_graph(g, {0: x}, "float")[3]
    np.testing.assert_array_equal(y, np.maximum(np.where(x >= 0, x, x * alpha), 0))
