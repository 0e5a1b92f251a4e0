"""Grouped CONV_2D (filter depth below the input depth, Keras `Conv2D(groups=...)`): tflite mode
runs LiteRT's per-group arithmetic (float32 too, bit for bit) and float mode its float sums
(within float32 rounding), lowering
makes it MLI 2.x's group_conv2d (HWCN weights, Ci / groups deep), whose executor equals tflite
mode within MLI's rounding, and whose emitted C equals the executor on the real MLI 2.0.2
library in the four builds (sa8, fx16) and compiles as C++20. MLI 1.x has no such kernel."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options

# name -> (input shape, filters, filter depth, kernel, stride, padding: 0 SAME / 1 VALID)
CASES = {
    "groups4_same": ((1, 6, 6, 8), 8, 2, 3, 1, 0),
    "groups2_stride2_valid": ((1, 7, 9, 6), 4, 3, 3, 2, 1),
    "groups3_1x1": ((1, 4, 5, 6), 9, 2, 1, 1, 1),
}


def _model(tmp_path, name, dtype="int8"):
    shape, o, ci, k, s, pad = CASES[name]
    rng = np.random.default_rng(sorted(CASES).index(name))
    h = (shape[1] + s - 1) // s if pad == 0 else (shape[1] - k) // s + 1
    w = (shape[2] + s - 1) // s if pad == 0 else (shape[2] - k) // s + 1
    out = (1, h, w, o)
    if dtype == "float32":
        wv = rng.uniform(-0.5, 0.5, (o, k, k, ci)).astype(np.float32)
        tensors = [
            T(list(shape), "float32"),
            T(list(wv.shape), "float32", data=wv),
            T([o], "float32", data=rng.uniform(-1, 1, o).astype(np.float32)),
            T(list(out), "float32"),
        ]
    else:
        wv = rng.integers(-127, 128, (o, k, k, ci)).astype(np.int8)
        ws = rng.uniform(0.002, 0.01, o)
        x_scale, x_zp = (0.05, 3) if dtype == "int8" else (0.001, 0)
        bias_type = "int32" if dtype == "int8" else "int64"
        x_q = dict(scale=[x_scale], zero_point=[x_zp])
        y_q = dict(
            scale=[0.2 if dtype == "int8" else 0.004], zero_point=[-5 if dtype == "int8" else 0]
        )
        tensors = [
            T(list(shape), dtype, **x_q),
            T(list(wv.shape), data=wv, scale=list(ws), zero_point=[0] * o),
            T(
                [o],
                bias_type,
                data=rng.integers(-3000, 3000, o).astype(bias_type),
                scale=list(ws * x_scale),
                zero_point=[0] * o,
            ),
            T(list(out), dtype, **y_q),
        ]
    opts = options("Conv2DOptions", padding=pad, strideH=s, strideW=s)
    path = tmp_path / f"{name}_{dtype}.tflite"
    path.write_bytes(
        graph_model(tensors, [("CONV_2D", [0, 1, 2], [3], opts)], [0], [3], {"CONV_2D": 6})
    )
    return path


def _inputs(g, n=4, seed=0) -> dict:
    rng = np.random.default_rng(seed)
    t = g.tensors[g.inputs[0]]
    if t.dtype == "float32":
        return {g.inputs[0]: rng.uniform(-2, 2, (n, *t.shape)).astype(np.float32)}
    info = np.iinfo(t.dtype)
    return {g.inputs[0]: rng.integers(info.min, info.max + 1, (n, *t.shape)).astype(t.dtype)}


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_modes_equal_litert(name, dtype, tmp_path):
    path = _model(tmp_path, name, dtype)
    g = read(path).main
    xs = _inputs(g)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    if dtype == "float32":  # float mode: order-free sums, within tests/corpus_check's bound
        np.testing.assert_allclose(
            run_graph(g, xs, "float")[g.outputs[0]], ref, rtol=1e-5, atol=1e-6
        )
    # tflite mode: the same bits (float32: each group's sums in LiteRT's order)
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[g.outputs[0]], ref)


@pytest.mark.parametrize("name", sorted(CASES))
def test_lowered_as_group_conv2d(name, tmp_path):
    g = read(_model(tmp_path, name)).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    (layer,) = model.layers
    assert (layer.kind, layer.kernel) == ("group_conv2d", "mli_krn_group_conv2d_hwcn_sa8_sa8_sa32")
    _, o, ci, k, _, _ = CASES[name]
    assert model.tensor(layer.weights).shape == (k, k, ci, o)
    with pytest.raises(UnsupportedError, match="group_conv2d has no MLI 1.1 kernel"):
        lower(g, format="fx16", mli_version="1.1", layout="hwc")


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_c_on_the_real_library(name, fmt, mli_builds, tmp_path):
    path = _model(tmp_path, name)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


def test_c_compiles_as_cxx(tmp_path):
    if not shutil.which("g++"):
        pytest.skip("g++ not installed")
    conv = H.convert(_model(tmp_path, "groups4_same"), "sa8", tmp_path / "out")
    cxx = ["g++", "-std=c++20", "-Wall", "-Wextra", "-Werror", "-pedantic", "-x", "c++"]
    src = conv.out / "net.c"
    # the 3x3 specialization TFLite Micro picks (`--no-specialize`: the generic kernel)
    assert "mli_krn_group_conv2d_hwcn_sa8_sa8_sa32_k3x3(" in src.read_text()
    r = subprocess.run(
        [
            *cxx,
            *mli_cflags("2.0"),
            "-I",
            str(conv.out),
            "-c",
            str(src),
            "-o",
            str(conv.out / "cxx.o"),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-3000:]
