"""The committed sample models (samples/, written by samples/make_samples.py) are what they claim.

Each loads and runs in the TFLite interpreter, holds exactly the intended ops, and the parameters the
op models exist to exercise (dilation, stride, padding, depth multiplier, keep_num_dims, per-channel
weights, the oversized pooling window) are really in the files.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import tflite
from ai_edge_litert.interpreter import Interpreter, OpResolverType

from tests.support.paths import SAMPLES

# File -> op types in execution order, as the interpreter lists them.
CNN_OPS = [
    "CONV_2D",
    "MAX_POOL_2D",
    "DEPTHWISE_CONV_2D",
    "CONV_2D",
    "ADD",
    "CONV_2D",
    "AVERAGE_POOL_2D",
    "FULLY_CONNECTED",
    "SOFTMAX",
]
EXPECTED: dict[str, list[str]] = {
    "cnn_int8.tflite": CNN_OPS,
    "cnn_float.tflite": CNN_OPS,
    "fc_int8.tflite": ["FULLY_CONNECTED"] * 3,
    "fc_float.tflite": ["FULLY_CONNECTED"] * 3,
}
SINGLE_OP = {
    "add": "ADD",
    "add_const": "ADD",
    "sub": "SUB",
    "sub_const": "SUB",
    "mul": "MUL",
    "mul_const": "MUL",
    "minimum": "MINIMUM",
    "minimum_const": "MINIMUM",
    "maximum": "MAXIMUM",
    "maximum_const": "MAXIMUM",
    "relu": "RELU",
    "relu6": "RELU6",
    "relu_n1_to_1": "RELU_N1_TO_1",
    "leaky_relu": "LEAKY_RELU",
    "prelu": "PRELU",
    "logistic": "LOGISTIC",
    "tanh": "TANH",
    "softmax": "SOFTMAX",
    "l2_normalization": "L2_NORMALIZATION",
    "arg_max": "ARG_MAX",
    "transpose": "TRANSPOSE",
    "reshape": "RESHAPE",
    "squeeze": "SQUEEZE",
    "concatenation": "CONCATENATION",
    "pad": "PAD",
    "mean_hw": "MEAN",
    "conv_dilation": "CONV_2D",
    "conv_stride2_same": "CONV_2D",
    "depthwise_mult2": "DEPTHWISE_CONV_2D",
    "avg_pool_global_same": "AVERAGE_POOL_2D",
    "max_pool_global_same": "MAX_POOL_2D",
    "max_pool": "MAX_POOL_2D",
    "fully_connected_keep_dims": "FULLY_CONNECTED",
    "fully_connected_per_tensor": "FULLY_CONNECTED",
    "split": "SPLIT",
    "split_v": "SPLIT_V",
    "slice": "SLICE",
    "strided_slice": "STRIDED_SLICE",
}
for _name, _op in SINGLE_OP.items():
    EXPECTED[f"ops/{_name}.tflite"] = [_op]
    EXPECTED[f"ops/{_name}_float.tflite"] = [_op]
EXPECTED["ops/concatenation_requant.tflite"] = ["TANH", "QUANTIZE", "CONCATENATION"]
EXPECTED["ops/concatenation_requant_float.tflite"] = ["TANH", "CONCATENATION"]
EXPECTED["ops/quantize_dequantize.tflite"] = ["QUANTIZE", "CONV_2D", "DEQUANTIZE"]

# int8 files whose inputs/outputs are not all int8.
FLOAT_IO = {"ops/quantize_dequantize.tflite"}
INT32_OUT = {"ops/arg_max.tflite", "ops/arg_max_float.tflite"}

OP_NAMES = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}


def interpreter(rel: str) -> Interpreter:
    # Reference kernels, no delegate (a delegate would replace the ops in the op list).
    it = Interpreter(
        model_path=str(SAMPLES / rel), experimental_op_resolver_type=OpResolverType.BUILTIN_REF
    )
    it.allocate_tensors()
    return it


def is_float_file(rel: str) -> bool:
    return rel.endswith("_float.tflite")


# --- every file -------------------------------------------------------------------------------


def test_every_committed_model_is_listed():
    on_disk = {p.relative_to(SAMPLES).as_posix() for p in SAMPLES.rglob("*.tflite")}
    assert on_disk == set(EXPECTED)


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_sample_loads_runs_and_holds_intended_ops(rel):
    assert (SAMPLES / rel).stat().st_size < 200_000
    it = interpreter(rel)
    assert [d["op_name"] for d in it._get_ops_details()] == EXPECTED[rel]

    rng = np.random.default_rng(0)
    for d in it.get_input_details():
        if d["dtype"] == np.int8:
            x = rng.integers(-128, 128, size=d["shape"]).astype(np.int8)
        else:
            x = rng.normal(size=d["shape"]).astype(np.float32)
        it.set_tensor(d["index"], x)
    it.invoke()

    want_in = np.float32 if is_float_file(rel) or rel in FLOAT_IO else np.int8
    want_out = np.int32 if rel in INT32_OUT else want_in
    assert {d["dtype"] for d in it.get_input_details()} == {want_in}
    assert {d["dtype"] for d in it.get_output_details()} == {want_out}


def test_manifest_matches_files():
    manifest = json.loads((SAMPLES / "ops.json").read_text())
    assert manifest == EXPECTED


# --- the CNN ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cnn_int8():
    return interpreter("cnn_int8.tflite")


def test_cnn_int8_io_is_int8(cnn_int8):
    (inp,), (out,) = cnn_int8.get_input_details(), cnn_int8.get_output_details()
    assert inp["dtype"] == np.int8 and list(inp["shape"]) == [1, 32, 32, 3]
    assert out["dtype"] == np.int8 and list(out["shape"]) == [1, 10]
    assert out["quantization"] == (1 / 256, -128)  # softmax output, as TFLite fixes it


def test_cnn_int8_weights_are_per_channel(cnn_int8):
    weights = [
        t
        for t in cnn_int8.get_tensor_details()
        if t["dtype"] == np.int8
        and len(t["shape"]) == 4
        and t["shape"][0] in (1, 16, 32)
        and t["quantization_parameters"]["scales"].size > 1
    ]
    # conv1, dwconv (axis 3), pwconv, conv2
    assert sorted(
        (
            len(t["quantization_parameters"]["scales"]),
            t["quantization_parameters"]["quantized_dimension"],
        )
        for t in weights
    ) == [(16, 0), (16, 0), (16, 3), (32, 0)]


def test_cnn_data_files():
    calib = np.load(SAMPLES / "cnn_calib.npy")
    assert calib.dtype == np.float32 and calib.shape == (32, 32, 32, 3)
    assert 0.0 <= calib.min() and calib.max() <= 1.0
    inputs = np.load(SAMPLES / "cnn_input_int8.npy")
    assert inputs.dtype == np.int8 and inputs.shape == (4, 32, 32, 3)


def test_cnn_int8_agrees_with_float_twin(cnn_int8):
    """Trained weights: the int8 model and its float twin give the same confident class."""
    inputs = np.load(SAMPLES / "cnn_input_int8.npy")
    flt = interpreter("cnn_float.tflite")
    (qin,), (qout,) = cnn_int8.get_input_details(), cnn_int8.get_output_details()
    (fin,), (fout,) = flt.get_input_details(), flt.get_output_details()
    in_scale, in_zero = qin["quantization"]
    out_scale, out_zero = qout["quantization"]
    for x in inputs:
        cnn_int8.set_tensor(qin["index"], x[None])
        cnn_int8.invoke()
        q_prob = (cnn_int8.get_tensor(qout["index"]).astype(np.float64) - out_zero) * out_scale
        flt.set_tensor(fin["index"], ((x[None].astype(np.float32) - in_zero) * in_scale))
        flt.invoke()
        f_prob = flt.get_tensor(fout["index"])
        assert np.argmax(q_prob) == np.argmax(f_prob)
        assert f_prob.max() > 0.5
        assert np.abs(q_prob - f_prob).max() < 0.05


# --- op parameters, read from the flatbuffer ----------------------------------------------------


def first_op(rel: str, options_cls):
    """(op, decoded options, subgraph) of the first op of a sample."""
    buf = (SAMPLES / rel).read_bytes()
    model = tflite.Model.GetRootAsModel(buf, 0)
    graph = model.Subgraphs(0)
    op = graph.Operators(0)
    table = op.BuiltinOptions()
    opts = options_cls()
    opts.Init(table.Bytes, table.Pos)
    return op, opts, graph


def test_conv_dilation():
    _, o, _ = first_op("ops/conv_dilation.tflite", tflite.Conv2DOptions)
    assert (o.DilationHFactor(), o.DilationWFactor(), o.StrideH(), o.StrideW()) == (2, 2, 1, 1)
    assert o.Padding() == tflite.Padding.SAME
    assert o.FusedActivationFunction() == tflite.ActivationFunctionType.RELU


def test_conv_stride2_same():
    op, o, g = first_op("ops/conv_stride2_same.tflite", tflite.Conv2DOptions)
    assert (o.StrideH(), o.StrideW(), o.DilationHFactor()) == (2, 2, 1)
    assert o.Padding() == tflite.Padding.SAME
    assert list(g.Tensors(op.Inputs(0)).ShapeAsNumpy()) == [1, 8, 8, 4]  # even map: pad 0 / 1
    assert list(g.Tensors(op.Outputs(0)).ShapeAsNumpy()) == [1, 4, 4, 8]


def test_depthwise_multiplier_2():
    op, o, g = first_op("ops/depthwise_mult2.tflite", tflite.DepthwiseConv2DOptions)
    assert o.DepthMultiplier() == 2
    assert list(g.Tensors(op.Inputs(1)).ShapeAsNumpy()) == [1, 3, 3, 8]
    assert g.Tensors(op.Inputs(1)).Quantization().ScaleLength() == 8


@pytest.mark.parametrize(
    "rel", ["ops/avg_pool_global_same.tflite", "ops/max_pool_global_same.tflite"]
)
def test_pool_window_larger_than_map(rel):
    op, o, g = first_op(rel, tflite.Pool2DOptions)
    assert (o.FilterHeight(), o.FilterWidth(), o.StrideH(), o.StrideW()) == (7, 7, 7, 7)
    assert o.Padding() == tflite.Padding.SAME
    assert list(g.Tensors(op.Inputs(0)).ShapeAsNumpy()) == [1, 3, 3, 8]
    assert list(g.Tensors(op.Outputs(0)).ShapeAsNumpy()) == [1, 1, 1, 8]


def test_fully_connected_keep_num_dims():
    op, o, g = first_op("ops/fully_connected_keep_dims.tflite", tflite.FullyConnectedOptions)
    assert o.KeepNumDims()
    assert list(g.Tensors(op.Outputs(0)).ShapeAsNumpy()) == [1, 4, 8]


@pytest.mark.parametrize(
    "rel, scales", [("ops/fully_connected_per_tensor.tflite", 1), ("fc_int8.tflite", 32)]
)
def test_fully_connected_weight_quantization(rel, scales):
    op, _, g = first_op(rel, tflite.FullyConnectedOptions)
    assert g.Tensors(op.Inputs(1)).Quantization().ScaleLength() == scales


def test_squeeze_dims():
    op, o, g = first_op("ops/squeeze.tflite", tflite.SqueezeOptions)
    assert list(o.SqueezeDimsAsNumpy()) == [1, 2]
    assert list(g.Tensors(op.Outputs(0)).ShapeAsNumpy()) == [1, 8]


@pytest.mark.parametrize(
    "rel, axis", [("ops/concatenation.tflite", -1), ("ops/concatenation_float.tflite", -1)]
)
def test_concatenation_axis(rel, axis):
    _, o, _ = first_op(rel, tflite.ConcatenationOptions)
    assert o.Axis() == axis


def test_binary_inputs_have_different_scales():
    it = interpreter("ops/add.tflite")
    a, b = (d["quantization"][0] for d in it.get_input_details())
    assert b > 2 * a


def test_concatenation_requant_inputs_differ_before_the_quantize():
    it = interpreter("ops/concatenation_requant.tflite")
    by_name = {t["name"]: t["quantization"] for t in it.get_tensor_details()}
    tanh_out = [q for n, q in by_name.items() if n.startswith("Tanh") and q[0] == 1 / 128]
    assert tanh_out == [(1 / 128, 0)]  # TANH's fixed int8 output, requantized afterwards


@pytest.mark.parametrize(
    "rel, quant",
    [
        ("ops/logistic.tflite", (1 / 256, -128)),
        ("ops/tanh.tflite", (1 / 128, 0)),
        ("ops/softmax.tflite", (1 / 256, -128)),
    ],
)
def test_fixed_output_quantization(rel, quant):
    (out,) = interpreter(rel).get_output_details()
    assert out["quantization"] == quant
