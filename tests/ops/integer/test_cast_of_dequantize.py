"""An int8 model's token ids: DEQUANTIZE (int8 to float32) -> CAST (to int32), as TF writes
`tf.cast(x, tf.int32)` of a quantized input (a Keras `Embedding` fed float ids; found on an unseen
Keras probe). `passes/cast_quantize.py` makes it one CAST of the int8 tensor carrying its
DEQUANTIZE (`ir.DEQUANTIZED_CAST`): tflite mode equals LiteRT on every int8 value, and the emitted
C (`cast32`'s table) equals the executor on the real MLI 2.0.2 library in the four builds."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool import ir
from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options


def _model(tmp_path, scale, zp, dst="int32"):
    """x [1, 256] int8 -> DEQUANTIZE -> CAST (to `dst`) -> ADD 1 (so the cast is no output)."""
    one = np.array(1, np.dtype(dst))
    tensors = [
        T([1, 256], scale=[scale], zero_point=[zp]),
        T([1, 256], "float32"),
        T([1, 256], dst),
        T([], dst, data=one),
        T([1, 256], dst),
    ]
    ops = [
        ("DEQUANTIZE", [0], [1], None),
        ("CAST", [1], [2], None),
        ("ADD", [2, 3], [4], options("AddOptions")),
    ]
    path = tmp_path / f"cast_deq_{scale}_{zp}.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [4]))
    return path


@pytest.mark.parametrize("scale, zp", [(0.9, -3), (1.0, 0), (0.37, 20), (1 / 3, -128)])
def test_one_cast_of_the_int8_tensor_equal_to_litert_on_every_value(scale, zp, tmp_path):
    path = _model(tmp_path, scale, zp)
    g = read(path).main
    assert [op.type for op in g.ops] == ["CAST", "ADD"]
    cast = g.ops[0]
    assert cast.inputs == (0,) and cast.options[ir.DEQUANTIZED_CAST]
    xs = {0: np.arange(-128, 128).astype(np.int8).reshape(1, 1, 256)}
    ref = reference_outputs(path, g, xs)
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[4], ref[4])


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_c_on_the_real_library(fmt, mli_builds, tmp_path):
    path = _model(tmp_path, 0.37, 20)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))
