"""ARG_MIN as argmax of the int8 complement (-1 - x: a lut8 table, then MLI's argmax): tflite
and float mode equal LiteRT (ties: the first index), the lowered layers make the mli executor
equal tflite mode where no two values of a row tie (MLI keeps the last of equal maxima, as for
ARG_MAX), and the emitted C equals the executor on the real MLI 2.0.2 library in the four builds,
in sa8 and fx16 (after a TANH, so rows tie too)."""

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
from tests.support.tflite_build import T, graph_model, options

SHAPES = {"rows": ((1, 4, 3, 256), 3), "one_row": ((1, 1, 1, 256), 3), "width": ((1, 2, 256, 1), 2)}


def _model(tmp_path, name, dtype="int8", tanh=False):
    shape, axis = SHAPES[name]
    out_shape = list(shape[:axis] + shape[axis + 1 :])
    x = (
        T(list(shape), "float32")
        if dtype == "float32"
        else T(list(shape), scale=[0.05], zero_point=[3])
    )
    tensors = [x, T([], "int32", data=np.int32(axis)), T(out_shape, "int32")]
    ops = [("ARG_MIN", [0, 1], [2], options("ArgMinOptions", outputType=2))]
    graph_in = 0
    if tanh:
        tensors.append(T(list(shape), scale=[0.05], zero_point=[3]))
        tensors[0] = T(list(shape), scale=[1 / 128], zero_point=[0])
        ops.insert(0, ("TANH", [3], [0], None))
        graph_in = 3
    path = tmp_path / f"arg_min_{name}_{dtype}.tflite"
    path.write_bytes(graph_model(tensors, ops, [graph_in], [2], {"ARG_MIN": 2}))
    return path


def _rows_without_ties(shape, n, dtype):
    """Each row along the last non-unit axis a permutation of the 256 int8 values."""
    rng = np.random.default_rng(11)
    size = max(shape)
    rows = int(np.prod(shape)) // size
    perm = np.stack([rng.permutation(size) - 128 for _ in range(n * rows)])
    x = perm.reshape(n, rows, size)
    axis = [d for d, s in enumerate(shape) if s == size][0]
    moved = x.reshape((n,) + tuple(s for d, s in enumerate(shape) if d != axis) + (size,))
    x = np.moveaxis(moved, -1, axis + 1)
    return x.astype(np.float32) / 16 if dtype == "float32" else x.astype(np.int8)


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_tflite_and_float_mode_equal_litert(name, dtype, tmp_path):
    path = _model(tmp_path, name, dtype)
    g = read(path).main
    shape = SHAPES[name][0]
    rng = np.random.default_rng(1)
    ties = rng.integers(-128, 128, (2, *shape))  # few values: many ties
    ties = (ties // 64).astype(np.float32) if dtype == "float32" else (ties // 64).astype(np.int8)
    x = np.concatenate([_rows_without_ties(shape, 2, dtype), ties])
    xs = {g.inputs[0]: x}
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    for mode in ("tflite", "float"):
        np.testing.assert_array_equal(run_graph(g, xs, mode)[g.outputs[0]], ref, err_msg=mode)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_lut8_then_argmax_equal_to_tflite_mode(name, tmp_path):
    g = read(_model(tmp_path, name)).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    kinds = [la.kind for la in model.layers]
    assert kinds[0] == "fallback" and "argmax" in kinds
    xs = {g.inputs[0]: _rows_without_ties(SHAPES[name][0], 3, "int8")}
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    np.testing.assert_array_equal(
        ours[g.outputs[0]].reshape(-1), run_graph(g, xs, "tflite")[g.outputs[0]].reshape(-1)
    )


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("name", ["rows", "one_row"])
def test_c_on_the_real_library(name, fmt, mli_builds, tmp_path):
    path = _model(tmp_path, name, tanh=True)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))
