"""Files of the op corpus (tests/corpus_ops) made for the op table's "no file" cells (issue 35):
int32 ops on an int32 model input (i32_*), ops on the bool tensors of comparisons (boolean_*).
Each: tflite mode (and float mode on float32 files) equals LiteRT, convert succeeds (int8: sa8,
float32: sa8 --weights-only), and the emitted C equals the executor on the real MLI 2.0.2
library in the four builds, in sa8 and fx16 (float32 files calibrated), on inputs inside the
file's input range and the harness's random containers."""

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
    "padv2",
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
FILES = [f"i32_{n}_float32" for n in I32] + [
    f"boolean_{n}_{v}" for n in BOOL for v in ("float32", "int8")
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
        want = "int32" if name.startswith("i32_") else "bool"
        assert e["dtype"] == want, name


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
    lower(g, format="sa8", mli_version="2.0", layout="hwc", weights_only=name.endswith("float32"))


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
