"""`mlitool inspect`: the JSON summary against the TFLite interpreter, styles, rendering, CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from tests.support.paths import ROOT, SHARED, shared_path
from tests.support.tflite_build import build, fc_spec, unsupported_op_model

MODELS = (
    sorted(
        p.relative_to(SHARED / "models").as_posix() for p in (SHARED / "models").glob("**/*.tflite")
    )
    if (SHARED / "models").is_dir()
    else []
)

# Style of each shared model, from shared/models/README.md (what the files are known to be).
EXPECTED_STYLE = {
    "embarc_mli/mobilenet_v1_int8.tflite": ("int8", "per-axis"),
    "mlperf_tiny/ad01_float.tflite": ("float32", None),
    "mlperf_tiny/ad01_int8.tflite": ("int8", "per-tensor"),
    "mlperf_tiny/kws_ref_model_hybrid.tflite": ("dynamic-range", "per-tensor"),
    "mlperf_tiny/kws_ref_model_int8.tflite": ("int8", "per-axis"),
    "mlperf_tiny/resnet8_float.tflite": ("float32", None),
    "mlperf_tiny/resnet8_int8.tflite": ("int8", "per-axis"),
    "mlperf_tiny/vww_96_float.tflite": ("float32", None),
    "mlperf_tiny/vww_96_int8.tflite": ("int8", "per-axis"),
    "tflm/hello_world_float.tflite": ("float32", None),
    "tflm/hello_world_int8.tflite": ("int8", "per-tensor"),
    "tflm/micro_speech_int8.tflite": ("int8", "per-axis"),
    "tflm/mnist_lstm_int8.tflite": ("int8", "per-tensor"),
}


def run_main(args, capsys):
    from mlitool.cli.entry import main

    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


@pytest.fixture(scope="module", params=MODELS or ["<none>"])
def case(request):
    """(model name, inspect --json document, interpreter) for one shared model."""
    from ai_edge_litert.interpreter import Interpreter

    from mlitool.cli.entry import main

    path = shared_path("models", request.param)
    capture = _Capture()
    with capture, pytest.raises(SystemExit) as exc:
        main(["inspect", str(path), "--json"])
    assert exc.value.code == 0
    return request.param, json.loads(capture.text), Interpreter(model_path=str(path))


class _Capture:
    """Capture sys.stdout in a module-scoped fixture (capsys is function-scoped)."""

    def __enter__(self):
        import io

        self._old, sys.stdout = sys.stdout, io.StringIO()
        return self

    def __exit__(self, *exc):
        self.text, sys.stdout = sys.stdout.getvalue(), self._old
        return False


def _details(interp):
    return {d["index"]: d for d in interp.get_tensor_details()}


def test_op_types_and_counts_match_interpreter(case):
    _, doc, interp = case
    ops = interp._get_ops_details()
    assert doc["totals"]["ops"] == len(ops) == len(doc["ops"])
    assert [r["type"] for r in doc["ops"]] == [o["op_name"] for o in ops]
    counts: dict[str, int] = {}
    for o in ops:
        counts[o["op_name"]] = counts.get(o["op_name"], 0) + 1
    assert doc["op_counts"] == counts
    for row, o in zip(doc["ops"], ops):
        assert row["inputs"] == [int(i) for i in o["inputs"]]
        assert row["outputs"] == [int(i) for i in o["outputs"]]


def _assert_quant(q, d):
    qp = d["quantization_parameters"]
    if qp["scales"].size == 0:
        assert q is None
        return
    if qp["scales"].size == 1:
        assert q["kind"] == "per-tensor" and q["axis"] is None
        assert q["scale"] == float(qp["scales"][0]) and q["zero_point"] == int(qp["zero_points"][0])
    else:
        assert q["kind"] == "per-axis" and q["axis"] == qp["quantized_dimension"]
        assert q["scale"] == [float(v) for v in qp["scales"]]
        assert q["zero_point"] == [int(v) for v in qp["zero_points"]]


def test_io_match_interpreter(case):
    _, doc, interp = case
    for ours, theirs in (
        (doc["inputs"], interp.get_input_details()),
        (doc["outputs"], interp.get_output_details()),
    ):
        assert len(ours) == len(theirs)
        for row, d in zip(ours, theirs):
            assert row["index"] == d["index"] and row["name"] == d["name"]
            assert row["shape"] == d["shape"].tolist()
            assert row["dtype"] == np.dtype(d["dtype"]).name
            _assert_quant(row["quant"], d)


def test_op_rows_match_interpreter_tensors(case):
    _, doc, interp = case
    det = _details(interp)
    for row in doc["ops"]:
        assert row["output_shapes"] == [det[i]["shape"].tolist() for i in row["outputs"]]
        assert row["output_dtype"] == np.dtype(det[row["outputs"][0]]["dtype"]).name
        w = row["weights"]
        if w is None:
            continue
        d = det[w["index"]]
        assert w["shape"] == d["shape"].tolist() and w["dtype"] == np.dtype(d["dtype"]).name
        qp = d["quantization_parameters"]
        if qp["scales"].size == 0:
            assert w["quant"] is None
        elif qp["scales"].size > 1:
            assert w["quant"] == {"kind": "per-axis", "axis": qp["quantized_dimension"]}
        else:
            assert w["quant"] == {"kind": "per-tensor", "axis": None}


def test_macs_from_interpreter_shapes(case):
    """MACs recomputed from the interpreter's tensor shapes."""
    _, doc, interp = case
    det = _details(interp)
    ops = interp._get_ops_details()
    total = 0
    for row, o in zip(doc["ops"], ops):
        out = det[int(o["outputs"][0])]["shape"]
        expected = 0
        if o["op_name"] in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
            w = det[int(o["inputs"][1])]["shape"]
            n_out = int(np.prod(out))
            if o["op_name"] == "CONV_2D":  # weights [Co, Kh, Kw, Ci]
                expected = n_out * int(np.prod(w[1:]))
            elif o["op_name"] == "DEPTHWISE_CONV_2D":  # weights [1, Kh, Kw, Co]
                expected = n_out * int(w[1] * w[2])
            else:  # weights [Co, Ci]
                expected = n_out * int(w[1])
            assert row["macs"] == expected
        elif o["op_name"] in ("AVERAGE_POOL_2D", "MAX_POOL_2D", "ADD", "RESHAPE", "SOFTMAX"):
            assert row["macs"] == 0
        total += row["macs"]
    assert doc["totals"]["macs"] == total


