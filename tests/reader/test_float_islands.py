"""Float islands of int8 models (TF leaves ELU and NEG in float: DEQUANTIZE -> op -> QUANTIZE)
become the op on the int8 tensors at import, carrying the 256 results the three ops compute:
tflite mode then equals LiteRT running the float island on every int8 input, the model converts
without calibration, and its C equals the executor on the real library."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.reference.graph import run_graph
from mlitool.ir import ISLAND_TABLE
from mlitool.pipeline import read
from mlitool.tflite.reader import read_model
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model

SHAPE = [1, 16, 16, 1]


def _island(tmp_path, op: str, zin: int, zout: int):
    """int8 x -> DEQUANTIZE -> op (float) -> QUANTIZE -> int8 y."""
    path = tmp_path / f"{op.lower()}_island.tflite"
    tensors = [
        T(SHAPE, scale=[0.05], zero_point=[zin]),
        T(SHAPE, "float32"),
        T(SHAPE, "float32"),
        T(SHAPE, scale=[0.04], zero_point=[zout]),
    ]
    ops = [("DEQUANTIZE", [0], [1], None), (op, [1], [2], None), ("QUANTIZE", [2], [3], None)]
    path.write_bytes(graph_model(tensors, ops, [0], [3]))
    return path


def _every_int8() -> np.ndarray:
    return np.arange(-128, 128, dtype=np.int16).astype(np.int8).reshape((1, *SHAPE))


@pytest.mark.parametrize("op,zin,zout", [("NEG", 7, -3), ("ELU", -20, 40)])
def test_island_is_one_int8_op_equal_to_the_island(op, zin, zout, tmp_path):
    """The fused op equals the three ops in tflite mode on every int8 input, and LiteRT's
    reference kernels where LiteRT has them all."""
    path = _island(tmp_path, op, zin, zout)
    model = read_model(path)
    assert [o.type for o in model.main.ops] == ["DEQUANTIZE", op, "QUANTIZE"]
    g = read(path).main
    (fused,) = g.ops
    assert (fused.type, fused.label) == (op, f"op 1 ({op})")
    assert [g.tensors[i].dtype for i in (*fused.inputs, *fused.outputs)] == ["int8", "int8"]
    assert len(fused.options[ISLAND_TABLE]) == 256
    xs = {g.inputs[0]: _every_int8()}
    ours = run_graph(g, xs, "tflite")[g.outputs[0]]
    island = run_graph(model.main, {model.main.inputs[0]: xs[g.inputs[0]]}, "tflite")
    np.testing.assert_array_equal(ours, island[model.main.outputs[0]])
    if op == "NEG":  # LiteRT has no reference ELU: its builtin QUANTIZE multiplies by 1/scale
        ref = reference_outputs(path, model.main, {model.main.inputs[0]: xs[g.inputs[0]]})
        np.testing.assert_array_equal(ours, ref[model.main.outputs[0]])


def test_neg_island_is_not_tflites_int8_neg(tmp_path):
    """TFLite's int8 NEG negates the stored integers; the island computes -x in real values and
    requantizes: with zero points 7 and -3 they differ, and the table is the island's."""
    g = read(_island(tmp_path, "NEG", 7, -3)).main
    table = np.asarray(g.ops[0].options[ISLAND_TABLE])
    x = np.arange(-128, 128)
    assert np.count_nonzero(table != np.clip(-x, -128, 127)) > 200


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_island_converts_and_its_c_equals_the_executor(fmt, mli_builds, tmp_path):
    path = _island(tmp_path, "ELU", -20, 40)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))
