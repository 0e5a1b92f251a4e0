"""PyTorch's time-major RNN input as litert-torch writes it (issue 34): [1, C, T] -TRANSPOSE
(2, 0, 1)-> [T, 1, C] -FULLY_CONNECTED (keep_num_dims)-> [T, 1, M] -SLICE per step-> [1, 1, M] -CONCATENATION (axis 0)-> [2, 1, M].
The leading T is rows, not a batch: the TRANSPOSE permutes the input seen in its full shape
into an MLI output that keeps its rows, the FULLY_CONNECTED runs over T rows with a unit axis
between, each SLICE takes a row and the CONCATENATION stacks rows again (before: "has batch 6
(MLI runs batch 1)"). tflite mode
equals LiteRT; the emitted C on the real MLI 2.0.2 library equals mli mode in the four builds."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import ModelOptions, load, read, settle
from tests.support import runtime_harness as H
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options

C, STEPS, M = 4, 6, 5


def time_major_fc(path):
    rng = np.random.default_rng(34)
    act = {"scale": [0.05], "zero_point": [3]}
    out = {"scale": [0.2], "zero_point": [-2]}
    tensors = [
        T([1, C, STEPS], name="x", **act),
        T([3], dtype="int32", name="perm", data=np.array([2, 0, 1])),
        T([STEPS, 1, C], name="time_major", **act),
        T([M, C], name="w", scale=[0.02], zero_point=[0], data=rng.integers(-127, 128, (M, C))),
        T(
            [M],
            dtype="int32",
            name="b",
            scale=[float(np.float32(0.05) * np.float32(0.02))],
            zero_point=[0],
            data=rng.integers(-2000, 2000, M),
        ),
        T([STEPS, 1, M], name="fc", **out),
        T([3], dtype="int32", name="begin2", data=np.array([2, 0, 0])),
        T([3], dtype="int32", name="size", data=np.array([1, 1, M])),
        T([1, 1, M], name="step2", **out),
        T([3], dtype="int32", name="begin5", data=np.array([5, 0, 0])),
        T([1, 1, M], name="step5", **out),
        T([2, 1, M], name="steps", **out),
    ]
    fc = options("FullyConnectedOptions", keepNumDims=True)
    ops = [
        ("TRANSPOSE", [0, 1], [2], options("TransposeOptions")),
        ("FULLY_CONNECTED", [2, 3, 4], [5], fc),
        ("SLICE", [5, 6, 7], [8], options("SliceOptions")),
        ("SLICE", [5, 9, 7], [10], options("SliceOptions")),
        ("CONCATENATION", [8, 10], [11], options("ConcatenationOptions", axis=0)),
    ]
    path.write_bytes(graph_model(tensors, ops, [0], [8, 10, 11]))
    return path


def test_tflite_mode_equals_litert(tmp_path):
    pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    from mlitool.oracle import run_litert

    path = time_major_fc(tmp_path / "m.tflite")
    g = read(path).main
    x = np.random.default_rng(8).integers(-128, 128, (8, 1, C, STEPS)).astype(np.int8)
    want = run_litert(path, g, {0: x}, [2, 5, 8, 10, 11])
    got = run_graph(g, {0: x}, "tflite", keep=True)
    for t in (2, 5, 8, 10, 11):
        assert np.array_equal(got[t].reshape(want[t].shape), want[t]), g.tensors[t].name
    assert np.mean((want[5] > -128) & (want[5] < 127)) > 0.8  # mostly not saturated


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_converts_with_the_rows_kept(fmt, tmp_path):
    _, model = load(time_major_fc(tmp_path / "m.tflite"), settle(ModelOptions(format=fmt)))
    kinds = [layer.kind for layer in model.layers if layer.kind != "view"]
    assert kinds[0] == "permute" and len(kinds) >= 2, kinds
    assert model.tensor(model.outputs[0]).shape[-1] == M


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_the_c_equals_mli_mode(fmt, mli_builds, tmp_path):
    path = time_major_fc(tmp_path / "m.tflite")
    results = H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0"))
    H.assert_bit_exact(results)
