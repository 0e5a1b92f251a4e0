"""Files of the op corpus (tests/corpus_ops) made for the op table's "no file" cells (issue 35):
int32 ops on an int32 model input (i32_*), ops on the bool tensors of comparisons (boolean_*),
and builder-made CAST from int8 / int16, DEQUANTIZE, QUANTIZE (float32 / int8 / int16 to int8 /
int16) and EXPAND_DIMS of int16. Each: tflite mode (and float mode on float32 files) equals
LiteRT, convert succeeds (sa8, float32 files --weights-only; files writing int16: fx16), and
the emitted C equals the executor on the real MLI 2.0.2 library in the four builds, in sa8 and
fx16 (fx16 only where an int16 tensor is written; float32 inputs calibrated), on inputs inside
the file's input range and the harness's random containers."""

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
ENTRIES = json.loads((CORPUS / "corpus.json").read_text())["files"]
I32 = [
    "add",
    "broadcast_args",
    "concatenation",
    "div",
    "dynamic_update_slice",
    "equal",
    "fill",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "maximum",
    "minimum",
    "not_equal",
    "pack",
    "pad",
    "reverse_v2",
    "slice",
    "split",
    "split_v",
    "squared_difference",
    "strided_slice",
    "sub",
    "unpack",
    "zeros_like",
]
BOOL = ["concatenation", "equal", "not_equal", "reverse_v2", "slice", "strided_slice"]
BUILDER = [
    "cast_to_float_builder_int8",
    "cast_to_int32_builder_int8",
    "cast_to_int32_builder_int16",
    "cast_to_int8_builder_int16",
    "dequantize_builder_int8",
    "dequantize_builder_int16",
    "quantize_to_int8_builder_float32",
    "quantize_to_int16_builder_float32",
    "quantize_to_int8_builder_int8",
    "quantize_to_int16_builder_int8",
    "quantize_to_int8_builder_int16",
    "quantize_to_int16_builder_int16",
    "expand_dims_builder_int16",
]
FILES = (
    [f"i32_{n}_float32" for n in I32]
    + [f"boolean_{n}_{v}" for n in BOOL for v in ("float32", "int8")]
    + BUILDER
)
# where the file writes int16, sa8 would drop 8 bits of it: fx16 only
FORMATS = [
    (name, fmt)
    for name in FILES
    for fmt in ("sa8", "fx16")
    if fmt == "fx16" or ENTRIES[f"{name}.tflite"]["variant"] != "16x8"
]


def _inputs(g, name: str, n: int = 8, seed: int = 0) -> np.ndarray:
    """n samples of the file's input inside its input range."""
    rng = np.random.default_rng(seed)
    t = g.tensors[g.inputs[0]]
    lo, hi = ENTRIES[f"{name}.tflite"]["input_range"]
    shape = tuple(abs(d) for d in t.shape)
    if t.dtype == "float32":
        return rng.uniform(lo, hi, (n, *shape)).astype(np.float32)
    if t.dtype == "int8":
        return rng.integers(-128, 128, (n, *shape)).astype(np.int8)
    return rng.integers(int(lo), int(hi) + 1, (n, *shape)).astype(t.dtype)


def test_the_files_are_the_cells():
    """Each file runs its op at the dtype of its cell."""
    for name in FILES:
        e = ENTRIES[f"{name}.tflite"]
        assert e["op"] in e["ops"], name
        want = {"i32": "int32", "boolean": "bool"}.get(name.split("_")[0], name.split("_")[-1])
        assert e["dtype"] == want, name
        assert e["inputs"][0]["dtype"] == want or name.startswith("boolean_"), name


@pytest.mark.parametrize("name", FILES)
def test_equals_litert_and_converts(name):
    path = CORPUS / f"{name}.tflite"
    g = read(path).main
    xs = {g.inputs[0]: _inputs(g, name)}
    ref = reference_outputs(path, g, xs)
    modes = ("tflite", "float") if g_raw(g) else ("tflite",)
    for mode in modes:
        ours = run_graph(g, xs, mode)
        for o in g.outputs:
            np.testing.assert_array_equal(ours[o], ref[o], err_msg=mode)
    fmt = "fx16" if ENTRIES[f"{name}.tflite"]["variant"] == "16x8" else "sa8"
    lower(g, format=fmt, mli_version="2.0", layout="hwc", weights_only=g_float(g))


def g_float(g) -> bool:
    """Whether a model's input or output holds float32 (weights-only or calibrated)."""
    return any(g.tensors[i].dtype == "float32" for i in (*g.inputs, *g.outputs))


def g_raw(g) -> bool:
    """Whether no input or output of the model is quantized: float mode then computes what
    TFLite does (elsewhere it keeps real values)."""
    return all(g.tensors[i].quant is None for i in (*g.inputs, *g.outputs))


@pytest.mark.parametrize(("name", "fmt"), FORMATS)
def test_c_on_the_real_library(name, fmt, mli_builds, tmp_path):
    path = CORPUS / f"{name}.tflite"
    g = read(path).main
    real = _inputs(g, name, 8, seed=1)
    cal = None
    if g_float(g):
        cal = tmp_path / "cal.npy"
        np.save(cal, _inputs(g, name, 16, seed=2))
    results = H.run_case(
        path,
        fmt,
        tmp_path / "out",
        mli_builds,
        mli_cflags("2.0"),
        calibration=cal,
        real=real,
        samples=4,
    )
    H.assert_bit_exact(results)
