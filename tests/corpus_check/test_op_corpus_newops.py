"""Files of the op corpus (tests/corpus_ops, made by the real TFLite converter of TF 2.21, and
the builder's int16 files) that the new-ops work unlocked: GATHER_ND of rows (not a batch),
BROADCAST_ARGS folded, ZEROS_LIKE folded, DYNAMIC_UPDATE_SLICE and PRELU with a general slope
onto fallback C. tflite mode (float mode for float32 files) equals LiteRT, convert succeeds
(int8: sa8, int16: fx16, float32: sa8 --weights-only), and the int8 / int16 files' emitted C
equals the executor on the real MLI 2.0.2 library in the four builds."""

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
    "broadcast_args_float32",
    "broadcast_args_int8",
    "dynamic_update_slice_builder_int16",
    "dynamic_update_slice_float32",
    "dynamic_update_slice_int8",
    "gather_nd_float32",
    "gather_nd_int8",
    "prelu_float32",
    "prelu_int8",
    "zeros_like_float32",
    "zeros_like_int8",
]


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
    assert model.layers


@pytest.mark.parametrize("name", [f for f in FILES if not f.endswith("float32")])
def test_integer_files_c_on_the_real_library(name, mli_builds, tmp_path):
    path = CORPUS / f"{name}.tflite"
    fmt = "fx16" if name.endswith("int16") else "sa8"
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))
