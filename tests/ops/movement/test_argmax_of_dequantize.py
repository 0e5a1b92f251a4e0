"""ARG_MAX / ARG_MIN of a DEQUANTIZE in an int8 model (`tf.argmax` left in float by TF's int8
quantizer; found on an unseen Keras probe): read the int8 tensor itself (`passes/order_islands.py`),
identical on every input, ties included. tflite mode equals LiteRT and the emitted C equals the
executor on the real MLI 2.0.2 library in the four builds."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, int32_const, options


def _model(tmp_path, scale=0.05, zp=-3):
    """x [1, 6, 10] int8 -> DEQUANTIZE -> ARG_MAX and ARG_MIN on the last axis (int32 out)."""
    tensors = [
        T([1, 6, 10], scale=[scale], zero_point=[zp]),
        T([1, 6, 10], "float32"),
        int32_const([-1]),
        T([1, 6], "int32"),
        T([1, 6], "int32"),
    ]
    ops = [
        ("DEQUANTIZE", [0], [1], None),
        ("ARG_MAX", [1, 2], [3], options("ArgMaxOptions", outputType=2)),
        ("ARG_MIN", [1, 2], [4], options("ArgMinOptions", outputType=2)),
    ]
    path = tmp_path / f"argmax_deq_{scale}.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [3, 4]))
    return path


@pytest.mark.parametrize("scale", [0.05, 1e-6, 3.0])
def test_the_index_ops_read_the_int8_tensor_and_equal_litert(scale, tmp_path):
    path = _model(tmp_path, scale)
    g = read(path).main
    assert [op.type for op in g.ops] == ["ARG_MAX", "ARG_MIN"]
    assert all(op.inputs[0] == 0 for op in g.ops)
    rng = np.random.default_rng(1)
    x = rng.integers(-128, 128, (4, 1, 6, 10)).astype(np.int8)
    x[0, 0, :, 3] = x[0, 0, :, 7] = 127  # ties: the first index wins
    x[1, 0, :, 2] = x[1, 0, :, 5] = -128
    xs = {0: x}
    ref = reference_outputs(path, g, xs)
    ours = run_graph(g, xs, "tflite")
    for o in g.outputs:
        np.testing.assert_array_equal(ours[o], ref[o])


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_c_on_the_real_library(fmt, mli_builds, tmp_path):
    path = _model(tmp_path)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


def _head(tmp_path):
    """x [1, 10] int8 -> DEQUANTIZE -> ARG_MIN (int64 [1]) -> CAST float -> QUANTIZE int8, as TF
    writes `tf.cast(tf.argmin(d), tf.float32)` of an int8 model: MLI's argmax writes [1, 1]."""
    tensors = [
        T([1, 10], scale=[0.05], zero_point=[-3]),
        T([1, 10], "float32"),
        int32_const([-1]),
        T([1], "int64"),
        T([1], "float32"),
        T([1], scale=[0.04], zero_point=[-128]),
    ]
    ops = [
        ("DEQUANTIZE", [0], [1], None),
        ("ARG_MIN", [1, 2], [3], options("ArgMinOptions", outputType=4)),
        ("CAST", [3], [4], None),
        ("QUANTIZE", [4], [5], None),
    ]
    path = tmp_path / "argmin_head.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [5]))
    return path


def test_an_index_cast_and_quantized_equals_litert_and_its_c_the_executor(mli_builds, tmp_path):
    path = _head(tmp_path)
    g = read(path).main
    assert [op.type for op in g.ops] == ["ARG_MIN", "CAST"]
    x = np.random.default_rng(2).integers(-128, 128, (6, 1, 10)).astype(np.int8)
    ref = reference_outputs(path, g, {0: x})
    np.testing.assert_array_equal(run_graph(g, {0: x}, "tflite")[5], ref[5])
    H.assert_bit_exact(H.run_case(path, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0")))
