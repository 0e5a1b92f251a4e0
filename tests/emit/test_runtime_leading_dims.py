"""Leading dimensions other than 1 that are rows or time steps, not a batch: a Keras
Reshape((16, 16)) before a Dense ([16, 16] rows of a FULLY_CONNECTED), and an unrolled-RNN-like
RESHAPE to [32, 1, 16] read by element-wise ops and activations. Lowering keeps the dimension
(the MLI tensors are [16, 16] and [32, 1, 16]); the emitted C on the real MLI 2.0.2 library in
the four builds equals `run --mode mli`, and tflite mode equals LiteRT."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.execute.reference.graph import run_graph
from mlitool.execute.reference.inputs import random_inputs
from mlitool.mli.lower.driver import lower
from mlitool.mli.lower.support import unsupported_ops
from mlitool.mli.target import MLI11
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options

KERAS = Path(__file__).parents[1] / "fixtures" / "keras"


def unrolled_model(path: Path) -> Path:
    """x [1, 32, 16] -RESHAPE-> a [32, 1, 16]; RELU(a) -> r; TANH(a) -> t; MUL(r, t) -> m;
    ADD(m, constant [16]) -> d; ADD(d, g [1, 1, 16], a second input broadcast over the 32 rows)
    -> e; RESHAPE(e) -> y [1, 32, 16]."""
    rng = np.random.default_rng(7)
    rows = [32, 1, 16]
    tensors = [
        T([1, 32, 16], scale=0.05, zero_point=3, name="x"),
        T([3], "int32", data=np.array(rows, np.int32), name="rows_shape"),
        T(rows, scale=0.05, zero_point=3, name="a"),
        T(rows, scale=0.05, zero_point=3, name="r"),
        T(rows, scale=1 / 128, zero_point=0, name="t"),
        T(rows, scale=0.03, zero_point=-20, name="m"),
        T([16], scale=0.02, zero_point=1, data=rng.integers(-128, 128, 16).astype(np.int8)),
        T(rows, scale=0.04, zero_point=-6, name="d"),
        T([1, 1, 16], scale=0.03, zero_point=2, name="g"),
        T(rows, scale=0.06, zero_point=-1, name="e"),
        T([3], "int32", data=np.array([1, 32, 16], np.int32), name="y_shape"),
        T([1, 32, 16], scale=0.06, zero_point=-1, name="y"),
    ]
    ops = [
        ("RESHAPE", [0, 1], [2], options("ReshapeOptions", newShape=rows)),
        ("RELU", [2], [3], None),
        ("TANH", [2], [4], None),
        ("MUL", [3, 4], [5], options("MulOptions")),
        ("ADD", [5, 6], [7], options("AddOptions")),
        ("ADD", [7, 8], [9], options("AddOptions")),
        ("RESHAPE", [9, 10], [11], options("ReshapeOptions", newShape=[1, 32, 16])),
    ]
    path.write_bytes(graph_model(tensors, ops, [0, 8], [11]))
    return path


def test_leading_dimensions_are_kept_in_the_mli_shapes(tmp_path):
    g = read(unrolled_model(tmp_path / "rows.tflite")).main
    model = lower(g, format="sa8")
    shapes = {n: model.tensor(n).shape for n in ("a", "e", "g", "y")}
    assert shapes == {"a": (32, 1, 16), "e": (32, 1, 16), "g": (1, 16), "y": (32, 16)}
    add = next(la for la in model.layers if la.index == 5)
    # g broadcasts over the 32 rows: 16 calls (one per channel, g's value the scalar) over the
    # channel's 32 elements, not 32 calls over [1, 16]
    assert add.calls is not None and add.calls.loops == (2,)


def test_keras_reshape_view_has_the_rows():
    """This export was refused as "batch 16" (RESHAPE to [16, 16] rows, and back)."""
    keras = lower(read(KERAS / "reshape_dense_int8.tflite").main, format="sa8")
    view = next(la for la in keras.layers if la.op_type == "RESHAPE")
    assert keras.tensor(view.outputs[0]).shape == (16, 16)  # Reshape((16, 16)): 16 rows


def test_leading_dimensions_of_other_ops_stay_refused(tmp_path):
    """Where the arithmetic runs along an axis (SOFTMAX) the leading dimension is still a batch."""
    path = tmp_path / "softmax.tflite"
    tensors = [
        T([1, 8, 4], scale=0.05, name="x"),
        T([2], "int32", data=np.array([8, 4], np.int32)),
        T([8, 4], scale=0.05, name="rows"),
        T([8, 4], scale=1 / 256, zero_point=-128, name="p"),
    ]
    ops = [
        ("RESHAPE", [0, 1], [2], options("ReshapeOptions", newShape=[8, 4])),
        ("SOFTMAX", [2], [3], options("SoftmaxOptions", beta=1.0)),
    ]
    path.write_bytes(graph_model(tensors, ops, [0], [3]))
    assert unsupported_ops(read(path).main) == [
        "op 1 (SOFTMAX): tensor 'rows' has batch 8 (MLI runs batch 1)"
    ]
    # MLI 1.x CHW reads rank-3 tensors as CHW: the rows stay refused there
    rows = read(unrolled_model(tmp_path / "rows.tflite")).main
    assert unsupported_ops(rows, MLI11, "chw")[0] == (
        "op 0 (RESHAPE): tensor 'a' has batch 32 (MLI runs batch 1)"
    )
    hwc = unsupported_ops(rows, MLI11, "hwc")  # only the broadcast ADD (MLI 2.x slices)
    assert [r.split(":")[0] for r in hwc] == ["op 5 (ADD)"]


def test_unrolled_rows_in_tflite_and_mli_modes_against_litert(tmp_path):
    """tflite mode equals LiteRT's reference kernels at every op; mli mode equals them up to
    the RELU, TANH and MUL and is within 1-2 LSB after the ADDs (MLI's own rounding, measured;
    the broadcast ADD adds its operand's 1 LSB): a row or lane out of place would differ by
    far more."""
    path = unrolled_model(tmp_path / "rows.tflite")
    g = read(path).main
    inputs = random_inputs(g, 8, seed=5)
    ref = reference_outputs(path, g, inputs)
    ours = run_graph(g, inputs, "tflite", keep=True)
    for t, want in ref.items():
        np.testing.assert_array_equal(ours[t], want, err_msg=g.tensors[t].name)
    mli, _ = run_mli(g, lower(g, format="sa8"), inputs, Arith(), keep=True)
    lsb = {
        g.tensors[t].name: int(np.abs(mli[t].astype(int) - want.astype(int)).max())
        for t, want in ref.items()
    }
    assert lsb == {"a": 0, "r": 0, "t": 0, "m": 0, "d": 1, "e": 2, "y": 2}


CASES = [("unrolled", "sa8"), ("unrolled", "fx16"), ("keras", "sa8"), ("keras", "fx16")]


@pytest.mark.parametrize("model,fmt", CASES, ids=[f"{m}-{f}" for m, f in CASES])
def test_runtime_equals_executor(model, fmt, mli_builds, tmp_path):
    path = (
        unrolled_model(tmp_path / "rows.tflite")
        if model == "unrolled"
        else KERAS / "reshape_dense_int8.tflite"
    )
    H.assert_bit_exact(
        H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0"), samples=8)
    )