def test_style_matches_known_model_kind(case):
    name, doc, _ = case
    assert (doc["style"]["name"], doc["style"]["weights"]) == EXPECTED_STYLE[name]


def test_supported_flags(case):
    from mlitool.ops.spec import lowered_ops

    _, doc, _ = case
    for row in doc["ops"]:
        assert row["supported"] == (row["type"] in lowered_ops())
    assert doc["totals"]["unsupported_ops"] == sum(not r["supported"] for r in doc["ops"])


def test_known_totals_kws():
    """DS-CNN KWS: weights and biases counted by hand from the layer shapes in the README model."""
    from mlitool.inspect.command import inspect_file

    doc = inspect_file(shared_path("models", "mlperf_tiny", "kws_ref_model_int8.tflite"))
    # conv 64x10x4x1+64, 4 x (dw 3x3x64+64, pw 64x64+64), fc 12x64+12
    params = (64 * 40 + 64) + 4 * ((9 * 64 + 64) + (64 * 64 + 64)) + (12 * 64 + 12)
    assert doc["totals"]["params"] == params
    # conv 25x5x64 x 40, 4 x (dw 25x5x64 x 9 + pw 25x5x64 x 64), fc 12 x 64
    assert doc["totals"]["macs"] == 8000 * 40 + 4 * (8000 * 9 + 8000 * 64) + 12 * 64


def test_known_styles_of_synthetic_models():
    from mlitool.inspect.command import summarize
    from mlitool.tflite.reader import parse_model

    assert summarize(parse_model(build(fc_spec())))["style"]["name"] == "int8"
    spec = fc_spec()
    for t in spec.tensors[:1] + spec.tensors[3:]:
        t.dtype = "int16"
    spec.buffers[1].data = np.zeros(12, np.int8).tobytes()
    assert summarize(parse_model(build(spec)))["style"] == {
        "name": "int16x8",
        "weights": "per-axis",
        "label": "int16x8 (per-axis weights)",
    }


# -- CLI behaviour -----------------------------------------------------------------------------------


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "mlitool", *args],
        capture_output=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )


def test_json_is_one_document_and_deterministic():
    path = str(shared_path("models", "tflm", "micro_speech_int8.tflite"))
    a, b = _cli("inspect", path, "--json"), _cli("inspect", path, "--json")
    assert a.returncode == 0 and a.stderr == b""
    assert a.stdout == b.stdout
    doc = json.loads(a.stdout)
    assert doc["file"] == path and b"\x1b[" not in a.stdout
    assert a.stdout.decode() == json.dumps(doc, sort_keys=True, indent=2) + "\n"


def test_human_output_flags_unsupported_ops(tmp_path, capsys):
    path = shared_path("models", "tflm", "mnist_lstm_int8.tflite")
    code, out, err = run_main(["inspect", str(path)], capsys)
    assert code == 0 and err == ""
    assert "int8 (per-tensor weights)" in out
    lstm_line = next(line for line in out.splitlines() if "UNIDIRECTIONAL_SEQUENCE_LSTM" in line)
    # one lstm_cell call per time step
    assert "MLI composition" in lstm_line and "NO" not in lstm_line
    assert "All ops are supported by the MLI converter" in out
    assert "9,530 parameters" in out
    cos = tmp_path / "cos.tflite"
    cos.write_bytes(unsupported_op_model())
    code, out, err = run_main(["inspect", str(cos)], capsys)
    cos_line = next(line for line in out.splitlines() if "SIGN" in line and "│" in line)
    assert code == 0 and "NO" in cos_line
    assert "Unsupported by the MLI converter: 1 op (SIGN)" in out


