"""The reader against the TFLite interpreter's own view of every shared model."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import SHARED, shared_path

MODELS = sorted(p.relative_to(SHARED / "models").as_posix()
                for p in (SHARED / "models").glob("**/*.tflite")) if (SHARED / "models").is_dir() else []
if not MODELS:
    MODELS = ["<no shared models>"]


@pytest.fixture(scope="module", params=MODELS)
def pair(request):
    """(our Model, the interpreter) for one shared model."""
    from ai_edge_litert.interpreter import Interpreter

    from mlitool.tflite_reader import read_model

    path = shared_path("models", request.param)
    interp = Interpreter(model_path=str(path))
    return read_model(path), interp


def test_ops_match_interpreter(pair):
    model, interp = pair
    ops = interp._get_ops_details()
    g = model.main
    assert len(g.ops) == len(ops)
    for ours, theirs in zip(g.ops, ops):
        assert ours.type == theirs["op_name"]
        assert ours.inputs == tuple(int(i) for i in theirs["inputs"])
        assert ours.outputs == tuple(int(i) for i in theirs["outputs"])


def test_tensors_match_interpreter(pair):
    model, interp = pair
    g = model.main
    details = interp.get_tensor_details()
    assert details, "the interpreter lists no tensors"
    for d in details:
        t = g.tensors[d["index"]]
        assert t.name == d["name"]
        assert t.shape == tuple(int(v) for v in d["shape"])
        assert t.dtype == np.dtype(d["dtype"]).name
        assert t.shape_signature in (None, tuple(int(v) for v in d["shape_signature"]))
        qp = d["quantization_parameters"]
        if qp["scales"].size == 0:
            assert t.quant is None
            continue
        assert t.quant is not None
        np.testing.assert_array_equal(t.quant.scale, qp["scales"].astype(np.float64))
        np.testing.assert_array_equal(t.quant.zero_point, qp["zero_points"].astype(np.int64))
        if qp["scales"].size > 1:
            assert t.quant.axis == qp["quantized_dimension"]
        else:
            assert t.quant.axis is None


def test_constant_data_matches_interpreter(pair):
    model, interp = pair
    g = model.main
    checked = 0
    for t in g.tensors:
        if t.data is None:
            continue
        try:
            ref = interp.get_tensor(t.index)
        except ValueError:                       # not exposed by this interpreter build
            continue
        assert t.data.dtype == ref.dtype
        np.testing.assert_array_equal(t.data, ref)
        checked += 1
    assert checked > 0


def test_io_and_graph_structure(pair):
    model, interp = pair
    g = model.main
    assert [d["index"] for d in interp.get_input_details()] == g.inputs
    assert [d["index"] for d in interp.get_output_details()] == g.outputs
    assert len(model.subgraphs) >= 1
    for t in g.tensors:
        if t.data is not None:
            assert t.data.shape == t.shape
            assert not t.data.flags.writeable      # views of the file bytes


def test_known_io_quantization():
    """Values from shared/models/README.md (the interpreter's report), independent of our code."""
    from mlitool.tflite_reader import read_model

    m = read_model(shared_path("models", "mlperf_tiny", "kws_ref_model_int8.tflite"))
    inp = m.main.tensors[m.main.inputs[0]]
    out = m.main.tensors[m.main.outputs[0]]
    assert inp.shape == (1, 49, 10, 1) and inp.dtype == "int8"
    assert inp.quant.zero_point.tolist() == [83]
    assert inp.quant.scale[0] == pytest.approx(0.58470, rel=1e-4)
    assert out.quant.scale[0] == 1 / 256 and out.quant.zero_point.tolist() == [-128]


def test_options_decoded():
    from mlitool.tflite_reader import read_model

    m = read_model(shared_path("models", "tflm", "micro_speech_int8.tflite"))
    ops = {op.type: op for op in m.main.ops}
    dw = ops["DEPTHWISE_CONV_2D"].options
    assert dw["padding"] == "SAME" and dw["stride_h"] == 2 and dw["stride_w"] == 2
    assert dw["depth_multiplier"] == 8 and dw["fused_activation"] == "RELU"
    assert dw["dilation_h"] == 1 and dw["dilation_w"] == 1
    assert ops["RESHAPE"].options["new_shape"] == (-1, 49, 40, 1)
    fc = ops["FULLY_CONNECTED"].options
    assert fc["keep_num_dims"] is False and fc["weights_format"] == "DEFAULT"
    assert ops["SOFTMAX"].options["beta"] == 1.0
