"""The op corpus's int16 files (16x8 models) and PADV2 values that TFLite Micro runs (issue 35):
tflite mode (float mode for float32 files) equals LiteRT's reference kernels, the file converts
(16x8: fx16, float32: sa8 --weights-only), and the emitted C equals the executor on the real MLI
2.0.2 library in the four builds. The 16x8 converter writes GREATER and PADV2 with a float32
constant that LiteRT refuses to prepare (mlitool calls such a file malformed, as the last test
shows); tools/make_op_corpus.py quantizes it in greater_int16 / padv2_int16."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.errors import ModelFormatError
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import ROOT, mli_cflags
from tests.support.tflite_build import T, graph_model

CORPUS = ROOT / "tests" / "corpus_ops"
FILES = [
    "abs_int16",
    "batch_matmul_int16",
    "greater_builder_int16",
    "greater_int16",
    "padv2_builder_int16",
    "padv2_float32",
    "padv2_int16",
    "select_v2_builder_int16",
]
# LiteRT has no int16 kernel for these (TFLite Micro has): tflite mode is TFLite Micro's
# arithmetic, compared with float mode on the dequantized input (its rounding: LSBs)
TFLM_ONLY = {"squared_difference_int16": 3}


def _inputs(g, seed=0) -> dict:
    rng = np.random.default_rng(seed)
    t = g.tensors[g.inputs[0]]
    if t.dtype == "float32":
        return {g.inputs[0]: rng.uniform(-1, 1, (4, *t.shape)).astype(np.float32)}
    info = np.iinfo(t.dtype)
    return {g.inputs[0]: rng.integers(info.min, info.max + 1, (4, *t.shape)).astype(t.dtype)}


@pytest.mark.parametrize("name", FILES)
def test_equals_litert_and_converts(name):
    path = CORPUS / f"{name}.tflite"
    g = read(path).main
    xs = _inputs(g)
    ref = reference_outputs(path, g, xs)
    float32 = name.endswith("float32")
    ours = run_graph(g, xs, "float" if float32 else "tflite")
    for o in g.outputs:
        np.testing.assert_array_equal(ours[o], ref[o])
    fmt = "fx16" if name.endswith("int16") else "sa8"
    model = lower(g, format=fmt, mli_version="2.0", layout="hwc", weights_only=float32)
    assert {la.kind for la in model.layers} & {"fallback", "padding"}


@pytest.mark.parametrize("name", sorted(TFLM_ONLY))
def test_tflm_only_files_follow_float_mode_and_convert(name):
    path = CORPUS / f"{name}.tflite"
    g = read(path).main
    xs = _inputs(g)
    x, out = g.tensors[g.inputs[0]], g.tensors[g.outputs[0]]
    ours = run_graph(g, xs, "tflite")[g.outputs[0]].astype(np.float64)
    real = {g.inputs[0]: xs[g.inputs[0]].astype(np.float32) * np.float32(x.quant.scale[0])}
    want = run_graph(g, real, "float")[g.outputs[0]] / float(out.quant.scale[0])
    assert np.abs(ours - want).max() <= TFLM_ONLY[name]
    model = lower(g, format="fx16", mli_version="2.0", layout="hwc")
    assert any(la.kind == "fallback" for la in model.layers)


@pytest.mark.parametrize("name", [f for f in [*FILES, *TFLM_ONLY] if f.endswith("int16")])
def test_c_on_the_real_library(name, mli_builds, tmp_path):
    path = CORPUS / f"{name}.tflite"
    H.assert_bit_exact(H.run_case(path, "fx16", tmp_path / "out", mli_builds, mli_cflags("2.0")))


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_calibrated_float_padv2_c_on_the_real_library(fmt, mli_builds, tmp_path):
    """PADV2 of float data with the value 0.5: SA8 pads through SA32 (raw 0 = the value), FX16
    through the `pad16` fallback C (MLI pads zeros); the C equals the executor."""
    path = CORPUS / "padv2_float32.tflite"
    g = read(path).main
    cal = tmp_path / "cal.npz"
    x = g.tensors[g.inputs[0]]
    rng = np.random.default_rng(4)
    np.savez(cal, **{x.name: rng.uniform(-1, 1, (16, *x.shape)).astype(np.float32)})
    conv = H.convert(path, fmt, tmp_path / "out", calibration=cal)
    kinds = [(la.kind, la.kernel) for la in conv.model.layers]
    if fmt == "fx16":
        assert ("fallback", "mlitool_pad16") in kinds
    else:
        assert [k for k, _ in kinds] == ["convert", "padding", "convert"]
    results = H.run_case(
        path, fmt, tmp_path / "out2", mli_builds, mli_cflags("2.0"), calibration=cal, samples=4
    )
    H.assert_bit_exact(results)


def _converter_artifact(tmp_path, op: str):
    """What TF 2.21's 16x8 converter writes for tf.where(x > 0.25, ...) / tf.pad(...,
    constant_values=0.5): int16 data beside an unquantized float32 scalar constant."""
    x = T([1, 4, 4, 2], "int16", scale=1 / 4096, name="x")
    value = T([], "float32", data=np.array(0.5 if op == "PADV2" else 0.25, np.float32))
    if op == "PADV2":
        pads = T([4, 2], "int32", data=np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32))
        tensors = [x, pads, value, T([1, 6, 6, 2], "int16", scale=1 / 4096)]
        ops = [("PADV2", [0, 1, 2], [3], None)]
    else:
        tensors = [x, value, T([1, 4, 4, 2], "bool")]
        ops = [("GREATER", [0, 1], [2], None)]
    path = tmp_path / f"{op.lower()}_artifact.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [len(tensors) - 1]))
    return path


@pytest.mark.parametrize("op", ["GREATER", "PADV2"])
def test_converter_artifacts_are_malformed_as_litert_says(op, tmp_path):
    """LiteRT refuses to prepare the converter's float32 constant beside int16 data (input
    types differ), and mlitool calls such a file malformed (exit 2), never refused for want of
    a kernel; tools/make_op_corpus.py quantizes that constant in greater_int16 / padv2_int16."""
    litert = pytest.importorskip("ai_edge_litert.interpreter")
    path = _converter_artifact(tmp_path, op)
    it = litert.Interpreter(
        model_path=str(path),
        experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF,
    )
    with pytest.raises(RuntimeError, match="INT16 != FLOAT32"):
        it.allocate_tensors()
    with pytest.raises(ModelFormatError, match="has type float32, the op's input int16"):
        read(path)
