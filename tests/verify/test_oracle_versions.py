"""The LiteRT oracle runs LiteRT's reference kernels even where its reference resolver registers
an op only up to an older version than the converter writes (int8 TILE version 3 in a Keras
U-Net): the op's version is lowered, and the result is the reference kernels' at every layer,
which tflite mode equals; an op the reference resolver lacks in every version (ELU) runs on the
builtin kernels and the oracle says so, as does a model with an int8 / int16 SUM (LiteRT's
reference SUM of integers is not its builtin kernel, which is TFLite Micro's arithmetic)."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool import oracle
from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import read
from tests.support.paths import ROOT

pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
CORPUS = ROOT / "tests" / "corpus"


def test_tile_version_3_runs_on_the_reference_kernels():
    path = CORPUS / "unet_int8_b1.tflite"
    _, kernels = oracle.interpreter(path)
    assert kernels == "reference (TILE as version 2)"
    g = read(path).main
    rng = np.random.default_rng(5)
    xs = {i: rng.integers(-128, 128, (2,) + tuple(g.tensors[i].shape), np.int8) for i in g.inputs}
    every = [t for op in g.ops for t in op.outputs]
    ref = oracle.run_litert(path, g, xs, every)
    ours = run_graph(g, xs, "tflite", keep=True)
    for t in every:
        np.testing.assert_array_equal(ours[t], ref[t], err_msg=g.tensors[t].name)


def test_an_op_without_any_reference_kernel_runs_on_builtin_kernels():
    _, kernels = oracle.interpreter(CORPUS / "act_zoo_int8.tflite")
    assert kernels == "builtin (ELU has no reference kernel)"


@pytest.mark.parametrize(
    "name, kernels",
    [
        ("sum_int8", "builtin (LiteRT's reference int8 / int16 SUM is not its builtin one)"),
        ("sum_int16", "builtin (LiteRT's reference int8 / int16 SUM is not its builtin one)"),
        ("sum_float32", "reference"),
    ],
)
def test_an_integer_sum_runs_on_builtin_kernels_which_tflite_mode_equals(name, kernels):
    path = ROOT / "tests" / "corpus_ops" / f"{name}.tflite"
    assert oracle.interpreter(path)[1] == kernels
    g = read(path).main
    t = g.tensors[g.inputs[0]]
    rng = np.random.default_rng(7)
    if t.dtype == "float32":
        x = rng.uniform(-1, 1, (3, *t.shape)).astype(np.float32)
    else:
        info = np.iinfo(t.dtype)
        x = rng.integers(info.min, info.max, (3, *t.shape), endpoint=True).astype(t.dtype)
    out = g.outputs[0]
    ref = oracle.run_litert(path, g, {g.inputs[0]: x}, [out])[out]
    np.testing.assert_array_equal(run_graph(g, {g.inputs[0]: x}, "tflite")[out], ref)
