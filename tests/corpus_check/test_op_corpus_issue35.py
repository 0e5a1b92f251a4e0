"""The op-corpus files (tests/corpus_ops) that issue 35's ops made convertible: tflite mode equals
LiteRT (`mlitool.oracle`: its reference kernels, or its builtin ones where the reference resolver
lacks the op) at the model's output, bit for bit, on every int8 input value; and the file
converts (int8: sa8, 16x8: fx16, float32: sa8 calibrated over its input range) with emitted C
equal to the mli executor on the real MLI 2.0.2 library in the four builds."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest

from mlitool import oracle
from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import read
from mlitool.tflite.reader import read_model
from tests.ops.unary.test_float_math import _every_int8, _litert_chain
from tests.support import runtime_harness as H
from tests.support.paths import ROOT, mli_cflags

CORPUS = ROOT / "tests" / "corpus_ops"
INDEX = json.loads((CORPUS / "corpus.json").read_text())["files"]
_BOTH = ["ceil", "floor", "round", "sin", "cos", "floor_div", "floor_mod", "arg_min"]
_BOTH += ["mirror_pad_reflect", "mirror_pad_symmetric", "broadcast_to", "strided_slice_neg"]
FILES = sorted(
    [f"{n}_{v}.tflite" for n in _BOTH for v in ("float32", "int8")]
    + ["strided_slice_neg_int16.tflite", "add_n_float32.tflite", "cumsum_float32.tflite"]
    + ["cumsum_exclusive_float32.tflite", "cumsum_reverse_float32.tflite"]
    + ["l2_pool_2d_float32.tflite"]
    + [f"cumsum{v}_int8.tflite" for v in ("", "_exclusive", "_reverse")]
)
FORMAT = {"int8": "sa8", "16x8": "fx16", "float32": "sa8"}


def _input(name: str, n: int) -> np.ndarray:
    (inp,) = INDEX[name]["inputs"]
    shape = (n, *(abs(d) for d in inp["shape"]))
    rng = np.random.default_rng(35)
    if inp["dtype"] in ("int8", "int16"):
        info = np.iinfo(inp["dtype"])
        x = rng.integers(info.min, info.max, shape, endpoint=True).astype(inp["dtype"])
        if inp["dtype"] == "int8":  # every value at least once
            flat = x.reshape(-1)
            flat[:256] = np.arange(-128, 128)
        return x
    low, high = INDEX[name]["input_range"]
    return rng.uniform(low, high, shape).astype(np.float32)


@pytest.mark.parametrize("name", FILES)
def test_tflite_mode_equals_litert(name, tmp_path):
    ok, why = oracle.available()
    if not ok:
        pytest.skip(why)
    path = CORPUS / name
    g = read(path).main
    if name in ("ceil_int8.tflite", "round_int8.tflite"):
        # LiteRT's reference resolver lacks CEIL / ROUND: the island on its kernels one at a
        # time (its builtin QUANTIZE rounds exact halves otherwise: test_float_math's docstring)
        raw = read_model(path).main
        deq, op, quant = raw.ops
        qin, qout = (
            raw.tensors[op_.inputs[0] if op_ is deq else op_.outputs[0]].quant
            for op_ in (deq, quant)
        )
        q = (
            float(qin.scale[0]),
            int(qin.zero_point[0]),
            float(qout.scale[0]),
            int(qout.zero_point[0]),
        )
        x = _every_int8().reshape((1, *g.tensors[g.inputs[0]].shape))  # 256 elements
        ours = run_graph(g, {g.inputs[0]: x}, "tflite")[g.outputs[0]]
        want = _litert_chain(tmp_path, op.type, q, None)
        np.testing.assert_array_equal(ours.reshape(-1), want.reshape(-1))
        return
    xs = {g.inputs[0]: _input(name, 3)}
    out = g.outputs[0]
    ref = oracle.run_litert(path, g, xs, [out])[out]
    got = run_graph(g, xs, "tflite")[out].reshape(ref.shape)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("name", FILES)
def test_converts_and_the_c_equals_the_executor(name, mli_builds, tmp_path):
    entry = INDEX[name]
    calibration = None
    if entry["variant"] == "float32":
        calibration = tmp_path / "calib.npy"
        np.save(calibration, _input(name, 8))
    results = H.run_case(
        CORPUS / name,
        FORMAT[entry["variant"]],
        tmp_path / "out",
        mli_builds,
        mli_cflags("2.0"),
        calibration=calibration,
        samples=2,
    )
    H.assert_bit_exact(results)


CXX = ["g++", "-std=c++20", "-Wall", "-Wextra", "-Werror", "-pedantic", "-x", "c++"]


@pytest.mark.skipif(not shutil.which("g++"), reason="g++ not installed")
@pytest.mark.parametrize(
    "name, kernel",
    [
        ("cumsum_reverse_float32.tflite", "cumsum8"),
        ("cumsum_exclusive_int8.tflite", "cumsum_island8"),
        ("l2_pool_2d_float32.tflite", "l2pool8"),
        ("arg_min_int8.tflite", "lut8"),
        ("mirror_pad_symmetric_int8.tflite", "gather4"),
        ("add_n_float32.tflite", "binary8"),
    ],
)
def test_new_fallback_c_compiles_as_cxx20(name, kernel, tmp_path):
    entry = INDEX[name]
    calibration = None
    if entry["variant"] == "float32":
        calibration = tmp_path / "calib.npy"
        np.save(calibration, _input(name, 4))
    H.convert(CORPUS / name, FORMAT[entry["variant"]], tmp_path, calibration=calibration)
    assert kernel in (tmp_path / "net.c").read_text()
    cmd = CXX + [*mli_cflags("2.0"), "-I", str(tmp_path), "-c", "net.c", "-o", "net.o"]
    res = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr[:4000]}"
