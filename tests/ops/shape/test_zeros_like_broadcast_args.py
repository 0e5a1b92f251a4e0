"""ZEROS_LIKE and BROADCAST_ARGS: tflite and float mode equal LiteRT's kernels where they run
(ZEROS_LIKE as a graph output at int32 / int64 / float32; int8, which LiteRT's kernel lacks and
TFLite Micro runs, and BROADCAST_ARGS on shapes given at run time against values written out); constant folding makes them constants where
their result is known at conversion (ZEROS_LIKE of a tensor of static shape, the batch fixed to 1;
BROADCAST_ARGS of constant shapes, and the BROADCAST_TO reading it), and such a model converts."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from mlitool.tflite.reader import read_model
from tests.support.litert import reference_outputs
from tests.support.tflite_build import T, graph_model, int32_const, options


def _compare(path, graph, inputs, modes=("tflite", "float")):
    ref = reference_outputs(path, graph, inputs)
    for mode in modes:
        ours = run_graph(graph, inputs, mode)
        for t in graph.outputs:
            want = ref[t]
            if mode == "float" and graph.tensors[t].quant is not None:
                want = graph.tensors[t].quant.dequantize(want).astype(np.float32)
            assert ours[t].dtype == want.dtype, (mode, t)
            np.testing.assert_array_equal(ours[t], want, err_msg=f"{mode} mode")


def _tensor(shape, dtype):
    if dtype == "int8":
        return T(list(shape), "int8", [0.05], -3)
    return T(list(shape), dtype)


def _zeros_like_model(tmp_path, dtype, signature=None, maximum=False):
    path = tmp_path / f"zeros_like_{dtype}_{signature}_{maximum}.tflite"
    x = dataclasses.replace(_tensor((1, 4, 3), dtype), shape_signature=signature)
    tensors = [x, _tensor((1, 4, 3), dtype), _tensor((1, 4, 3), dtype)]
    ops = [("ZEROS_LIKE", [0], [1], options("ZerosLikeOptions"))]
    if maximum:
        ops.append(("MAXIMUM", [0, 1], [2], None))
    path.write_bytes(graph_model(tensors, ops, [0], [2 if maximum else 1]))
    return path


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32"])
def test_zeros_like_as_a_graph_output_equals_litert(dtype, tmp_path):
    path = _zeros_like_model(tmp_path, dtype)
    g = read_model(str(path)).main
    x = np.random.default_rng(0).integers(-100, 100, (3, 1, 4, 3)).astype(dtype)
    _compare(path, g, {g.inputs[0]: x})


def test_int8_zeros_like_is_stored_zeros(tmp_path):
    """TFLite Micro's int8 ZEROS_LIKE writes stored zeros (LiteRT's kernel has no int8: the
    values are written out here): at zero point -3 and scale 0.05 the real value 0.15."""
    g = read_model(str(_zeros_like_model(tmp_path, "int8"))).main
    xs = {g.inputs[0]: np.full((2, 1, 4, 3), 77, np.int8)}
    tfl = run_graph(g, xs, "tflite")[g.outputs[0]]
    assert tfl.dtype == np.int8 and not tfl.any() and tfl.shape == (2, 1, 4, 3)
    np.testing.assert_array_equal(run_graph(g, xs, "float")[g.outputs[0]], np.float32(0.15))


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_zeros_like_of_a_dynamic_batch_folds_and_converts(dtype, tmp_path):
    """x [-1, 4, 3] -> ZEROS_LIKE -> MAXIMUM with x: the zeros become a constant once the
    batch is fixed to 1; the model then converts. int8: stored zeros, max(x, 0) on the stored
    values (one scale and zero point); float32: equal to LiteRT."""
    path = _zeros_like_model(tmp_path, dtype, signature=[-1, 4, 3], maximum=True)
    m = read(path)
    assert [op.type for op in m.main.ops] == ["MAXIMUM"]
    assert any("ZEROS_LIKE" in label for label in m.folded_ops)
    g = m.main
    x = np.arange(-128, 128, dtype=np.int16).reshape(-1, 1, 1, 1)
    x = np.broadcast_to(x, (256, 1, 4, 3)).astype(dtype) / (1 if dtype == "int8" else 16)
    xs = {g.inputs[0]: x.astype(dtype)}
    ours = run_graph(g, xs, "tflite")[g.outputs[0]]
    if dtype == "int8":
        np.testing.assert_array_equal(ours, np.maximum(xs[g.inputs[0]], 0))
    else:
        ref = reference_outputs(path, read_model(str(path)).main, xs)[g.outputs[0]]
        np.testing.assert_array_equal(ours, ref)
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc", weights_only=dtype != "int8")
    assert model.layers


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_broadcast_args_on_run_time_shapes(dtype, tmp_path):
    """Shapes given at run time, one pair per sample (LiteRT's interpreter aborts on this model:
    the values are written out here)."""
    path = tmp_path / f"broadcast_args_{dtype}.tflite"
    tensors = [T([4], dtype), T([3], dtype), T([4], dtype)]
    path.write_bytes(graph_model(tensors, [("BROADCAST_ARGS", [0, 1], [2], None)], [0, 1], [2]))
    g = read_model(str(path)).main
    s0 = np.array([[1, 8, 1, 4], [2, 1, 3, 1], [5, 6, 1, 1]], dtype)
    s1 = np.array([[8, 6, 1], [1, 3, 5], [6, 9, 9]], dtype)
    want = np.array([[1, 8, 6, 4], [2, 1, 3, 5], [5, 6, 9, 9]], dtype)
    for mode in ("tflite", "float"):
        out = run_graph(g, {g.inputs[0]: s0, g.inputs[1]: s1}, mode)[g.outputs[0]]
        assert out.dtype == want.dtype
        np.testing.assert_array_equal(out, want, err_msg=mode)


def test_broadcast_args_of_constants_folds_with_its_broadcast_to(tmp_path):
    """BROADCAST_ARGS of constant shapes [8, 1] and [1, 4] -> BROADCAST_TO of a constant of rank
    1 to rank 2 -> ADD to the input: both fold into the ADD's constant operand."""
    path = tmp_path / "broadcast_args_fold.tflite"
    tensors = [
        T([8, 4], "float32"),
        int32_const([8, 1]),
        int32_const([1, 4]),
        T([2], "int32", shape_signature=[-1]),
        T([4], "float32", data=np.array([1, -2, 3.5, 0.25], np.float32)),
        T([8, 4], "float32", shape_signature=[-1, -1]),
        T([8, 4], "float32"),
    ]
    ops = [
        ("BROADCAST_ARGS", [1, 2], [3], None),
        ("BROADCAST_TO", [4, 3], [5], None),
        ("ADD", [0, 5], [6], options("AddOptions")),
    ]
    path.write_bytes(graph_model(tensors, ops, [0], [6], {"BROADCAST_TO": 3}))
    m = read(path)
    assert [op.type for op in m.main.ops] == ["ADD"]
    g = m.main
    xs = {g.inputs[0]: np.random.default_rng(1).uniform(-2, 2, (3, 8, 4)).astype(np.float32)}
    ref = reference_outputs(path, read_model(str(path)).main, xs)
    np.testing.assert_array_equal(run_graph(g, xs, "float")[g.outputs[0]], ref[g.outputs[0]])


def test_broadcast_args_of_shapes_that_do_not_broadcast_is_refused(tmp_path):
    path = tmp_path / "broadcast_args_bad.tflite"
    tensors = [T([2], "int32"), int32_const([4, 5]), T([2], "int32")]
    path.write_bytes(graph_model(tensors, [("BROADCAST_ARGS", [0, 1], [2], None)], [0], [2]))
    g = read_model(str(path)).main
    with pytest.raises(UnsupportedError, match="do not broadcast"):
        run_graph(g, {g.inputs[0]: np.array([[3, 5]], np.int32)}, "tflite")
