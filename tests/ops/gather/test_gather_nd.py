"""GATHER_ND with constant indices onto gather4 (the indexed axes merged into one by a view, rows
picked by flat index): tflite and float mode equal LiteRT's reference kernels, the mli executor
equals tflite mode, the emitted C equals the executor on the real MLI 2.0.2 library in the four
builds (sa8, fx16; after a TANH). EMBEDDING_LOOKUP runs in both modes equal to LiteRT and is
refused by lowering (run-time ids)."""

from __future__ import annotations

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
from tests.support.paths import ROOT, mli_cflags
from tests.support.tflite_build import T, activation, graph_model

# name -> (input shape, constant indices, output shape)
CASES = {
    "pixels": ((1, 6, 5, 3), [[[0, 1, 4], [0, 5, 0], [0, 2, 2], [0, 1, 4]]], (1, 4, 3)),
    "rows": ((1, 6, 5, 3), [[[0, 5], [0, 0], [0, 3]]], (1, 3, 5, 3)),
    "elements": ((1, 6, 5, 3), [[[0, 1, 4, 2], [0, 5, 0, 0], [0, 3, 3, 1]]], (1, 3)),
    "rank3": ((1, 8, 4), [[[0, 7], [0, 2], [0, 2], [0, 0], [0, 5]]], (1, 5, 4)),
}


def _model(tmp_path, name, dtype="int8", tanh=False):
    shape, idx, out_shape = CASES[name]
    idx = np.asarray(idx, np.int32)
    q = (1 / 128, 0) if tanh else (0.05, 3)
    tensors = [activation(shape, dtype, q), T(list(idx.shape), "int32", data=idx)]
    tensors.append(activation(out_shape, dtype, q))
    ops = [("GATHER_ND", [0, 1], [2], None)]
    graph_in = 0
    if tanh:
        tensors.append(activation(shape))
        ops.insert(0, ("TANH", [3], [0], None))
        graph_in = 3
    path = tmp_path / f"gather_nd_{name}_{dtype}.tflite"
    path.write_bytes(graph_model(tensors, ops, [graph_in], [2], {"GATHER_ND": 3}))
    return path


def _inputs(g, n=3):
    rng = np.random.default_rng(4)
    t = g.tensors[g.inputs[0]]
    if t.dtype == "float32":
        return {g.inputs[0]: rng.uniform(-4, 4, (n, *t.shape)).astype(np.float32)}
    info = np.iinfo(t.dtype)
    return {g.inputs[0]: rng.integers(info.min, info.max + 1, (n, *t.shape)).astype(t.dtype)}


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_tflite_and_float_mode_equal_litert(name, dtype, tmp_path):
    path = _model(tmp_path, name, dtype)
    g = read(path).main
    xs = _inputs(g)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    assert ref.shape[1:] == CASES[name][2]
    modes = ("tflite", "float") if dtype == "float32" else ("tflite",)
    for mode in modes:
        np.testing.assert_array_equal(run_graph(g, xs, mode)[g.outputs[0]], ref, err_msg=mode)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gather4_on_the_merged_view_equals_tflite_mode(name, tmp_path):
    g = read(_model(tmp_path, name)).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    assert [la.kind for la in model.layers][-1] == "fallback"
    xs = _inputs(g)
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    np.testing.assert_array_equal(ours[g.outputs[0]], run_graph(g, xs, "tflite")[g.outputs[0]])


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_c_on_the_real_library(name, fmt, mli_builds, tmp_path):
    path = _model(tmp_path, name, tanh=True)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


@pytest.mark.parametrize("variant", ["float32", "int8"])
def test_embedding_lookup_runs_equal_to_litert_and_lowers_onto_gather_rows(variant):
    path = ROOT / "tests" / "corpus_ops" / f"embedding_lookup_{variant}.tflite"
    g = read(path).main
    ids = np.array([[0, 9, 4], [3, 3, 1]], np.int32)
    xs = {g.inputs[0]: ids}
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    for mode in ("tflite", "float") if variant == "float32" else ("tflite",):
        np.testing.assert_array_equal(run_graph(g, xs, mode)[g.outputs[0]], ref, err_msg=mode)
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc", weights_only=True)
    assert [la.kernel for la in model.layers] == ["mlitool_gather_rows"]
    if variant == "int8":  # rows copied: the int8 table's own integers
        ours, _ = run_mli(g, model, xs, arith_for("vpx"))
        np.testing.assert_array_equal(ours[g.outputs[0]], ref)


def test_embedding_lookup_of_an_int8_table_into_float_is_refused_by_lowering(tmp_path):
    tensors = [
        T([3], "int32"),
        T([10, 4], "int8", scale=[0.3], zero_point=[0], data=np.zeros((10, 4), np.int8)),
        T([3, 4], "float32"),
    ]
    path = tmp_path / "hybrid.tflite"
    path.write_bytes(graph_model(tensors, [("EMBEDDING_LOOKUP", [0, 1], [2], None)], [0], [2]))
    g = read(path).main
    with pytest.raises(UnsupportedError, match="from a table of int8 into float32"):
        lower(g, format="sa8", mli_version="2.0", layout="hwc", weights_only=True)


def test_embedding_lookup_of_an_int8_table_into_float_scales_it(tmp_path):
    """TFLite's hybrid lookup: int8 rows times the table's scale (zero point 0)."""
    table = np.arange(-20, 20, dtype=np.int8).reshape(10, 4)
    tensors = [
        T([3], "int32"),
        T([10, 4], "int8", scale=[0.3], zero_point=[0], data=table),
        T([3, 4], "float32"),
    ]
    path = tmp_path / "hybrid.tflite"
    path.write_bytes(graph_model(tensors, [("EMBEDDING_LOOKUP", [0, 1], [2], None)], [0], [2]))
    g = read(path).main
    xs = {0: np.array([[0, 9, 4], [1, 1, 2]], np.int32)}
    ref = reference_outputs(path, g, xs)[2]
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[2].view(np.int32), ref.view(np.int32))
    np.testing.assert_allclose(run_graph(g, xs, "float")[2], ref, rtol=1e-6)
