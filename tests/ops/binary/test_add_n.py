"""ADD_N: float and tflite mode equal LiteRT's float32 kernel bit for bit (-0.0 included); an int8
model's float island with several DEQUANTIZEs is not taken for an element-wise one (it is a
float island of several int8 inputs: `float_island<N>`, tests/corpus_check's islands2); a float model
quantized by mlitool runs a chain of int8 ADDs (binary8, one per input after the first), and its
emitted C equals the mli executor on the real MLI 2.0.2 library in the four
builds."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mlitool.execute.reference.graph import run_graph
from mlitool.ir import ISLAND_OP, ISLAND_STEPS
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import ROOT, mli_cflags
from tests.support.tflite_build import T, graph_model

SHAPE = [1, 6, 5, 4]


def _model(tmp_path, n: int):
    """x, ABS(x), then NEG / RELU of the one before: n inputs of ADD_N from one model input."""
    tensors = [T(SHAPE, "float32") for _ in range(n + 1)]
    ops = [("ABS", [0], [1], None)]
    for k in range(2, n):
        ops.append(("NEG" if k % 2 else "RELU", [k - 1], [k], None))
    ops.append(("ADD_N", list(range(n)), [n], None))
    path = tmp_path / f"add_n_{n}.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [n]))
    return path


@pytest.mark.parametrize("n", [2, 3, 5])
def test_float_and_tflite_mode_equal_litert_bit_exactly(n, tmp_path):
    path = _model(tmp_path, n)
    g = read(path).main
    x = np.random.default_rng(n).uniform(-3, 3, (3, *SHAPE)).astype(np.float32)
    x[0, 0, 0, 0] = -0.0
    x[1] *= np.float32(1e7)
    ref = reference_outputs(path, g, {0: x})[g.outputs[0]]
    for mode in ("float", "tflite"):
        got = run_graph(g, {0: x}, mode)[g.outputs[0]]
        np.testing.assert_array_equal(got.view(np.int32), ref.view(np.int32), err_msg=mode)


def test_int8_island_of_several_dequantizes_is_one_island_of_add_steps():
    g = read(ROOT / "tests" / "corpus_ops" / "add_n_int8.tflite").main
    assert [op.type for op in g.ops] == ["ABS", "RELU", ISLAND_OP]
    island = g.ops[-1]
    assert island.inputs == (0, 4, 2)  # the ADD_N's order: x, RELU(x), ABS(x)
    assert island.options[ISLAND_STEPS] == (("ADD", "NONE"), ("ADD", "NONE"))


@pytest.mark.parametrize("n", [2, 3])
def test_calibrated_model_c_equals_the_executor(n, mli_builds, tmp_path):
    path = _model(tmp_path, n)
    calib = tmp_path / "calib.npy"
    np.save(calib, np.random.default_rng(1).uniform(-1, 1, (8, *SHAPE)).astype(np.float32))
    conv = H.run_case(
        path, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0"), calibration=calib
    )
    H.assert_bit_exact(conv)
    layers = json.loads((tmp_path / "out" / "net.json").read_text())["layers"]
    assert [la["kernel"] for la in layers].count("mlitool_binary8") == n - 1
