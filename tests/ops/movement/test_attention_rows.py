"""What PyTorch's attention and PixelShuffle export to (issue 34, found on unseen litert-torch
files: a ViT and an image-to-image network): TRANSPOSEs of rank-3 / rank-4 tensors whose leading
dimension is tokens or heads, not a batch ([6, 2, 4] -> [2, 6, 4], [6, 1, 8] -> [1, 6, 8],
PixelShuffle's [4, 2, 2, 6] -> [4, 2, 6, 2]), BATCH_MATMUL over heads ([2, 6, 4] x [2, 4, 6]),
and a CONCATENATION with a constant input (the class token). They were refused as "has batch N"
or "constant concatenation inputs". tflite mode equals LiteRT, the lowered model equals tflite
mode, and the emitted C equals the executor on the real MLI 2.0.2 library in the four builds."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, activation, graph_model, int32_const, options

Q = (1 / 128, 0)  # TANH's int8 output parameters


def _heads(tmp_path, dtype="int8"):
    """x [1, 6, 8] -> TANH -> RESHAPE [6, 2, 4] -> TRANSPOSE (1, 0, 2) [2, 6, 4] (q) and
    TRANSPOSE (1, 2, 0) [2, 4, 6] (k) -> BATCH_MATMUL [2, 6, 6]; and q -> TRANSPOSE (1, 0, 2)
    [6, 2, 4] -> RESHAPE [6, 1, 8] -> TRANSPOSE (1, 0, 2) [1, 6, 8] -> RELU."""
    tensors = [
        activation((1, 6, 8), dtype, q=(0.05, 3)),  # 0 x
        activation((1, 6, 8), dtype, q=Q),  # 1 tanh
        int32_const([6, 2, 4]),  # 2
        activation((6, 2, 4), dtype, q=Q),  # 3 heads
        int32_const([1, 0, 2]),  # 4
        activation((2, 6, 4), dtype, q=Q),  # 5 q
        int32_const([1, 2, 0]),  # 6
        activation((2, 4, 6), dtype, q=Q),  # 7 k
        activation((2, 6, 6), dtype, q=(0.02, -5)),  # 8 scores
        activation((6, 2, 4), dtype, q=Q),  # 9 back
        int32_const([6, 1, 8]),  # 10
        activation((6, 1, 8), dtype, q=Q),  # 11
        activation((1, 6, 8), dtype, q=Q),  # 12
        activation((1, 6, 8), dtype, q=Q),  # 13 relu
    ]
    reshape = options("ReshapeOptions")
    ops = [
        ("TANH", [0], [1], None),
        ("RESHAPE", [1, 2], [3], reshape),
        ("TRANSPOSE", [3, 4], [5], None),
        ("TRANSPOSE", [3, 6], [7], None),
        ("BATCH_MATMUL", [5, 7], [8], options("BatchMatMulOptions")),
        ("TRANSPOSE", [5, 4], [9], None),
        ("RESHAPE", [9, 10], [11], reshape),
        ("TRANSPOSE", [11, 4], [12], None),
        ("RELU", [12], [13], None),
    ]
    path = tmp_path / f"heads_{dtype}.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [8, 13]))
    return path


def _pixel_shuffle(tmp_path, dtype="int8"):
    """x [1, 4, 4, 6] -> TANH -> RESHAPE [4, 2, 2, 6] -> TRANSPOSE (0, 1, 3, 2) [4, 2, 6, 2]
    -> TRANSPOSE (0, 2, 1, 3) [4, 6, 2, 2] -> RESHAPE [1, 4, 6, 4] -> RELU."""
    tensors = [
        activation((1, 4, 4, 6), dtype, q=(0.05, 3)),
        activation((1, 4, 4, 6), dtype, q=Q),
        int32_const([4, 2, 2, 6]),
        activation((4, 2, 2, 6), dtype, q=Q),
        int32_const([0, 1, 3, 2]),
        activation((4, 2, 6, 2), dtype, q=Q),
        int32_const([0, 2, 1, 3]),
        activation((4, 6, 2, 2), dtype, q=Q),
        int32_const([1, 4, 6, 4]),
        activation((1, 4, 6, 4), dtype, q=Q),
        activation((1, 4, 6, 4), dtype, q=Q),
    ]
    reshape = options("ReshapeOptions")
    ops = [
        ("TANH", [0], [1], None),
        ("RESHAPE", [1, 2], [3], reshape),
        ("TRANSPOSE", [3, 4], [5], None),
        ("TRANSPOSE", [5, 6], [7], None),
        ("RESHAPE", [7, 8], [9], reshape),
        ("RELU", [9], [10], None),
    ]
    path = tmp_path / f"pixel_shuffle_{dtype}.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [10]))
    return path


def _class_token(tmp_path, dtype="int8"):
    """x [1, 4, 8] -> TANH -> CONCATENATION(class token [1, 1, 8] (constant), x) on axis 1
    [1, 5, 8] -> RELU."""
    if dtype == "float32":
        token = T([1, 1, 8], dtype="float32", data=np.linspace(-0.9, 0.7, 8, dtype=np.float32))
        token.data = token.data.reshape(1, 1, 8)
    else:
        values = np.array([-100, -3, 0, 5, 17, 64, 99, 127], np.int8).reshape(1, 1, 8)
        token = T([1, 1, 8], scale=[Q[0]], zero_point=[Q[1]], data=values)
    tensors = [
        activation((1, 4, 8), dtype, q=(0.05, 3)),
        activation((1, 4, 8), dtype, q=Q),
        token,
        activation((1, 5, 8), dtype, q=Q),
        activation((1, 5, 8), dtype, q=Q),
    ]
    ops = [
        ("TANH", [0], [1], None),
        ("CONCATENATION", [2, 1], [3], options("ConcatenationOptions", axis=1)),
        ("RELU", [3], [4], None),
    ]
    path = tmp_path / f"class_token_{dtype}.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], [4]))
    return path


MODELS = {"heads": _heads, "pixel_shuffle": _pixel_shuffle, "class_token": _class_token}


def _inputs(g, n=3, seed=0) -> dict:
    rng = np.random.default_rng(seed)
    t = g.tensors[g.inputs[0]]
    if t.dtype == "float32":
        return {g.inputs[0]: rng.uniform(-2, 2, (n, *t.shape)).astype(np.float32)}
    info = np.iinfo(t.dtype)
    return {g.inputs[0]: rng.integers(info.min, info.max + 1, (n, *t.shape)).astype(t.dtype)}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_tflite_mode_equals_litert_and_lowering_equals_it(name, tmp_path):
    path = MODELS[name](tmp_path)
    g = read(path).main
    xs = _inputs(g)
    ref = reference_outputs(path, g, xs)
    ours = run_graph(g, xs, "tflite")
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    lowered, _ = run_mli(g, model, xs, arith_for("vpx"))
    for o in g.outputs:
        np.testing.assert_array_equal(ours[o], ref[o])
        np.testing.assert_array_equal(lowered[o], ref[o])


def test_float_modes_equal_litert(tmp_path):
    for name, make in MODELS.items():
        path = make(tmp_path, "float32")
        g = read(path).main
        xs = _inputs(g)
        ref = reference_outputs(path, g, xs)
        ours = run_graph(g, xs, "float")
        for o in g.outputs:
            np.testing.assert_allclose(ours[o], ref[o], rtol=1e-6, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_c_on_the_real_library(name, fmt, mli_builds, tmp_path):
    path = MODELS[name](tmp_path)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


def test_calibrated_float_class_token_c_on_the_real_library(mli_builds, tmp_path):
    path = _class_token(tmp_path, "float32")
    cal = tmp_path / "cal.npz"
    np.savez(cal, t0=np.random.default_rng(3).uniform(-2, 2, (16, 1, 4, 8)).astype(np.float32))
    results = H.run_case(
        path, "sa8", tmp_path / "out", mli_builds, mli_cflags("2.0"), calibration=cal, samples=4
    )
    H.assert_bit_exact(results)
