"""Files of the op corpus (tests/corpus_ops, made by the real TFLite converter of TF 2.21) that
issue 35's rows / space_batch / dilated fold / grouped conv / bool / CAST / wide-comparison work
unlocked: tflite mode equals LiteRT bit for bit (float32 files too; their float mode within
float32 rounding where its order-free sums round otherwise), convert succeeds (int8: sa8,
16x8: fx16, float32: sa8 --weights-only), and the int8 files' emitted C equals the executor on
the real MLI 2.0.2 library in the four builds."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import ROOT, mli_cflags

CORPUS = ROOT / "tests" / "corpus_ops"
FILES = [
    "batch_to_space_nd_float32",
    "batch_to_space_nd_int8",
    "cast_bool_float_float32",
    "cast_bool_float_int8",
    "conv_2d_dilated_dynbatch_float32",
    "conv_2d_dilated_dynbatch_int16",
    "conv_2d_dilated_dynbatch_int8",
    "conv_2d_grouped_float32",
    "conv_2d_grouped_int16",
    "conv_2d_grouped_int8",
    "depthwise_conv_2d_dilated_dynbatch_float32",
    "depthwise_conv_2d_dilated_dynbatch_int16",
    "depthwise_conv_2d_dilated_dynbatch_int8",
    "equal_float32",
    "greater_float32",
    "logical_and_float32",
    "logical_not_float32",
    "logical_or_float32",
    "reduce_all_float32",
    "select_v2_float32",
    "space_to_batch_nd_float32",
    "space_to_batch_nd_int8",
    "strided_slice_shrink_float32",
    "strided_slice_shrink_int16",
    "strided_slice_shrink_int8",
]
# float mode's float32 sums are not in LiteRT's order (tests/corpus_check's bound)
ROUNDING = {"conv_2d_dilated_dynbatch_float32", "conv_2d_grouped_float32"}


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
    ours = run_graph(g, xs, "tflite")
    floats = run_graph(g, xs, "float") if float32 else {}
    for o in g.outputs:
        np.testing.assert_array_equal(ours[o], ref[o])
        if name in ROUNDING:
            np.testing.assert_allclose(floats[o], ref[o], rtol=1e-5, atol=1e-6)
        elif float32:
            np.testing.assert_array_equal(floats[o], ref[o])
    fmt = "fx16" if name.endswith("int16") else "sa8"
    model = lower(g, format=fmt, mli_version="2.0", layout="hwc", weights_only=float32)
    assert model.layers


@pytest.mark.parametrize("name", [f for f in FILES if f.endswith("int8")])
def test_int8_files_c_on_the_real_library(name, mli_builds, tmp_path):
    path = CORPUS / f"{name}.tflite"
    H.assert_bit_exact(H.run_case(path, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0")))
