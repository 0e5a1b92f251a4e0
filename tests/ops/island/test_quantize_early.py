"""Float branches joined by a float CONCATENATION / PACK and quantized once after it
(`passes/quantize_early.py`): TF's int8 quantizer writes DEQUANTIZE -> SIN / COS / FLOOR ->
CONCATENATION (float32) -> QUANTIZE for sinusoidal features or quantizers. The QUANTIZE moves onto
each branch, each branch becomes an int8 island: tflite mode equals LiteRT, the mli executor equals
it, and the emitted C equals the executor on the real MLI 2.0.2 library in the four builds."""

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
from tests.support.tflite_build import T, graph_model, options

S = [1, 6, 4]


def _model(tmp_path, join="CONCATENATION", same_params=False):
    """x -> DEQUANTIZE -> {SIN, FLOOR, x itself} -> `join` (float32) -> QUANTIZE(int8).
    `same_params`: the output has x's parameters (the plain branch then is x itself)."""
    out_q = (0.05, 3) if same_params else (0.013, -7)
    joined = [1, 6, 12] if join == "CONCATENATION" else [1, 3, 6, 4]
    tensors = [
        T(S, scale=[0.05], zero_point=3),  # 0 x
        T(S, dtype="float32"),  # 1 dequantized
        T(S, dtype="float32"),  # 2 sin
        T(S, dtype="float32"),  # 3 floor
        T(joined, dtype="float32"),  # 4 joined
        T(joined, scale=[out_q[0]], zero_point=out_q[1]),  # 5 output
    ]
    join_options = (
        options("ConcatenationOptions", axis=2)
        if join == "CONCATENATION"
        else options("PackOptions", valuesCount=3, axis=1)
    )
    ops = [
        ("DEQUANTIZE", [0], [1], None),
        ("SIN", [1], [2], None),
        ("FLOOR", [1], [3], None),
        (join, [2, 3, 1], [4], join_options),
        ("QUANTIZE", [4], [5], None),
    ]
    path = tmp_path / f"{join.lower()}_{same_params}.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [5]))
    return path


def _x(g, n=8, seed=0):
    t = g.tensors[g.inputs[0]]
    rng = np.random.default_rng(seed)
    return {g.inputs[0]: rng.integers(-128, 128, (n, *t.shape)).astype(np.int8)}


@pytest.mark.parametrize("join", ["CONCATENATION", "PACK"])
@pytest.mark.parametrize("same_params", [False, True])
def test_each_branch_is_quantized_and_equals_litert(join, same_params, tmp_path):
    path = _model(tmp_path, join, same_params)
    g = read(path).main
    types = [op.type for op in g.ops]
    assert "QUANTIZE" not in types and "DEQUANTIZE" not in types, types
    assert types.count(join) == 1
    join_op = next(op for op in g.ops if op.type == join)
    assert all(g.tensors[i].dtype == "int8" for i in join_op.inputs)
    assert (join_op.inputs[2] == g.inputs[0]) == same_params  # x itself when the params agree
    xs = _x(g)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[g.outputs[0]], ref)
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    np.testing.assert_array_equal(ours[g.outputs[0]], ref)


def test_a_concatenation_read_by_another_op_stays_float(tmp_path):
    """The float result also feeds a graph output: nothing to move the QUANTIZE onto."""
    tensors = [
        T(S, scale=[0.05], zero_point=3),
        T(S, dtype="float32"),
        T(S, dtype="float32"),
        T([1, 6, 8], dtype="float32"),
        T([1, 6, 8], scale=[0.02], zero_point=0),
    ]
    ops = [
        ("DEQUANTIZE", [0], [1], None),
        ("SIN", [1], [2], None),
        ("CONCATENATION", [2, 1], [3], options("ConcatenationOptions", axis=2)),
        ("QUANTIZE", [3], [4], None),
    ]
    other = tmp_path / "float_out.tflite"
    other.write_bytes(graph_model(tensors, ops, [0], [4, 3]))
    assert [op.type for op in read(other).main.ops] == [
        "DEQUANTIZE",
        "SIN",
        "CONCATENATION",
        "QUANTIZE",
    ]


def test_c_on_the_real_library(mli_builds, tmp_path):
    path = _model(tmp_path)
    H.assert_bit_exact(H.run_case(path, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0")))
