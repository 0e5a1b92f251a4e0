"""Slices whose output's leading dimension is not a batch (issue 35): a STRIDED_SLICE that shrinks
[1, 8, 8, 4] to the rank-2 [8, 2] or the rank-3 [8, 8, 4], and a SLICE of rows of such a
tensor, were refused as "has batch 8". They pick elements, so that dimension is rows: tflite mode
equals LiteRT, the lowered views / copies equal tflite mode, and the emitted C equals the
executor on the real MLI 2.0.2 library in the four builds (between a TANH and a RELU)."""

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
from tests.support.tflite_build import T, activation, graph_model, int32_const, options

Q = (1 / 128, 0)  # TANH's int8 output parameters


# name -> [(op, constant inputs, output shape, options)], applied in turn to a [1, 8, 8, 4] input
CASES = {
    # x[0, :, 3, 1:3]: shrink axes 0 and 2
    "shrink_rank2": [
        (
            "STRIDED_SLICE",
            [[0, 0, 3, 1], [1, 8, 4, 3], [1, 1, 1, 1]],
            (8, 2),
            {"shrinkAxisMask": 5},
        )
    ],
    # x[0, :, ::2, :]: shrink axis 0, a strided view of rows
    "shrink_rank3": [
        (
            "STRIDED_SLICE",
            [[0, 0, 0, 0], [1, 8, 8, 4], [1, 1, 2, 1]],
            (8, 4, 4),
            {"shrinkAxisMask": 1},
        )
    ],
    # x[0, :, 3, 1:3], then rows 2..6 of that [8, 2]
    "rows_of_rows": [
        (
            "STRIDED_SLICE",
            [[0, 0, 3, 1], [1, 8, 4, 3], [1, 1, 1, 1]],
            (8, 2),
            {"shrinkAxisMask": 5},
        ),
        ("SLICE", [[2, 0], [5, 2]], (5, 2), None),
    ],
}
_OPTS = {"STRIDED_SLICE": "StridedSliceOptions", "SLICE": "SliceOptions"}


def _model(tmp_path, name, dtype="int8", between=False):
    tensors = [activation((1, 8, 8, 4), dtype, q=Q)]
    ops, x = [], 0
    for op, consts, out_shape, opts in CASES[name]:
        ins = [x]
        for c in consts:
            tensors.append(int32_const(c))
            ins.append(len(tensors) - 1)
        tensors.append(activation(out_shape, dtype, q=Q))
        x = len(tensors) - 1
        ops.append((op, ins, [x], options(_OPTS[op], **opts) if opts else None))
    graph_in, graph_out = 0, x
    if between:
        tensors += [activation((1, 8, 8, 4), dtype, q=Q), activation(out_shape, dtype, q=Q)]
        ops = [("TANH", [len(tensors) - 2], [0], None), *ops]
        ops.append(("RELU", [x], [len(tensors) - 1], None))
        graph_in, graph_out = len(tensors) - 2, len(tensors) - 1
    path = tmp_path / f"{name}_{dtype}{'_between' if between else ''}.tflite"
    path.write_bytes(graph_model(tensors, ops, [graph_in], [graph_out]))
    return path


def _inputs(g, n=3, seed=0) -> dict:
    rng = np.random.default_rng(seed)
    t = g.tensors[g.inputs[0]]
    if t.dtype == "float32":
        return {g.inputs[0]: rng.uniform(-4, 4, (n, *t.shape)).astype(np.float32)}
    info = np.iinfo(t.dtype)
    return {g.inputs[0]: rng.integers(info.min, info.max + 1, (n, *t.shape)).astype(t.dtype)}


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_modes_equal_litert_and_lowering_equals_tflite_mode(name, dtype, tmp_path):
    path = _model(tmp_path, name, dtype)
    g = read(path).main
    xs = _inputs(g)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    mode = "float" if dtype == "float32" else "tflite"
    np.testing.assert_array_equal(run_graph(g, xs, mode)[g.outputs[0]], ref)
    fmt = {"int8": "sa8", "int16": "fx16", "float32": "fp32"}[dtype]
    if fmt == "fp32":
        return  # float32 activations: the sa8 / fx16 C checks below cover the lowering
    model = lower(g, format=fmt, mli_version="2.0", layout="hwc")
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    np.testing.assert_array_equal(ours[g.outputs[0]], ref)


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_c_on_the_real_library(name, fmt, mli_builds, tmp_path):
    path = _model(tmp_path, name, between=True)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


def _rows_model(tmp_path, between=False):
    """x [1, 8, 8, 4] -> STRIDED_SLICE to the rows [8, 2] -> GREATER(rows, k),
    DIV(rows, 3), SQUARED_DIFFERENCE(rows, k2 [2]) -> SELECT_V2(cond, div, sqd): the element-wise
    fallbacks on rows."""
    q = dict(scale=[0.05], zero_point=3)
    tensors = [
        T([1, 8, 8, 4], **q),
        int32_const([0, 0, 3, 1]),
        int32_const([1, 8, 4, 3]),
        int32_const([1, 1, 1, 1]),
        T([8, 2], **q),  # 4 rows
        T([], data=np.array(10, np.int8), **q),  # 5
        T([8, 2], dtype="bool"),  # 6
        T([], data=np.array(63, np.int8), **q),  # 7: 3.0
        T([8, 2], scale=[0.03], zero_point=-2),  # 8 div
        T([2], data=np.array([-40, 50], np.int8), **q),  # 9
        T([8, 2], scale=[0.03], zero_point=-2),  # 10 sqd
        T([8, 2], scale=[0.03], zero_point=-2),  # 11 select
    ]
    ops = [
        ("STRIDED_SLICE", [0, 1, 2, 3], [4], options("StridedSliceOptions", shrinkAxisMask=5)),
        ("GREATER", [4, 5], [6], None),
        ("DIV", [4, 7], [8], options("DivOptions")),
        ("SQUARED_DIFFERENCE", [4, 9], [10], None),
        ("SELECT_V2", [6, 8, 10], [11], None),
    ]
    graph_in, graph_out = 0, 11
    if between:
        tensors += [T([1, 8, 8, 4], **q), T([8, 2], scale=[0.03], zero_point=-2)]
        ops = [("TANH", [12], [0], None), *ops, ("RELU", [11], [13], None)]
        graph_in, graph_out = 12, 13
    path = tmp_path / f"rows{'_between' if between else ''}.tflite"
    path.write_bytes(graph_model(tensors, ops, [graph_in], [graph_out]))
    return path


def test_elementwise_fallbacks_on_rows(tmp_path, mli_builds):
    """GREATER, DIV, SQUARED_DIFFERENCE and SELECT_V2 on [8, 2] rows (were refused as "has batch
    8"): tflite mode equals LiteRT, mli mode equals tflite mode, the C the executor."""
    path = _rows_model(tmp_path)
    g = read(path).main
    xs = _inputs(g)
    ref = reference_outputs(path, g, xs)
    ours = run_graph(g, xs, "tflite", keep=True)
    for op in g.ops:
        np.testing.assert_array_equal(ours[op.outputs[0]], ref[op.outputs[0]], err_msg=op.label)
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    mli, _ = run_mli(g, model, xs, arith_for("vpx"))
    np.testing.assert_array_equal(mli[g.outputs[0]], ref[g.outputs[0]])
    between = _rows_model(tmp_path, between=True)
    for fmt in ("sa8", "fx16"):
        H.assert_bit_exact(H.run_case(between, fmt, tmp_path / fmt, mli_builds, mli_cflags("2.0")))
