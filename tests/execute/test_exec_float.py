"""`float` mode: TFLite float semantics, against the interpreter within float32 tolerance."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.reference.graph import run_graph
from mlitool.execute.reference.inputs import random_inputs
from mlitool.tflite.reader import read_model
from tests.support.litert import reference_outputs
from tests.support.paths import shared_path
from tests.support.real_inputs import assert_resnet8_classes, cifar10_test20
from tests.support.tflite_build import T, options, single_op_model

FLOAT_MODELS = [
    "mlperf_tiny/vww_96_float",
    "mlperf_tiny/resnet8_float",
    "mlperf_tiny/ad01_float",
    "tflm/hello_world_float",
]


def _model(name):
    path = shared_path("models", name + ".tflite")
    return path, read_model(str(path)).main


def _assert_close_every_layer(graph, ours, ref):
    for op in graph.ops:
        for t in op.outputs:
            a, b = ours[t], ref[t]
            assert a.dtype == np.float32
            tol = 1e-5 * max(1.0, float(np.abs(b).max()))
            err = float(np.abs(a - b).max())
            assert err <= tol, f"{op.label}: max abs error {err} > {tol}"


@pytest.mark.parametrize("name", FLOAT_MODELS)
def test_float_model_every_layer_close_to_interpreter(name):
    path, graph = _model(name)
    inputs = random_inputs(graph, 3, seed=5)
    _assert_close_every_layer(
        graph, run_graph(graph, inputs, "float", keep=True), reference_outputs(path, graph, inputs)
    )


def test_resnet8_float_classifies_real_images_as_documented():
    path, graph = _model("mlperf_tiny/resnet8_float")
    # The raw pixel values, not divided (../shared/models/README.md).
    x = cifar10_test20()[0].astype(np.float32).reshape((20, 1) + graph.tensors[0].shape[1:])
    probs = run_graph(graph, {0: x}, "float")[graph.outputs[0]]
    assert_resnet8_classes(probs)
    lit = reference_outputs(path, graph, {0: x})[graph.outputs[0]]
    np.testing.assert_allclose(probs, lit, rtol=0, atol=1e-5)


def test_float_mode_on_int8_model_is_real_valued_and_tracks_tflite():
    """Quantized model in float mode: real values, never re-quantized; close to the int8 result."""
    _, graph = _model("mlperf_tiny/resnet8_int8")
    inputs = random_inputs(graph, 4, seed=9)
    fl = run_graph(graph, inputs, "float", keep=True)
    q = run_graph(graph, inputs, "tflite", keep=True)
    conv_out = graph.ops[0].outputs[0]
    t = graph.tensors[conv_out]
    real_from_int8 = t.quant.dequantize(q[conv_out])
    assert fl[conv_out].dtype == np.float32
    # Not on the int8 grid: float mode does not re-quantize activations.
    assert not np.allclose(
        fl[conv_out] / t.quant.scale[0], np.round(fl[conv_out] / t.quant.scale[0])
    )
    # First layer: only the output rounding separates the two (<= half a step), except where the
    # int8 output saturates at 127.
    inside = q[conv_out] < 127
    assert inside.mean() > 0.5
    assert (
        np.abs(fl[conv_out] - real_from_int8)[inside].max() <= 0.51 * t.quant.scale[0]
    )  # + float32 sums, bias scale
    out = graph.outputs[0]
    agree = np.argmax(fl[out].reshape(4, -1), 1) == np.argmax(q[out].reshape(4, -1), 1)
    assert agree.mean() >= 0.75


def test_float_input_given_as_int8_is_dequantized():
    _, graph = _model("tflm/hello_world_int8")
    idx = graph.inputs[0]
    t = graph.tensors[idx]
    q = np.array([[-128], [0], [127]], np.int8)
    a = run_graph(graph, {idx: q}, "float")[graph.outputs[0]]
    b = run_graph(graph, {idx: t.quant.dequantize(q).astype(np.float32)}, "float")[graph.outputs[0]]
    np.testing.assert_array_equal(a, b)


def test_hybrid_model_runs_on_dequantized_weights():
    """kws hybrid: int8 weights, float activations. The interpreter quantizes activations on the
    fly (hybrid kernels); float mode does not, so results are close but not equal."""
    path, graph = _model("mlperf_tiny/kws_ref_model_hybrid")
    inputs = random_inputs(graph, 2, seed=1)
    ours = run_graph(graph, inputs, "float")[graph.outputs[0]]
    ref = reference_outputs(path, graph, inputs)[graph.outputs[0]]
    assert np.abs(ours - ref).max() < 0.05


@pytest.mark.parametrize(
    "op,ins,outs,opts",
    [
        ("LOGISTIC", [T((1, 50), "float32")], [T((1, 50), "float32")], None),
        ("TANH", [T((1, 50), "float32")], [T((1, 50), "float32")], None),
        (
            "LEAKY_RELU",
            [T((1, 50), "float32")],
            [T((1, 50), "float32")],
            options("LeakyReluOptions", alpha=0.3),
        ),
        (
            "L2_NORMALIZATION",
            [T((1, 2, 25), "float32")],
            [T((1, 2, 25), "float32")],
            options("L2NormOptions"),
        ),
        (
            "MAX_POOL_2D",
            [T((1, 7, 7, 2), "float32")],
            [T((1, 4, 4, 2), "float32")],
            options(
                "Pool2DOptions", padding=0, strideW=2, strideH=2, filterWidth=3, filterHeight=3
            ),
        ),
        (
            "AVERAGE_POOL_2D",
            [T((1, 7, 7, 2), "float32")],
            [T((1, 4, 4, 2), "float32")],
            options(
                "Pool2DOptions", padding=0, strideW=2, strideH=2, filterWidth=3, filterHeight=3
            ),
        ),
        (
            "SOFTMAX",
            [T((1, 3, 9), "float32")],
            [T((1, 3, 9), "float32")],
            options("SoftmaxOptions", beta=2.0),
        ),
        (
            "MEAN",
            [T((1, 4, 5, 3), "float32"), T((2,), "int32", data=np.array([1, 2], np.int32))],
            [T((1, 3), "float32")],
            options("ReducerOptions", keepDims=False),
        ),
    ],
)
def test_float_single_ops(op, ins, outs, opts, tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(single_op_model(op, ins, outs, opts))
    graph = read_model(str(path)).main
    inputs = {k: v * 4 for k, v in random_inputs(graph, 4, seed=2).items()}
    _assert_close_every_layer(
        graph, run_graph(graph, inputs, "float", keep=True), reference_outputs(path, graph, inputs)
    )