def test_human_output_shows_warnings(tmp_path, capsys):
    spec = fc_spec()
    spec.tensors[1].zero_point = [0]
    p = tmp_path / "untidy.tflite"
    p.write_bytes(build(spec))
    code, out, err = run_main(["inspect", str(p)], capsys)
    assert code == 0 and "warning:" in err and "broadcast" in err and "warning" not in out


def test_internal_error_exit_1(tmp_path, capsys, monkeypatch):
    import mlitool.inspect.command as insp

    def boom(_):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(insp, "summarize", boom)
    p = tmp_path / "ok.tflite"
    p.write_bytes(build(fc_spec()))
    code, out, err = run_main(["inspect", str(p)], capsys)
    assert code == 1 and "internal error" in err and "Traceback" not in err
    code, out, err = run_main(["--debug", "inspect", str(p)], capsys)
    assert code == 1 and "Traceback" in err


def test_help_and_version_do_not_import_heavy_modules():
    code = (
        "import sys; from mlitool.cli.entry import app; "
        "print(sorted(m for m in ('numpy', 'tflite', 'rich.table', 'mlitool.tflite.reader') "
        "if m in sys.modules))"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stdout + r.stderr
    h = _cli("--help")
    assert h.returncode == 0 and b"inspect" in h.stdout


def test_float16_weights_style_and_counts():
    """float16 weights behind a DEQUANTIZE: style, weights column and parameters counted once."""
    from mlitool.inspect.command import summarize
    from mlitool.tflite.reader import parse_model
    from tests.support.tflite_build import Buf, Code, Op, Spec, T

    w16 = np.arange(12, dtype=np.float16).reshape(3, 4)
    spec = Spec(
        tensors=[
            T([1, 4], "float32", name="in"),
            T([3, 4], "float16", buffer=1, name="w16"),
            T([3, 4], "float32", name="w"),
            T([1, 3], "float32", name="out"),
        ],
        ops=[Op(0, [1], [2]), Op(1, [0, 2, -1], [3])],
        codes=[Code(builtin=6), Code(builtin=9)],
        buffers=[Buf(), Buf(w16.tobytes())],
        inputs=[0],
        outputs=[3],
    )
    model = parse_model(build(spec))
    np.testing.assert_array_equal(model.main.tensors[1].data, w16)
    doc = summarize(model)
    assert doc["style"]["name"] == "float16-weights"
    fc = doc["ops"][1]
    assert fc["weights"] == {
        "index": 1,
        "shape": [3, 4],
        "dtype": "float16",
        "via_dequantize": True,
        "quant": None,
    }
    assert fc["macs"] == 12 and fc["params"] == 0 and doc["ops"][0]["params"] == 12
    assert doc["totals"]["params"] == 12 and doc["totals"]["weight_bytes"] == 24


def test_non_finite_scale_is_warned_and_json_stays_valid(tmp_path, capsys):
    spec = fc_spec()
    spec.tensors[0].scale = [float("nan")]
    p = tmp_path / "nan_scale.tflite"
    p.write_bytes(build(spec))
    code, out, err = run_main(["inspect", str(p), "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["inputs"][0]["quant"]["scale"] is None
    assert any("non-finite" in w for w in doc["warnings"])
    code, out, err = run_main(["inspect", str(p)], capsys)
    assert code == 0 and "invalid" in out


def test_runs_as_names_kernel_composition_fallback_and_view(tmp_path):
    """inspect says how each op runs: the cnn sample on MLI kernels, the LSTM as one cell call per
    step, an ELU as fallback C, a RESHAPE as a view."""
    from mlitool.inspect.command import inspect_file
    from tests.support.tflite_build import T, graph_model

    cnn = inspect_file(ROOT / "samples" / "cnn_int8.tflite")
    assert {r["runs_as"] for r in cnn["ops"]} == {"MLI"}
    q = dict(scale=[0.05], zero_point=[3])
    path = tmp_path / "elu_reshape.tflite"
    path.write_bytes(
        graph_model(
            [
                T([1, 4, 4, 2], **q),
                T([1, 4, 4, 2], **q),
                T([2], "int32", data=np.array([1, 32], np.int32)),
                T([1, 32], **q),
            ],
            [("ELU", [0], [1], None), ("RESHAPE", [1, 2], [3], None)],
            [0],
            [3],
        )
    )
    assert [r["runs_as"] for r in inspect_file(path)["ops"]] == ["fallback C", "view"]
