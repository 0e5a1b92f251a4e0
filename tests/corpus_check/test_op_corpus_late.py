"""Files of the op corpus (tests/corpus_ops, made by the real TFLite converter of TF 2.21 or the
flatbuffer builder) that the late int32 follow-ups unlocked: DYNAMIC_UPDATE_SLICE with start
indices computed at run time and on int32 data (`update_slice_at`), ZEROS_LIKE that stays in the graph
(`fill_value`), int32 PADV2 with a value (`pad32`), GATHER with batch_dims (`gather4`, one index
per element), 16x8 PRELU with a slope along two axes (`prelu16`). tflite mode (and float mode on
float32 files) equals LiteRT bit for bit, convert succeeds onto the named fallback C (int8 and
int32: sa8, 16x8: fx16, float32: sa8 --weights-only), and the emitted C of the files without
float activations equals the executor on the real MLI 2.0.2 library in the four builds."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import ROOT, mli_cflags

CORPUS = ROOT / "tests" / "corpus_ops"
# file -> the fallback C the op under test runs on (None: folded into a constant)
FILES = {
    "dus_int32_data_float32": "mlitool_update_slice_at",
    "dus_run_time_starts_float32": "mlitool_update_slice_at",
    # the int8 island DEQUANTIZE -> DYNAMIC_UPDATE_SLICE (run-time starts) -> QUANTIZE
    "dus_run_time_starts_int8": "mlitool_update_slice_at",
    "gather_batch_dims_float32": "mlitool_gather4",
    "gather_batch_dims_int8": "mlitool_gather4",
    "padv2_int32_value_float32": "mlitool_pad32",
    "prelu_general_builder_int16": "mlitool_prelu16",
    "zeros_like_int32_output_float32": "mlitool_fill_value",
    "zeros_like_output_float32": "mlitool_fill_value",
    "zeros_like_output_int8": None,  # the int8 island DEQUANTIZE -> ZEROS_LIKE -> QUANTIZE folds
}
# no float activations: the C runs on the model's own integers
C_FILES = [
    "dus_int32_data_float32",
    "dus_run_time_starts_int8",
    "gather_batch_dims_int8",
    "padv2_int32_value_float32",
    "prelu_general_builder_int16",
    "zeros_like_int32_output_float32",
]


def _inputs(name: str, g, n=4, seed=0) -> dict:
    rng = np.random.default_rng(seed)
    t = g.tensors[g.inputs[0]]
    entry = json.loads((CORPUS / "corpus.json").read_text())["files"][f"{name}.tflite"]
    lo, hi = entry["input_range"]
    if t.dtype == "float32":
        return {g.inputs[0]: rng.uniform(lo, hi, (n, *t.shape)).astype(np.float32)}
    if t.dtype == "int32":
        return {g.inputs[0]: rng.integers(int(lo), int(hi) + 1, (n, *t.shape)).astype(np.int32)}
    info = np.iinfo(t.dtype)
    return {g.inputs[0]: rng.integers(info.min, info.max + 1, (n, *t.shape)).astype(t.dtype)}


def _format(name: str) -> str:
    return "fx16" if name.endswith("int16") else "sa8"


@pytest.mark.parametrize("name", sorted(FILES))
def test_equals_litert_and_converts(name):
    path = CORPUS / f"{name}.tflite"
    g = read(path).main
    xs = _inputs(name, g)
    ref = reference_outputs(path, g, xs)
    float_model = g.tensors[g.inputs[0]].dtype == "float32" and name.endswith("float32")
    ours = run_graph(g, xs, "tflite")
    floats = run_graph(g, xs, "float") if float_model else {}
    for o in g.outputs:
        np.testing.assert_array_equal(ours[o], ref[o])
        if float_model:
            np.testing.assert_array_equal(floats[o], ref[o])
    model = lower(g, format=_format(name), mli_version="2.0", layout="hwc", weights_only=True)
    kernels = {la.kernel for la in model.layers if la.kind == "fallback"}
    if FILES[name] is None:
        assert "ZEROS_LIKE" not in [op.type for op in g.ops]
    else:
        assert FILES[name] in kernels


@pytest.mark.parametrize("name", C_FILES)
def test_c_on_the_real_library(name, mli_builds, tmp_path):
    path = CORPUS / f"{name}.tflite"
    conv = H.convert(path, _format(name), tmp_path / "out")
    g = read(path).main
    batches = H.join_inputs(
        H.random_inputs(conv.model, 4, 0), H.model_inputs(g, conv.model, _inputs(name, g))
    )
    H.assert_bit_exact(
        H.check(conv, H.compile_objects(conv, mli_cflags("2.0")), mli_builds, batches)
    )
