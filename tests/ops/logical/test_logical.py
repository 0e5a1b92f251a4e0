"""The bool ops LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT and REDUCE_ALL (issue 35), between
comparisons and a SELECT_V2 of an int8 model: tflite and float mode equal LiteRT, the fallback
layers (`logic8`, REDUCE_ALL as the minimum of bool bytes in `reduce8`) make the mli executor
equal tflite mode, and the emitted C equals the executor on the real MLI 2.0.2 library in the
four builds (sa8, fx16) and compiles as C++20."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options

S = [4, 4, 8]


def _model(tmp_path, float32: bool = False):
    """x, y -> a = x > 0, b = y < 0.3, AND(a, b), OR(a, constant [8]), NOT(AND),
    REDUCE_ALL(OR) over W (kept), REDUCE_ALL(NOT) over H and W, SELECT_V2(OR, x, y)."""

    def act(shape=S, q=(0.05, 3)):
        if float32:
            return T([1, *shape], dtype="float32")
        return T([1, *shape], scale=[q[0]], zero_point=q[1])

    def flag(shape=S):
        return T([1, *shape], dtype="bool")

    zero = T([], dtype="float32", data=np.float32(0)) if float32 else None
    third = T([], dtype="float32", data=np.float32(0.3)) if float32 else None
    if not float32:
        zero = T([], scale=[0.05], zero_point=3, data=np.int8(3))
        third = T([], scale=[0.04], zero_point=-20, data=np.int8(-13))
    mask = np.array([1, 0, 1, 1, 0, 0, 1, 0], bool)
    tensors = [
        act(),  # 0 x
        act(q=(0.04, -20)),  # 1 y
        zero,  # 2
        third,  # 3
        flag(),  # 4 a
        flag(),  # 5 b
        flag(),  # 6 and
        T([8], dtype="bool", data=mask),  # 7
        flag(),  # 8 or
        flag(),  # 9 not
        T([1], dtype="int32", data=np.array([2], np.int32)),  # 10 axis W
        flag([4, 1, 8]),  # 11 all over W, kept
        T([2], dtype="int32", data=np.array([1, -2], np.int32)),  # 12 axes H, W
        T([1, 8], dtype="bool"),  # 13 all over H and W
        act(q=(0.05, 3)),  # 14 select
    ]
    ops = [
        ("GREATER", [0, 2], [4], None),
        ("LESS", [1, 3], [5], None),
        ("LOGICAL_AND", [4, 5], [6], None),
        ("LOGICAL_OR", [4, 7], [8], None),
        ("LOGICAL_NOT", [6], [9], None),
        ("REDUCE_ALL", [8, 10], [11], options("ReducerOptions", keepDims=True)),
        ("REDUCE_ALL", [9, 12], [13], options("ReducerOptions", keepDims=False)),
        ("SELECT_V2", [8, 0, 1], [14], None),
    ]
    path = tmp_path / f"logical_{'float32' if float32 else 'int8'}.tflite"
    path.write_bytes(graph_model(tensors, ops, [0, 1], [6, 9, 11, 13, 14]))
    return path


def _inputs(g, n=6, seed=0) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for i in g.inputs:
        t = g.tensors[i]
        if t.dtype == "float32":
            out[i] = rng.uniform(-1, 1, (n, *t.shape)).astype(np.float32)
        else:
            out[i] = rng.integers(-128, 128, (n, *t.shape)).astype(np.int8)
    return out


@pytest.mark.parametrize("float32", [False, True], ids=["int8", "float32"])
def test_modes_equal_litert(float32, tmp_path):
    path = _model(tmp_path, float32)
    g = read(path).main
    xs = _inputs(g)
    ref = reference_outputs(path, g, xs)
    ours = run_graph(g, xs, "float" if float32 else "tflite", keep=True)
    for op in g.ops:
        np.testing.assert_array_equal(ours[op.outputs[0]], ref[op.outputs[0]], err_msg=op.label)
    # both truth values in every bool output (the data reaches both branches of each op)
    for i in (6, 9, 11) if float32 else (6, 9, 11, 13):
        assert 0 < ref[i].mean() < 1


def test_mli_mode_equals_tflite_mode(tmp_path):
    g = read(_model(tmp_path)).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    kernels = {la.op_type: la.kernel for la in model.layers if la.kind == "fallback"}
    assert kernels["LOGICAL_AND"] == kernels["LOGICAL_NOT"] == "mlitool_logic8"
    assert kernels["REDUCE_ALL"] == "mlitool_reduce8"
    xs = _inputs(g, 32, seed=1)
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    ref = run_graph(g, xs, "tflite")
    for o in g.outputs:
        np.testing.assert_array_equal(np.asarray(ours[o]).astype(ref[o].dtype), ref[o])


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_c_on_the_real_library(fmt, mli_builds, tmp_path):
    path = _model(tmp_path)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


def test_c_compiles_as_cxx(tmp_path):
    if not shutil.which("g++"):
        pytest.skip("g++ not installed")
    conv = H.convert(_model(tmp_path), "sa8", tmp_path / "out")
    src = conv.out / "net.c"
    assert "net_logic8(" in src.read_text()
    cxx = ["g++", "-std=c++20", "-Wall", "-Wextra", "-Werror", "-pedantic", "-x", "c++"]
    r = subprocess.run(
        [
            *cxx,
            *mli_cflags("2.0"),
            "-I",
            str(conv.out),
            "-c",
            str(src),
            "-o",
            str(conv.out / "x.o"),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-3000:]


def test_mli1_refuses(tmp_path):
    g = read(_model(tmp_path)).main
    with pytest.raises(UnsupportedError, match="fallback C for it needs MLI 2.x"):
        lower(g, format="fx16", mli_version="1.1", layout="hwc")
