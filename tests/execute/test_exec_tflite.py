"""`tflite` mode: TFLite's integer reference arithmetic, checked against hand-computed values and
against the interpreter's reference kernels (BUILTIN_REF) exactly, at every layer."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.errors import InputDataError, UnsupportedError
from mlitool.execute.reference import fixedpoint as fp
from mlitool.execute.reference.graph import run_graph
from mlitool.execute.reference.inputs import random_inputs
from mlitool.tflite.reader import read_model
from tests.support.litert import reference_outputs
from tests.support.paths import shared_path
from tests.support.real_inputs import assert_resnet8_classes, cifar10_test20_int8

INT32_MAX = (1 << 31) - 1


# ---------------------------------------------------------------------------------------------
# Fixed-point primitives against hand-computed values


def test_quantize_multiplier_hand_values():
    m, s = fp.quantize_multiplier(np.array([0.5, 1.0, 0.75, 0.1, 0.0, 1e-12]))
    assert m.tolist() == [1 << 30, 1 << 30, 3 << 29, 1717986918, 0, 0]
    assert s.tolist() == [0, 1, 0, -3, 0, 0]
    # q * 2^31 rounding up to 2^31 renormalises: 1 - 2^-33 → (2^30, 1).
    m, s = fp.quantize_multiplier(1 - 2.0**-33)
    assert (int(m), int(s)) == (1 << 30, 1)


def test_srdhm_and_rounding_divide_hand_values():
    assert fp.srdhm(1 << 30, 1 << 30) == 1 << 29
    assert fp.srdhm(3, 1 << 30) == 2  # 1.5 → 2
    assert fp.srdhm(-3, 1 << 30) == -1  # -1.5 → -1 (gemmlowp nudge, then truncation)
    assert fp.srdhm(-(1 << 31), -(1 << 31)) == INT32_MAX
    assert fp.rdbpot(np.array([5, -5, 6, -6, 7]), np.array([1, 1, 2, 2, 0])).tolist() == [
        3,
        -3,
        2,
        -2,
        7,
    ]
    assert fp.mul_by_quantized_multiplier(100, 1 << 30, -1) == 25
    assert fp.mul_by_quantized_multiplier(100, 1 << 30, 2) == 200
    assert fp.round_away(np.array([0.5, -0.5, 1.5, 2.4999999999999996, -2.5])).tolist() == [
        1,
        -1,
        2,
        2,
        -3,
    ]


def test_gemmlowp_exp_and_reciprocal_accuracy():
    a = -np.arange(0, 32 << 26, 1 << 20, dtype=np.int64)  # Q5.26 in (-32, 0]
    got = fp.exp_on_negative_values(a, 5) / 2.0**31
    # gemmlowp's 4th-order Taylor step on [-1/4, 0) is good to ~2.5e-7 (its own design limit).
    assert np.abs(got - np.exp(a / 2.0**26)).max() < 3e-7
    assert fp.exp_on_negative_values(0, 5) == INT32_MAX
    x = np.arange(0, 1 << 31, 1 << 24, dtype=np.int64)  # Q0.31 in [0, 1)
    got = fp.one_over_one_plus_x_for_x_in_0_1(x) / 2.0**31
    assert np.abs(got - 1 / (1 + x / 2.0**31)).max() < 1e-8  # a few Q31 LSB


# ---------------------------------------------------------------------------------------------
# Shared int8 models, every layer, real and random inputs

MODELS = [
    "mlperf_tiny/kws_ref_model_int8",
    "mlperf_tiny/vww_96_int8",
    "mlperf_tiny/resnet8_int8",
    "mlperf_tiny/ad01_int8",
    "tflm/hello_world_int8",
    "tflm/micro_speech_int8",
    "embarc_mli/mobilenet_v1_int8",
    "tflm/mnist_lstm_int8",
]
SAMPLES = {"embarc_mli/mobilenet_v1_int8": 2, "mlperf_tiny/vww_96_int8": 3}


def _model(name):
    path = shared_path("models", name + ".tflite")
    return path, read_model(str(path)).main


def _assert_every_layer_equal(graph, ours, ref):
    for op in graph.ops:
        for t in op.outputs:
            a, b = ours[t], ref[t]
            assert a.dtype == b.dtype, f"{op.label}: dtype {a.dtype} vs {b.dtype}"
            bad = np.flatnonzero(a.reshape(-1) != b.reshape(-1))
            assert bad.size == 0, (
                f"{op.label} output {graph.tensors[t].name}: {bad.size} of {a.size} "
                f"elements differ, max "
                f"{np.abs(a.astype(np.int64) - b.astype(np.int64)).max()} LSB"
            )


@pytest.mark.parametrize("name", MODELS)
def test_model_every_layer_matches_interpreter_on_random_inputs(name):
    path, graph = _model(name)
    inputs = random_inputs(graph, SAMPLES.get(name, 4), seed=7)
    ours = run_graph(graph, inputs, "tflite", keep=True)
    _assert_every_layer_equal(graph, ours, reference_outputs(path, graph, inputs))


def test_kws_real_input_gives_documented_output():
    path, graph = _model("mlperf_tiny/kws_ref_model_int8")
    idx = graph.inputs[0]
    x = np.load(shared_path("models", "inputs", "kws_mfcc_int8.npy"))
    inputs = {idx: x.reshape((1,) + graph.tensors[idx].shape)}
    ours = run_graph(graph, inputs, "tflite", keep=True)
    assert ours[graph.outputs[0]].reshape(-1).tolist() == [
        -128,
        -128,
        -128,
        -128,
        -128,
        127,
        -128,
        -128,
        -128,
        -128,
        -128,
        -128,
    ]
    _assert_every_layer_equal(graph, ours, reference_outputs(path, graph, inputs))


def test_resnet8_classifies_real_images_as_documented():
    path, graph = _model("mlperf_tiny/resnet8_int8")
    idx = graph.inputs[0]
    inputs = {idx: cifar10_test20_int8().reshape((20, 1) + graph.tensors[idx].shape[1:])}
    ours = run_graph(graph, inputs, "tflite", keep=True)
    assert_resnet8_classes(ours[graph.outputs[0]])
    _assert_every_layer_equal(graph, ours, reference_outputs(path, graph, inputs))


def test_ad01_real_frames_every_layer():
    path, graph = _model("mlperf_tiny/ad01_int8")
    frames = np.load(shared_path("models", "inputs", "dcase_toycar_frames_float32.npy"))[:6]
    inputs = {graph.inputs[0]: frames[:, None, :]}  # real values: quantized by the walker
    t = graph.tensors[graph.inputs[0]]
    q = np.clip(np.round(frames / t.quant.scale[0]) + t.quant.zero_point[0], -128, 127)
    ours = run_graph(graph, inputs, "tflite", keep=True)
    assert np.array_equal(ours[graph.inputs[0]].reshape(6, -1), q.astype(np.int8))
    ref = reference_outputs(path, graph, {graph.inputs[0]: ours[graph.inputs[0]]})
    _assert_every_layer_equal(graph, ours, ref)


def test_input_checks():
    _, graph = _model("tflm/hello_world_int8")
    idx = graph.inputs[0]
    with pytest.raises(InputDataError, match="shape"):
        run_graph(graph, {idx: np.zeros((2, 3), np.int8)}, "tflite")
    with pytest.raises(InputDataError, match="range"):
        run_graph(graph, {idx: np.full((2, 1), 300, np.int32)}, "tflite")
    with pytest.raises(InputDataError, match="no input named"):
        run_graph(graph, {"nope": np.zeros((2, 1), np.int8)}, "tflite")
    # (N,)+shape[1:] and (N,)+shape give the same result; names and positions both work.
    x = np.arange(-3, 3, dtype=np.int8).reshape(6, 1)
    a = run_graph(graph, {0: x}, "tflite")[graph.outputs[0]]
    b = run_graph(graph, {graph.tensors[idx].name: x.reshape(6, 1, 1)}, "tflite")[graph.outputs[0]]
    assert a.shape == (6, 1, 1) and np.array_equal(a, b)


def test_random_inputs_span_the_quantized_range_and_are_seeded():
    _, graph = _model("mlperf_tiny/vww_96_int8")
    a = random_inputs(graph, 4, seed=3)[graph.inputs[0]]
    b = random_inputs(graph, 4, seed=3)[graph.inputs[0]]
    assert a.shape == (4, 1, 96, 96, 3) and a.dtype == np.int8 and np.array_equal(a, b)
    assert a.min() == -128 and a.max() == 127
    assert not np.array_equal(a, random_inputs(graph, 4, seed=4)[graph.inputs[0]])


def test_hybrid_model_is_rejected_in_tflite_mode():
    _, graph = _model("mlperf_tiny/kws_ref_model_hybrid")
    with pytest.raises(UnsupportedError, match="hybrid"):
        run_graph(graph, random_inputs(graph, 1), "tflite")
