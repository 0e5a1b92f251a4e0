"""GATHER with batch_dims other than 0 (TFLite Micro's gather.cc runs it on int8 and float32
with int32 indices): each batch row picks its own constant indices, so the selection is not one
index vector per axis; it runs on gather4 over the input seen as one axis, one index per output
element. tflite and float mode equal LiteRT, the mli executor equals tflite mode, the emitted C
equals the executor on the real MLI 2.0.2 library in the four builds (sa8, fx16). Indices given
at run time run on `gather_rows`, each batch row by its own indices: equal to LiteRT in tflite
mode and in the executor, its C equal to the executor on the real library."""

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
from tests.support.tflite_build import T, activation, graph_model, options

# name -> (input shape, constant indices, axis, batch_dims, output shape)
CASES = {
    "rows": ((1, 3, 5, 4), [[[4, 0], [1, 1], [3, 2]]], 2, 2, (1, 3, 2, 4)),
    "inner_axis": ((1, 3, 4, 5), [[[0, 4, 2], [3, 3, 1], [2, 0, 0]]], 3, 2, (1, 3, 4, 3)),
    "negative_bd": ((1, 4, 6), [[[5], [0], [2], [3]]], 2, -1, (1, 4, 1)),
    "batch_one": ((1, 6, 3), [[2, 5, 0, 0]], 1, 1, (1, 4, 3)),
}


def _model(tmp_path, name, dtype="int8", tanh=False):
    shape, idx, axis, bd, out_shape = CASES[name]
    idx = np.asarray(idx, np.int32)
    q = (1 / 128, 0) if tanh else (0.05, 3)
    tensors = [activation(shape, dtype, q), T(list(idx.shape), "int32", data=idx)]
    tensors.append(activation(out_shape, dtype, q))
    ops = [("GATHER", [0, 1], [2], options("GatherOptions", axis=axis, batchDims=bd))]
    graph_in = 0
    if tanh:
        tensors.append(activation(shape))
        ops.insert(0, ("TANH", [3], [0], None))
        graph_in = 3
    path = tmp_path / f"gather_bd_{name}_{dtype}.tflite"
    path.write_bytes(graph_model(tensors, ops, [graph_in], [2]))
    return path


def _inputs(g, n=3):
    rng = np.random.default_rng(4)
    t = g.tensors[g.inputs[0]]
    if t.dtype == "float32":
        return {g.inputs[0]: rng.uniform(-4, 4, (n, *t.shape)).astype(np.float32)}
    info = np.iinfo(t.dtype)
    return {g.inputs[0]: rng.integers(info.min, info.max + 1, (n, *t.shape)).astype(t.dtype)}


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_tflite_and_float_mode_equal_litert(name, dtype, tmp_path):
    path = _model(tmp_path, name, dtype)
    g = read(path).main
    xs = _inputs(g)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    assert ref.shape[1:] == CASES[name][4]
    for mode in ("tflite", "float") if dtype == "float32" else ("tflite",):
        np.testing.assert_array_equal(run_graph(g, xs, mode)[g.outputs[0]], ref, err_msg=mode)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gather4_equal_to_tflite_mode(name, tmp_path):
    path = _model(tmp_path, name)
    g = read(path).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    assert [la.kernel for la in model.layers if la.kind == "fallback"] == ["mlitool_gather4"]
    xs = _inputs(g)
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    np.testing.assert_array_equal(ours[g.outputs[0]], ref)


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("name", ["rows", "inner_axis"])
def test_c_on_the_real_library(name, fmt, mli_builds, tmp_path):
    path = _model(tmp_path, name, tanh=True)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))


def _run_time_model(tmp_path, name, dtype="int8"):
    """GATHER of CASES[name] with the indices a graph input (int32, TFLite Micro's coords)."""
    shape, idx, axis, bd, out_shape = CASES[name]
    ishape = list(np.asarray(idx).shape)
    q = (0.05, 3)
    tensors = [activation(shape, dtype, q), T(ishape, "int32"), activation(out_shape, dtype, q)]
    ops = [("GATHER", [0, 1], [2], options("GatherOptions", axis=axis, batchDims=bd))]
    path = tmp_path / f"gather_bd_run_time_{name}_{dtype}.tflite"
    path.write_bytes(graph_model(tensors, ops, [0, 1], [2]))
    return path


def _run_time_inputs(g, name, n=3):
    shape, idx, axis, _, _ = CASES[name]
    xs = _inputs(g, n)
    size = shape[axis if axis >= 0 else axis + len(shape)]
    rng = np.random.default_rng(9)
    ishape = np.asarray(idx).shape
    xs[g.inputs[1]] = rng.integers(0, size, (n, *ishape)).astype(np.int32)
    return xs


@pytest.mark.parametrize("name", sorted(CASES))
def test_run_time_indices_on_gather_rows_equal_litert(name, tmp_path):
    """Indices computed at run time: each batch row copies the rows its own indices pick
    (`gather_rows` with a batch count), equal to LiteRT in tflite mode and in the executor."""
    path = _run_time_model(tmp_path, name)
    g = read(path).main
    xs = _run_time_inputs(g, name)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[g.outputs[0]], ref)
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    assert [la.kernel for la in model.layers] == ["mlitool_gather_rows"]
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    np.testing.assert_array_equal(ours[g.outputs[0]], ref)


@pytest.mark.parametrize("name", ["rows", "inner_axis"])
def test_run_time_indices_c_on_the_real_library(name, mli_builds, tmp_path):
    path = _run_time_model(tmp_path, name)
    g = read(path).main
    conv = H.convert(path, "sa8", tmp_path / "out")
    batches = H.join_inputs(
        H.random_inputs(conv.model, 4, 0), H.model_inputs(g, conv.model, _run_time_inputs(g, name))
    )
    H.assert_bit_exact(
        H.check(conv, H.compile_objects(conv, mli_cflags("2.0")), mli_builds, batches)
    )
