"""Bool islands and a moved island in int8 models become int8 ops at import
(`mlitool.passes.bool_islands`, `mlitool.passes.moved_islands`): `tf.where(x > c, x, -x)` left in
float (a float comparison writing bool, SELECT_V2 of float values, QUANTIZE) and an UNPACK of a
dequantized tensor. tflite mode equals LiteRT's reference kernels running the float island on
every int8 value, no float tensor is left, inspect's options name how each runs, and the
emitted C equals the mli executor on the real MLI 2.0.2 library in the four builds."""

from __future__ import annotations

import numpy as np

from mlitool.execute.reference.graph import run_graph
from mlitool.ir import ISLAND_OP, ISLAND_RUNS, ISLAND_TABLE
from mlitool.passes.upsampling import REWRITTEN_FROM
from mlitool.pipeline import read
from mlitool.tflite.reader import read_model
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options

SHAPE = [1, 8, 8, 4]


def _scalar(v: float) -> T:
    return T([], "float32", data=np.float32(v))


def _where(tmp_path, shared_select: bool = False):
    """out A = QUANTIZE(where(x > 0.25, x, -x)) on other parameters than x's; out B =
    QUANTIZE(where(-x <= 0.1, 1.5, x)) on x's; the comparisons in float32, one DEQUANTIZE for all.
    `shared_select`: A's float SELECT is also a graph output (A's island stays)."""
    tensors = [T(SHAPE, scale=[0.05], zero_point=[3])]  # 0 x
    tensors += [T(SHAPE, "float32"), T(SHAPE, "float32"), _scalar(0.25)]  # 1 deq, 2 neg, 3
    tensors += [T(SHAPE, "bool"), T(SHAPE, "float32"), T(SHAPE, scale=[0.07], zero_point=[-5])]
    tensors += [_scalar(0.1), T(SHAPE, "bool"), _scalar(1.5), T(SHAPE, "float32")]  # 7..10
    tensors += [T(SHAPE, scale=[0.05], zero_point=[3])]  # 11
    select = options("SelectV2Options")
    ops = [
        ("DEQUANTIZE", [0], [1], None),
        ("NEG", [1], [2], None),
        ("GREATER", [1, 3], [4], None),
        ("SELECT_V2", [4, 1, 2], [5], select),
        ("QUANTIZE", [5], [6], None),
        ("LESS_EQUAL", [2, 7], [8], None),
        ("SELECT_V2", [8, 9, 1], [10], select),
        ("QUANTIZE", [10], [11], None),
    ]
    path = tmp_path / "where.tflite"
    outs = [6, 11, 5] if shared_select else [6, 11]
    path.write_bytes(graph_model(tensors, ops, [0], outs))
    return path


def _unpack(tmp_path):
    """UNPACK of a dequantized [1, 4, 3, 2] along axis 1: slice 1 quantized on x's parameters,
    slice 2 on two others, slices 0 and 3 unread."""
    shape = [1, 4, 3, 2]
    tensors = [T(shape, scale=[0.05], zero_point=[3]), T(shape, "float32")]
    tensors += [T([1, 3, 2], "float32") for _ in range(4)]  # 2..5
    tensors += [
        T([1, 3, 2], scale=[0.05], zero_point=[3]),
        T([1, 3, 2], scale=[0.1], zero_point=[-7]),
        T([1, 3, 2], scale=[0.03], zero_point=[0]),
    ]
    ops = [
        ("DEQUANTIZE", [0], [1], None),
        ("UNPACK", [1], [2, 3, 4, 5], options("UnpackOptions", num=4, axis=1)),
        ("QUANTIZE", [3], [6], None),
        ("QUANTIZE", [4], [7], None),
        ("QUANTIZE", [4], [8], None),
    ]
    path = tmp_path / "unpack.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [6, 7, 8]))
    return path


def _check_equals_litert(path):
    g = read(path).main
    shape = g.tensors[0].shape
    n = -(-256 // int(np.prod(shape)))  # samples holding every int8 value, then one random
    x = np.resize(np.arange(-128, 128), (n, *shape))
    x = np.concatenate([x, np.random.default_rng(0).integers(-128, 128, (1, *shape))])
    x = x.astype(np.int8)
    ref = reference_outputs(path, read_model(path).main, {0: x})
    ours = run_graph(g, {0: x}, "tflite")
    for o in g.outputs:
        np.testing.assert_array_equal(ours[o], ref[o].reshape(ours[o].shape))
    return g


def test_where_islands_are_int8_ops_equal_to_litert(tmp_path):
    g = _check_equals_litert(_where(tmp_path))
    assert [(op.label, op.type) for op in g.ops] == [
        ("op 1 (NEG)", ISLAND_OP),  # -x on A's parameters
        ("op 2 (GREATER)", ISLAND_OP),
        ("op 4 (QUANTIZE)", ISLAND_OP),  # x on A's parameters: the DEQUANTIZE is B's too
        ("op 3 (SELECT_V2)", "SELECT_V2"),
        ("op 5 (LESS_EQUAL)", ISLAND_OP),
        ("op 6 (SELECT_V2)", "SELECT_V2"),
    ]
    assert all(g.tensors[i].dtype in ("int8", "bool") for op in g.ops for i in op.outputs)
    assert all(ISLAND_RUNS in op.options and REWRITTEN_FROM in op.options for op in g.ops)
    greater, less_equal = g.ops[1], g.ops[4]
    values = np.float32(0.05) * (np.arange(-128, 128) - 3).astype(np.float32)
    np.testing.assert_array_equal(greater.options[ISLAND_TABLE], values > np.float32(0.25))
    np.testing.assert_array_equal(less_equal.options[ISLAND_TABLE], -values <= np.float32(0.1))
    select_b = g.ops[5]
    assert select_b.inputs[2] == 0  # x itself: B's parameters are x's
    assert g.tensors[select_b.inputs[1]].data.item() == 33  # 1.5 / 0.05 + 3


def test_where_island_read_outside_stays_float(tmp_path):
    g = read(_where(tmp_path, shared_select=True)).main
    kept = [op for op in g.ops if op.type == "SELECT_V2" and op.outputs == (5,)]
    assert len(kept) == 1 and g.tensors[kept[0].inputs[1]].dtype == "float32"


def test_unpack_island_is_an_int8_unpack_equal_to_litert(tmp_path):
    g = _check_equals_litert(_unpack(tmp_path))
    assert [op.type for op in g.ops] == ["UNPACK", ISLAND_OP, ISLAND_OP]
    unpack = g.ops[0]
    assert unpack.inputs == (0,) and unpack.outputs[1] == 6  # written straight into out 6
    assert all(g.tensors[o].dtype == "int8" for o in unpack.outputs)


def test_where_and_unpack_c_on_the_real_library(mli_builds, tmp_path):
    for make in (_where, _unpack):
        path = make(tmp_path)
        out = tmp_path / f"out_{make.__name__}"
        H.assert_bit_exact(H.run_case(path, "sa8", out, mli_builds, mli_cflags("2.0")))
