"""int16 comparisons and SELECT_V2 (16x8 models): tflite mode equals LiteRT, which compares the
stored int16 values (its scales ignored); the `compare16` / `select16` layers make the mli
executor equal tflite mode on power-of-two scales, ties included; the emitted C equals the
executor on the real MLI 2.0.2 library in the four builds."""

from __future__ import annotations

import numpy as np

from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, single_op_model

# TFLite Micro runs GREATER on int16 only; LiteRT's EQUAL / NOT_EQUAL of int16 (op version 1)
# answer true for every pair, so those two are not compared with it here
OPS = ["GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL"]
SHAPE = [1, 4, 4, 8]
Q = {"scale": 1 / 4096, "zero_point": 0}  # [-8, 8): FX16 with 12 frac bits
K = np.array([-3, -1, 0, 0, 1, 2, 3, 3], np.int16)  # the constant, broadcast along channels


def _chain(tmp_path):
    """x compared with the constant K by each op, each condition selecting between x
    and a constant: six outputs."""
    tensors = [T(SHAPE, "int16", **Q, name="x"), T([8], "int16", data=K, **Q, name="k")]
    y = T([1, 1, 1, 8], "int16", data=(np.arange(8) * 300 - 1000).astype(np.int16), **Q)
    tensors.append(y)
    ops, outs = [], []
    for op in OPS:
        tensors.append(T(SHAPE, "bool"))
        ops.append((op, [0, 1], [len(tensors) - 1], None))
        tensors.append(T(SHAPE, "int16", **Q))
        ops.append(("SELECT_V2", [len(tensors) - 2, 0, 2], [len(tensors) - 1], None))
        outs.append(len(tensors) - 1)
    path = tmp_path / "chain16.tflite"
    path.write_bytes(graph_model(tensors, ops, [0], outs))
    return path


def _small(n, seed=1):
    """int16 inputs near the constant's values: every comparison meets ties."""
    return np.random.default_rng(seed).integers(-4, 5, (n, *SHAPE)).astype(np.int16)


def test_tflite_mode_equals_litert_and_mli_mode_equals_tflite_mode(tmp_path):
    path = _chain(tmp_path)
    g = read(path).main
    xs = {g.inputs[0]: _small(16)}
    ref = reference_outputs(path, g, xs)
    want = run_graph(g, xs, "tflite", keep=True)
    for i in g.outputs:  # (LiteRT reuses the bool tensors' memory)
        np.testing.assert_array_equal(want[i], ref[i], err_msg=str(i))
    model = lower(g, format="fx16", mli_version="2.0", layout="hwc")
    kernels = [la.kernel for la in model.layers if la.kind == "fallback"]
    assert kernels == ["mlitool_compare16", "mlitool_select16"] * len(OPS)
    ours, _ = run_mli(g, model, xs, arith_for("vpx"), keep=True)
    for i in [op.outputs[0] for op in g.ops]:
        np.testing.assert_array_equal(ours[i].astype(want[i].dtype), want[i], err_msg=str(i))


def test_litert_compares_int16_values_not_real_values(tmp_path):
    """Operands of different scales: LiteRT compares the integers (so does tflite mode)."""
    path = tmp_path / "greater16.tflite"
    path.write_bytes(
        single_op_model(
            "GREATER",
            [T([1, 8], "int16", scale=1 / 4096), T([1, 8], "int16", scale=1 / 1024)],
            [T([1, 8], "bool")],
        )
    )
    g = read(path).main
    a = np.array([[[100, 200, 300, 400, 500, -5, 4000, 4097]]], np.int16)
    b = np.array([[[50, 50, 50, 50, 50, -2, 1000, 1024]]], np.int16)
    xs = dict(zip(g.inputs, (a, b)))
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    np.testing.assert_array_equal(ref, a > b)
    assert not np.array_equal(ref, a / 4096 > b / 1024)
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[g.outputs[0]], ref)


def test_fallback_c_on_the_real_library(mli_builds, tmp_path):
    conv = H.convert(_chain(tmp_path), "fx16", tmp_path / "out")
    objs = H.compile_objects(conv, mli_cflags("2.0"))
    inputs = {
        name: _small(24, seed=2).reshape(24, *conv.model.tensor(name).shape)
        for name in conv.model.inputs
    }
    H.assert_bit_exact(H.check(conv, objs, mli_builds, inputs))
