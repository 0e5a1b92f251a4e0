"""Files of the op corpus (tests/corpus_ops, made by the real TFLite converter of TF 2.21) with
int32 activations (and ARG_MIN's int64 indices) that the `integer` family's fallback C unlocked:
tflite mode (and float mode) equals LiteRT, convert succeeds (int8: sa8, float32: sa8
--weights-only), and the emitted C equals the executor on the real MLI 2.0.2 library in the four
builds, in sa8 and fx16 (float32 files calibrated; in fx16 converts around the fallback C), on inputs inside the file's input range (indices in the
table) and the harness's random containers (int32 indices mostly out of range: rows of 0)."""

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
FILES = [
    "arg_min_cast_float32",
    "arg_min_cast_int8",
    "cast_float_int32_float32",
    "cast_int32_int16_float32",
    "cast_int32_int8_float32",
    "embedding_float32",
    "embedding_int8",
    "embedding_lookup_float32",
    "embedding_lookup_int8",
    "int32_arith_float32",
]
RANGES = {
    name: json.loads((CORPUS / "corpus.json").read_text())["files"][f"{name}.tflite"]["input_range"]
    for name in FILES
}


def _inputs(g, name: str, n: int = 8, seed: int = 0) -> np.ndarray:
    """n samples of the file's input inside its input range (every id of a table, every sign
    of a divisor)."""
    rng = np.random.default_rng(seed)
    t = g.tensors[g.inputs[0]]
    lo, hi = RANGES[name]
    if t.dtype == "float32":
        return rng.uniform(lo, hi, (n, *t.shape)).astype(np.float32)
    if t.dtype == "int8":
        return rng.integers(-128, 128, (n, *t.shape)).astype(np.int8)
    return rng.integers(int(lo), int(hi) + 1, (n, *t.shape)).astype(t.dtype)


@pytest.mark.parametrize("name", FILES)
def test_equals_litert_and_converts(name):
    path = CORPUS / f"{name}.tflite"
    g = read(path).main
    xs = {g.inputs[0]: _inputs(g, name)}
    ref = reference_outputs(path, g, xs)
    modes = ("tflite", "float") if name.endswith("float32") else ("tflite",)
    for mode in modes:
        ours = run_graph(g, xs, mode)
        for o in g.outputs:
            np.testing.assert_array_equal(ours[o], ref[o], err_msg=mode)
    model = lower(
        g, format="sa8", mli_version="2.0", layout="hwc", weights_only=name.endswith("float32")
    )
    assert any(la.kind == "fallback" for la in model.layers)


def test_arg_min_cast_quantize_is_one_cast():
    """ARG_MIN -> CAST (int64 -> float32) -> QUANTIZE: one CAST writing the QUANTIZE's output."""
    g = read(CORPUS / "arg_min_cast_int8.tflite").main
    assert [op.type for op in g.ops] == ["ARG_MIN", "CAST"]
    assert g.tensors[g.ops[1].outputs[0]].dtype == "int8"


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("name", FILES)
def test_c_on_the_real_library(name, fmt, mli_builds, tmp_path):
    path = CORPUS / f"{name}.tflite"
    g = read(path).main
    real = _inputs(g, name, 8, seed=1)
    cal = None
    if name.endswith("float32"):
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
