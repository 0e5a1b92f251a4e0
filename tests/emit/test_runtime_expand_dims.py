"""EXPAND_DIMS is a view like RESHAPE: a Keras-style Conv1D (EXPAND_DIMS -> CONV_2D over one
row -> SQUEEZE) converts, its C on the real MLI 2.0.2 library equals `run --mode mli`, and
tflite mode equals LiteRT."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mlitool.execute.reference.graph import run_graph
from mlitool.execute.reference.inputs import random_inputs
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options


def conv1d_model(path: Path) -> Path:
    """x [1, 12, 8] -EXPAND_DIMS(axis 1)-> [1, 1, 12, 8] -CONV_2D 1x3 VALID-> [1, 1, 10, 6]
    -SQUEEZE(1)-> y [1, 10, 6]."""
    rng = np.random.default_rng(2)
    tensors = [
        T([1, 12, 8], scale=0.05, zero_point=-7, name="x"),
        T([1], "int32", data=np.array([1], np.int32), name="axis"),
        T([1, 1, 12, 8], scale=0.05, zero_point=-7, name="x_row"),
        T([6, 1, 3, 8], scale=0.01, data=rng.integers(-127, 128, (6, 1, 3, 8)).astype(np.int8)),
        T([6], "int32", scale=0.0005, data=rng.integers(-900, 900, 6).astype(np.int32)),
        T([1, 1, 10, 6], scale=0.08, zero_point=4, name="conv"),
        T([1, 10, 6], scale=0.08, zero_point=4, name="y"),
    ]
    ops = [
        ("EXPAND_DIMS", [0, 1], [2], options("ExpandDimsOptions")),
        ("CONV_2D", [2, 3, 4], [5], options("Conv2DOptions", padding=1, strideW=1, strideH=1)),
        ("SQUEEZE", [5], [6], options("SqueezeOptions", squeezeDims=[1])),
    ]
    path.write_bytes(graph_model(tensors, ops, [0], [6]))
    return path


def test_expand_dims_is_a_view(tmp_path):
    path = conv1d_model(tmp_path / "conv1d.tflite")
    g = read(path).main
    model = lower(g, format="sa8")
    assert [(la.op_type, la.kind) for la in model.layers] == [
        ("EXPAND_DIMS", "view"),
        ("CONV_2D", "conv2d"),
        ("SQUEEZE", "view"),
    ]
    assert model.tensor("x_row").shape == (1, 12, 8) and model.tensor("x_row").buffer == "x"
    inputs = random_inputs(g, 4, seed=1)
    ref = reference_outputs(path, g, inputs)
    ours = run_graph(g, inputs, "tflite", keep=True)
    for t, want in ref.items():
        np.testing.assert_array_equal(ours[t], want, err_msg=g.tensors[t].name)


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_runtime_equals_executor(fmt, mli_builds, tmp_path):
    path = conv1d_model(tmp_path / "conv1d.tflite")
    H.assert_bit_exact(
        H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0"), samples=8)
    )
