"""`tflite` mode, op by op: tiny single-op int8 models built in the test, compared EXACTLY with the
interpreter's reference kernels on seeded random inputs spanning the whole int8 range."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.reference.graph import run_graph
from mlitool.execute.reference.inputs import random_inputs
from mlitool.tflite.reader import read_model
from tests.support.litert import reference_outputs
from tests.support.tflite_build import T, options, single_op_model

SAME, VALID = 0, 1
NONE, RELU, RELU_N1, RELU6 = 0, 1, 2, 3
rng = np.random.default_rng(2024)


def w8(shape, per_axis=True, axis=0):
    data = rng.integers(-127, 128, size=shape).astype(np.int8)
    scale = rng.uniform(0.002, 0.02, size=shape[axis]) if per_axis else 0.01
    return T(shape, "int8", scale, 0, axis, data)


def bias(n, scale=1e-4):
    return T((n,), "int32", scale, 0, 0, rng.integers(-5000, 5000, size=n).astype(np.int32))


def act(shape, scale=0.05, zp=-3, dtype="int8"):
    return T(shape, dtype, scale, zp)


def const(data, dtype="int32"):
    data = np.asarray(data, dtype=dtype)
    return T(data.shape, dtype, None, 0, 0, data)


CASES = {
    "conv_same_stride2_relu6": (
        "CONV_2D",
        [act((1, 9, 9, 3), 0.04, 5), w8((4, 3, 3, 3)), bias(4)],
        [act((1, 5, 5, 4), 0.03, -10)],
        options("Conv2DOptions", padding=SAME, strideW=2, strideH=2, fusedActivationFunction=RELU6),
    ),
    "conv_dilated_valid_per_tensor": (
        "CONV_2D",
        [act((1, 8, 7, 2)), w8((3, 2, 2, 2), per_axis=False), bias(3, 5e-4)],
        [act((1, 6, 5, 3), 0.1, 7)],
        options(
            "Conv2DOptions",
            padding=VALID,
            strideW=1,
            strideH=1,
            dilationWFactor=2,
            dilationHFactor=2,
        ),
    ),
    "depthwise_mult2_same_stride2": (
        "DEPTHWISE_CONV_2D",
        [act((1, 7, 8, 3)), w8((1, 3, 3, 6), axis=3), bias(6)],
        [act((1, 4, 4, 6), 0.02, 1)],
        options(
            "DepthwiseConv2DOptions",
            padding=SAME,
            strideW=2,
            strideH=2,
            depthMultiplier=2,
            fusedActivationFunction=RELU,
        ),
    ),
    "fc_per_tensor_relu": (
        "FULLY_CONNECTED",
        [act((1, 20)), w8((7, 20), per_axis=False), bias(7)],
        [act((1, 7), 0.08, -20)],
        options("FullyConnectedOptions", fusedActivationFunction=RELU),
    ),
    "fc_per_channel": (
        "FULLY_CONNECTED",
        [act((1, 16)), w8((5, 16)), bias(5)],
        [act((1, 5), 0.08, 4)],
        options("FullyConnectedOptions"),
    ),
    "max_pool_same": (
        "MAX_POOL_2D",
        [act((1, 7, 7, 3))],
        [act((1, 4, 4, 3))],
        options("Pool2DOptions", padding=SAME, strideW=2, strideH=2, filterWidth=3, filterHeight=3),
    ),
    "avg_pool_same_counts_padding": (
        "AVERAGE_POOL_2D",
        [act((1, 7, 7, 3))],
        [act((1, 4, 4, 3))],
        options("Pool2DOptions", padding=SAME, strideW=2, strideH=2, filterWidth=3, filterHeight=3),
    ),
    "add_broadcast": (
        "ADD",
        [act((1, 4, 4, 3), 0.05, -3), act((1, 1, 1, 3), 0.11, 9)],
        [act((1, 4, 4, 3), 0.09, 2)],
        options("AddOptions", fusedActivationFunction=RELU),
    ),
    "sub": (
        "SUB",
        [act((1, 4, 5), 0.05, -3), act((1, 4, 5), 0.02, 6)],
        [act((1, 4, 5), 0.06, 0)],
        options("SubOptions"),
    ),
    "mul": (
        "MUL",
        [act((1, 4, 5), 0.05, -3), act((1, 4, 5), 0.02, 6)],
        [act((1, 4, 5), 0.01, -5)],
        options("MulOptions"),
    ),
    "maximum": ("MAXIMUM", [act((1, 6)), act((1, 6))], [act((1, 6))], None),
    "minimum": ("MINIMUM", [act((1, 6)), act((1, 6))], [act((1, 6))], None),
    "relu_rescale": ("RELU", [act((1, 30), 0.05, -3)], [act((1, 30), 0.03, -128)], None),
    "relu6": ("RELU6", [act((1, 30), 0.05, -3)], [act((1, 30), 6 / 255, -128)], None),
    "relu_n1_to_1": ("RELU_N1_TO_1", [act((1, 30), 0.02, 1)], [act((1, 30), 1 / 127, 0)], None),
    "leaky_relu": (
        "LEAKY_RELU",
        [act((1, 40), 0.05, -3)],
        [act((1, 40), 0.04, 10)],
        options("LeakyReluOptions", alpha=0.2),
    ),
    "prelu": (
        "PRELU",
        [
            act((1, 3, 3, 4), 0.05, -3),
            T((1, 1, 4), "int8", 0.01, -2, 0, rng.integers(-128, 127, (1, 1, 4)).astype(np.int8)),
        ],
        [act((1, 3, 3, 4), 0.04, 10)],
        None,
    ),
    "logistic": ("LOGISTIC", [act((1, 64), 0.06, 4)], [act((1, 64), 1 / 256, -128)], None),
    "tanh": ("TANH", [act((1, 64), 0.03, -4)], [act((1, 64), 1 / 128, 0)], None),
    "softmax_beta": (
        "SOFTMAX",
        [act((1, 3, 10), 0.2, 7)],
        [act((1, 3, 10), 1 / 256, -128)],
        options("SoftmaxOptions", beta=0.7),
    ),
    "l2_norm": (
        "L2_NORMALIZATION",
        [act((1, 2, 12), 0.05, -3)],
        [act((1, 2, 12), 1 / 128, 0)],
        options("L2NormOptions"),
    ),
    "mean_hw_keep": (
        "MEAN",
        [act((1, 5, 6, 3), 0.05, -3), const([1, 2])],
        [act((1, 1, 1, 3), 0.02, 4)],
        options("ReducerOptions", keepDims=True),
    ),
    "mean_axis1": (
        "MEAN",
        [act((1, 7, 4), 0.05, -3), const([1])],
        [act((1, 4), 0.05, -3)],
        options("ReducerOptions", keepDims=False),
    ),
    "concat": (
        "CONCATENATION",
        [act((1, 2, 3)), act((1, 2, 5))],
        [act((1, 2, 8))],
        options("ConcatenationOptions", axis=-1),
    ),
    "pad": (
        "PAD",
        [act((1, 3, 3, 2)), const([[0, 0], [1, 2], [0, 1], [0, 0]])],
        [act((1, 6, 4, 2))],
        None,
    ),
    "padv2": (
        "PADV2",
        [
            act((1, 3, 2)),
            const([[0, 0], [2, 0], [1, 1]]),
            T((1,), "int8", 0.05, -3, 0, np.array([5], np.int8)),
        ],
        [act((1, 5, 4))],
        None,
    ),
    "requantize": ("QUANTIZE", [act((1, 20), 0.05, -3)], [act((1, 20), 0.03, 12)], None),
    "quantize_float": ("QUANTIZE", [T((1, 20), "float32")], [act((1, 20), 0.008, 3)], None),
    "dequantize": ("DEQUANTIZE", [act((1, 20), 0.05, -3)], [T((1, 20), "float32")], None),
    "transpose": ("TRANSPOSE", [act((1, 2, 3, 4)), const([0, 3, 1, 2])], [act((1, 4, 2, 3))], None),
    "reshape": ("RESHAPE", [act((1, 2, 3, 4)), const([1, 6, 4])], [act((1, 6, 4))], None),
    "squeeze": (
        "SQUEEZE",
        [act((1, 1, 3, 1))],
        [act((1, 3))],
        options("SqueezeOptions", squeezeDims=[1, 3]),
    ),
    "arg_max": (
        "ARG_MAX",
        [act((1, 3, 7)), const([2])],
        [T((1, 3), "int32")],
        options("ArgMaxOptions", outputType=2),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_op_matches_interpreter(case, tmp_path):
    op, ins, outs, opts = CASES[case]
    path = tmp_path / f"{case}.tflite"
    path.write_bytes(single_op_model(op, ins, outs, opts))
    graph = read_model(str(path)).main
    inputs = random_inputs(graph, 8, seed=11)
    if case == "quantize_float":
        inputs = {k: (v * 1.3).astype(np.float32) for k, v in inputs.items()}  # include clamping
    ref = reference_outputs(path, graph, inputs)
    ours = run_graph(graph, inputs, "tflite", keep=True)
    t = graph.outputs[0]
    assert ours[t].dtype == ref[t].dtype
    assert ours[t].shape == ref[t].shape
    if ref[t].dtype.kind == "f":
        np.testing.assert_array_equal(ours[t], ref[t])
    else:
        diff = np.abs(ours[t].astype(np.int64) - ref[t].astype(np.int64))
        assert diff.max() == 0, (
            f"{case}: {np.count_nonzero(diff)} of {diff.size} differ, max {diff.max()} LSB"
        )
