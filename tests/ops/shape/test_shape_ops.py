"""The shape-arithmetic and index ops (SHAPE, STRIDED_SLICE with every mask, PACK, UNPACK,
GATHER, REDUCE_PROD, CAST, FILL, RANGE, TILE, RESIZE_NEAREST_NEIGHBOR): tiny models built here,
`tflite` and `float` modes compared exactly with the interpreter's reference kernels, output
shapes included (validation's shape check runs the same kernels: no problem is reported)."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.reference.graph import run_graph
from mlitool.execute.reference.inputs import random_inputs
from mlitool.tflite.reader import read_model
from mlitool.tflite.validate import problems
from tests.support.litert import reference_outputs
from tests.support.tflite_build import T, graph_model, options, single_op_model

INT32, FLOAT32, BOOL = 2, 0, 6


def q8(shape, scale=0.05, zp=-3):
    return T(list(shape), "int8", scale, zp)


def raw(shape, dtype="int32"):
    return T(list(shape), dtype, None)


def const(data, dtype="int32"):
    data = np.asarray(data, dtype=dtype)
    return T(list(data.shape), dtype, None, 0, 0, data)


def _ss(**masks):
    return options("StridedSliceOptions", **masks)


# name: (op, inputs, outputs, options)
CASES = {
    "shape": ("SHAPE", [q8((1, 3, 5, 2))], [raw([4])], options("ShapeOptions", outType=INT32)),
    "shape_int64": (
        "SHAPE",
        [raw((2, 7), "float32")],
        [raw([2], "int64")],
        options("ShapeOptions", outType=4),
    ),
    "strided_shrink_scalar": (
        "STRIDED_SLICE",
        [raw([4]), const([0]), const([1]), const([1])],
        [raw([])],
        _ss(shrinkAxisMask=1),
    ),
    "strided_begin_end_masks_negative_stride": (
        "STRIDED_SLICE",
        [q8((1, 6, 7, 3)), const([0, 1, -1, 0]), const([1, 5, 0, 2]), const([1, 2, -2, 1])],
        [q8((1, 2, 3, 3))],
        _ss(beginMask=0b0001, endMask=0b1000),
    ),
    "strided_ellipsis_new_axis": (
        "STRIDED_SLICE",
        [q8((1, 4, 5, 3)), const([0, 0, 1]), const([0, 0, 3]), const([1, 1, 1])],
        [q8((1, 4, 5, 1, 2))],
        _ss(ellipsisMask=0b001, newAxisMask=0b010),
    ),
    "strided_offset": (
        "STRIDED_SLICE",
        [raw((1, 5), "float32"), const([0, 1]), const([1, 3]), const([1, 1])],
        [raw((1, 3), "float32")],
        _ss(offset=True),
    ),
    "pack_axis1": (
        "PACK",
        [q8((1, 3)), q8((1, 3))],
        [q8((1, 2, 3))],
        options("PackOptions", valuesCount=2, axis=1),
    ),
    "pack_scalars": (
        "PACK",
        [raw([]), const(144)],
        [raw([2])],
        options("PackOptions", valuesCount=2, axis=0),
    ),
    "unpack_axis1": (
        "UNPACK",
        [q8((1, 3, 4))],
        [q8((1, 4)), q8((1, 4)), q8((1, 4))],
        options("UnpackOptions", num=3, axis=1),
    ),
    "gather_axis1": (
        "GATHER",
        [q8((1, 5, 4)), const([3, 0, 3])],
        [q8((1, 3, 4))],
        options("GatherOptions", axis=1),
    ),
    "gather_shape_vector": (
        "GATHER",
        [raw([3]), const([0, 1])],
        [raw([2])],
        options("GatherOptions", axis=0),
    ),
    "gather_batch_dims": (
        "GATHER",
        [raw((2, 5, 3), "float32"), const([[4, 0], [2, 2]])],
        [raw((2, 2, 3), "float32")],
        options("GatherOptions", axis=1, batchDims=1),
    ),
    "reduce_prod_float_two_axes": (
        "REDUCE_PROD",
        [raw((1, 4, 6), "float32"), const([2, 1])],
        [raw([1], "float32")],
        options("ReducerOptions", keepDims=False),
    ),
    "reduce_prod_int32_keep": (
        "REDUCE_PROD",
        [raw((2, 3)), const([0])],
        [raw((1, 3))],
        options("ReducerOptions", keepDims=True),
    ),
    "cast_float_to_int32": ("CAST", [raw((1, 9), "float32")], [raw((1, 9))], None),
    "cast_int32_to_float": (
        "CAST",
        [raw((1, 9))],
        [raw((1, 9), "float32")],
        options("CastOptions", inDataType=INT32, outDataType=FLOAT32),
    ),
    "cast_int8_to_bool": ("CAST", [raw((1, 9), "int8")], [raw((1, 9), "bool")], None),
    "fill_from_input_value": (
        "FILL",
        [const([2, 3]), raw([], "float32")],
        [raw((2, 3), "float32")],
        None,
    ),
    "tile_int8": ("TILE", [q8((1, 2, 3, 1)), const([1, 2, 1, 3])], [q8((1, 4, 3, 3))], None),
    "tile_shape_vector": ("TILE", [raw([2]), const([3])], [raw([6])], None),
}
for _align, _half in ((0, 0), (1, 0), (0, 1)):
    CASES[f"resize_nearest_align{_align}_half{_half}"] = (
        "RESIZE_NEAREST_NEIGHBOR",
        [q8((1, 3, 5, 2)), const([7, 4])],
        [q8((1, 7, 4, 2))],
        options(
            "ResizeNearestNeighborOptions", alignCorners=bool(_align), halfPixelCenters=bool(_half)
        ),
    )
CASES["resize_nearest_upsample_x2"] = (
    "RESIZE_NEAREST_NEIGHBOR",
    [raw((1, 3, 4, 2), "float32"), const([6, 8])],
    [raw((1, 6, 8, 2), "float32")],
    None,
)


def _inputs(case, graph):
    inputs = random_inputs(graph, 6, seed=5)
    if case == "cast_float_to_int32":  # both signs, fractions to truncate
        inputs = {k: v * np.float32(300) for k, v in inputs.items()}
    if case == "reduce_prod_int32_keep":  # products that wrap int32 and some that do not
        inputs = {k: (v % 3000).astype(np.int32) - 1500 for k, v in inputs.items()}
    if case == "cast_int8_to_bool":
        inputs = {k: (v % 3).astype(np.int8) for k, v in inputs.items()}  # zeros too
    return inputs


def _compare(path, graph, inputs):
    ref = reference_outputs(path, graph, inputs)
    for mode in ("tflite", "float"):
        ours = run_graph(graph, inputs, mode, keep=True)
        for t in graph.outputs:
            want = ref[t]
            if mode == "float" and graph.tensors[t].quant is not None:
                want = graph.tensors[t].quant.dequantize(want).astype(np.float32)
            assert ours[t].dtype == want.dtype, (mode, t)
            assert ours[t].shape == want.shape, (mode, t)
            np.testing.assert_array_equal(ours[t], want, err_msg=f"{mode} mode, tensor {t}")


@pytest.mark.parametrize("case", sorted(CASES))
def test_op_matches_interpreter(case, tmp_path):
    op, ins, outs, opts = CASES[case]
    path = tmp_path / f"{case}.tflite"
    path.write_bytes(single_op_model(op, ins, outs, opts))
    graph = read_model(str(path)).main
    assert [str(p) for p in problems(graph)] == []
    _compare(path, graph, _inputs(case, graph))


def test_range_int_and_float(tmp_path):
    """RANGE on constants (its output shape depends on their values): int32 counting down, and
    float32 whose values are a running sum of delta (not start + i * delta)."""
    tensors = [
        const(7),
        const(-6),
        const(-3),
        raw([5]),  # 7, 4, 1, -2, -5
        const(np.float32(0.1), "float32"),
        const(np.float32(2.45), "float32"),
        const(np.float32(0.3), "float32"),
        raw([8], "float32"),
        raw([8], "float32"),  # input
        raw([8], "float32"),
    ]
    ops = [
        ("RANGE", [0, 1, 2], [3], None),
        ("RANGE", [4, 5, 6], [7], None),
        ("ADD", [7, 8], [9], options("AddOptions")),
    ]
    path = tmp_path / "range.tflite"
    path.write_bytes(graph_model(tensors, ops, [8], [3, 7, 9]))
    graph = read_model(str(path)).main
    assert [str(p) for p in problems(graph)] == []
    _compare(path, graph, random_inputs(graph, 3, seed=1))
