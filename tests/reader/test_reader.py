"""The reader against the TFLite interpreter's own view of every shared model."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.paths import SHARED, shared_path

MODELS = (
    sorted(
        p.relative_to(SHARED / "models").as_posix() for p in (SHARED / "models").glob("**/*.tflite")
    )
    if (SHARED / "models").is_dir()
    else []
)
if not MODELS:
    MODELS = ["<no shared models>"]


@pytest.fixture(scope="module", params=MODELS)
def pair(request):
    """(our Model, the interpreter) for one shared model."""
    from ai_edge_litert.interpreter import Interpreter

    from mlitool.tflite.reader import read_model

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
        except ValueError:  # not exposed by this interpreter build
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
            assert not t.data.flags.writeable  # views of the file bytes


def test_known_io_quantization():
    """Values from shared/models/README.md (the interpreter's report), independent of our code."""
    from mlitool.tflite.reader import read_model

    m = read_model(shared_path("models", "mlperf_tiny", "kws_ref_model_int8.tflite"))
    inp = m.main.tensors[m.main.inputs[0]]
    out = m.main.tensors[m.main.outputs[0]]
    assert inp.shape == (1, 49, 10, 1) and inp.dtype == "int8"
    assert inp.quant.zero_point.tolist() == [83]
    assert inp.quant.scale[0] == pytest.approx(0.58470, rel=1e-4)
    assert out.quant.scale[0] == 1 / 256 and out.quant.zero_point.tolist() == [-128]


def test_options_decoded():
    from mlitool.tflite.reader import read_model

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


# --------------------------------------------------------------------------------------------------
# Synthetic models: every field written by the test is compared with what the reader returns.

from tests.support.tflite_build import Buf, Code, Op, T, build, fc_spec  # noqa: E402


def _parse(spec_or_bytes):
    from mlitool.tflite.reader import parse_model

    data = spec_or_bytes if isinstance(spec_or_bytes, bytes) else build(spec_or_bytes)
    return parse_model(data, "synthetic.tflite")


def test_synthetic_fc_model_fields():
    w = np.arange(-6, 6, dtype=np.int8).reshape(3, 4)
    m = _parse(fc_spec(w))
    g = m.main
    assert m.signature_names == ["serving_default"] and m.description == "built by tests"
    assert m.warnings == [] and g.name == "main" and g.inputs == [0] and g.outputs == [3]
    weights, bias, inp = g.tensors[1], g.tensors[2], g.tensors[0]
    np.testing.assert_array_equal(weights.data, w)
    np.testing.assert_array_equal(bias.data, [100, -200, 300])
    assert bias.data.dtype == np.int32 and inp.data is None  # buffer 0: no data
    assert inp.shape_signature == (-1, 4) and weights.shape_signature is None
    assert weights.quant.axis == 0 and weights.quant.zero_point.dtype == np.int64
    np.testing.assert_array_equal(
        weights.quant.scale, np.float32([0.1, 0.2, 0.3]).astype(np.float64)
    )
    assert inp.quant.axis is None and inp.quant.scale.tolist() == [0.5]
    assert inp.quant.zero_point.tolist() == [-3]
    op = g.ops[0]
    assert op.type == "FULLY_CONNECTED" and op.inputs == (0, 1, 2) and op.outputs == (3,)
    assert op.options["fused_activation"] == "RELU" and op.options["keep_num_dims"] is True


def test_opcodes_custom_unknown_and_schema_3a():
    spec = fc_spec()
    spec.codes = [
        Code(builtin=150, deprecated=127),
        Code(builtin=0, deprecated=3),
        Code(builtin=32, custom="MyOp", version=2),
        Code(builtin=250, deprecated=127),
    ]
    spec.ops = [Op(0, [0], [3]), Op(1, [0, 1, -1], [3]), Op(2, [0], [3]), Op(3, [0], [3])]
    g = _parse(spec).main
    assert [op.type for op in g.ops] == ["GELU", "CONV_2D", "CUSTOM", "UNKNOWN_250"]
    assert (
        g.ops[2].custom_code == "MyOp" and g.ops[2].version == 2 and g.ops[2].label == "op 2 (MyOp)"
    )
    assert g.ops[1].inputs == (0, 1, -1)  # optional input kept


def test_variable_and_empty_buffer_tensors():
    spec = fc_spec()
    spec.tensors.append(T([1, 3], dtype="int16", buffer=3, name="state", is_variable=True))
    g = _parse(spec).main
    state = g.tensors[4]
    assert state.is_variable and state.data is None and state.dtype == "int16"


def test_external_buffer_data_read_from_file_offset():
    """>2 GB layout: buffer data after the flatbuffer, found by offset/size."""
    spec = fc_spec()
    payload = np.arange(12, dtype=np.int8)
    spec.buffers[1] = Buf(offset=1 << 40, size=12)  # placeholder, same layout
    head = build(spec)
    offset = (len(head) + 15) // 16 * 16
    spec.buffers[1] = Buf(offset=offset, size=12)
    head = build(spec)
    data = head + bytes(offset - len(head)) + payload.tobytes()
    w = _parse(data).main.tensors[1]
    np.testing.assert_array_equal(w.data, payload.reshape(3, 4))


def test_int4_unpacked_low_nibble_first():
    spec = fc_spec()
    spec.tensors[1].dtype = "int4"
    spec.buffers[1] = Buf(bytes([0x21, 0xF8, 0x07, 0x9A, 0x00, 0x7F]))
    w = _parse(spec).main.tensors[1]
    assert w.dtype == "int4"
    np.testing.assert_array_equal(w.data.reshape(-1), [1, 2, -8, -1, 7, 0, -6, -7, 0, 0, -1, 7])


def test_normalised_quantization_is_warned():
    spec = fc_spec()
    spec.tensors[1].zero_point = [0]  # one zero point for three scales
    spec.tensors[2].zero_point = None  # scales without zero points
    spec.tensors[3].axis = 1  # scalar params with an axis of size 3
    m = _parse(spec)
    g = m.main
    assert g.tensors[1].quant.zero_point.tolist() == [0, 0, 0] and g.tensors[1].quant.axis == 0
    assert g.tensors[2].quant.zero_point.tolist() == [0, 0, 0]
    assert g.tensors[3].quant.axis is None and g.tensors[3].quant.zero_point.tolist() == [7]
    assert len(m.warnings) == 3
    assert "'weights'" in m.warnings[0] and "broadcast" in m.warnings[0]
    assert "'bias'" in m.warnings[1] and "'output'" in m.warnings[2]


def test_scalar_tensor_with_one_element_buffer():
    spec = fc_spec()
    spec.tensors.append(T([], dtype="float32", buffer=3, name="scalar"))
    spec.buffers[3] = Buf(np.float32([2.5]).tobytes())
    t = _parse(spec).main.tensors[4]
    assert t.shape == () and t.data.shape == () and float(t.data) == 2.5


def test_no_quantization_when_scales_empty():
    spec = fc_spec()
    spec.tensors[0].scale, spec.tensors[0].zero_point = [], []
    assert _parse(spec).main.tensors[0].quant is None


def test_every_builtin_options_type_decodes_from_an_empty_table():
    """Defaults of every options table decode to plain values (no accessor crashes)."""
    import flatbuffers

    from mlitool.tflite.reader import _OPTION_CLASSES, _Reader

    b = flatbuffers.Builder(64)
    b.StartObject(0)
    b.Finish(b.EndObject(), file_identifier=b"TFL3")
    buf = bytes(b.Output())
    reader = _Reader(buf, "empty-table")
    pos = int.from_bytes(buf[:4], "little")
    decoded = {}
    for classes in _OPTION_CLASSES.values():
        for cls in classes.values():
            obj = cls()
            obj.Init(buf, pos)
            decoded[cls.__name__] = reader._decode_options(obj, cls, "op")
    for opts in decoded.values():
        assert all(isinstance(v, (bool, int, float, str, tuple)) for v in opts.values())
    assert decoded["Conv2DOptions"] == {
        "padding": "SAME",
        "stride_h": 0,
        "stride_w": 0,
        "dilation_h": 1,
        "dilation_w": 1,
        "fused_activation": "NONE",
    }
    assert decoded["Pool2DOptions"]["filter_h"] == 0 and "filter_w" in decoded["Pool2DOptions"]
    assert set(decoded["StridedSliceOptions"]) >= {
        "begin_mask",
        "end_mask",
        "ellipsis_mask",
        "new_axis_mask",
        "shrink_axis_mask",
        "offset",
    }
    assert decoded["ArgMaxOptions"] == {"output_type": "float32"}
    assert decoded["SqueezeOptions"] == {"squeeze_dims": ()}
    assert decoded["ReducerOptions"] == {"keep_dims": False}


def test_pool_options_from_real_model():
    from mlitool.tflite.reader import read_model

    m = read_model(shared_path("models", "mlperf_tiny", "kws_ref_model_int8.tflite"))
    pool = next(op for op in m.main.ops if op.type == "AVERAGE_POOL_2D")
    assert pool.options["filter_h"] == 25 and pool.options["filter_w"] == 5
    assert pool.options["padding"] == "VALID"
