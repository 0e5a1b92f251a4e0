"""BATCH_MATMUL on fallback C (`batch_matmul8`): tflite mode equals LiteRT's reference kernel
(int8, and float32 bit for bit; adj_x / adj_y, broadcast batch dimensions, a constant operand),
float mode LiteRT's float kernel within rounding, the mli executor tflite mode, and the emitted
C on the real MLI 2.0.2 library the executor in the four builds (sa8, and fx16 with conversions
around the fallback)."""

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

QL, QR, QO = (0.05, 3), (0.04, -7), (0.3, -10)

# (lhs shape, rhs shape, adj_x, adj_y, rhs constant)
CASES = {
    "plain": ((1, 2, 5, 3), (1, 2, 3, 4), False, False, False),
    "adj_broadcast": ((1, 2, 3, 5), (1, 1, 4, 3), True, True, False),
    "constant_rhs": ((1, 5, 3), (3, 4), False, False, True),
    "row": ((1, 3), (1, 3, 4), False, False, False),
}


def _out_shape(lhs, rhs, adj_x, adj_y):
    m = lhs[-1] if adj_x else lhs[-2]
    n = rhs[-2] if adj_y else rhs[-1]
    batch = np.broadcast_shapes(tuple(lhs[:-2]), tuple(rhs[:-2]))
    return [*batch, m, n]


def _model(tmp_path, case: str, dtype: str = "int8", relus: bool = False):
    """BATCH_MATMUL (with RELUs before and after when `relus`: between MLI layers)."""
    lhs, rhs, adj_x, adj_y, const = CASES[case]
    out = _out_shape(lhs, rhs, adj_x, adj_y)
    rng = np.random.default_rng(3)

    def t(shape, q, data=None):
        if dtype == "float32":
            return T(list(shape), "float32", None, None, data=data)
        return T(list(shape), scale=[q[0]], zero_point=[q[1]], data=data)

    data = None
    if const:
        data = rng.integers(-128, 128, rhs).astype(np.int8)
        data = data if dtype == "int8" else (data / 64).astype(np.float32)
    tensors = [t(lhs, QL), t(rhs, QR, data), t(out, QO)]
    opts = options("BatchMatMulOptions", adjX=adj_x, adjY=adj_y)
    ops = [("BATCH_MATMUL", [0, 1], [2], opts)]
    inputs, outputs = [0] + ([] if const else [1]), [2]
    if relus:
        tensors += [t(lhs, QL), t(out, QO)]
        ops = [("RELU", [3], [0], None), *ops, ("RELU", [2], [4], None)]
        inputs, outputs = [3] + ([] if const else [1]), [4]
    path = tmp_path / f"bmm_{case}.tflite"
    path.write_bytes(graph_model(tensors, ops, inputs, outputs))
    return path


def _random(g, n=16, dtype=np.int8) -> dict:
    rng = np.random.default_rng(5)
    shape = lambda i: (n,) + tuple(g.tensors[i].shape)  # noqa: E731
    if dtype == np.float32:
        return {i: rng.uniform(-2, 2, shape(i)).astype(np.float32) for i in g.inputs}
    return {i: rng.integers(-128, 128, shape(i)).astype(np.int8) for i in g.inputs}


@pytest.mark.parametrize("case", sorted(CASES))
def test_tflite_mode_equals_litert(case, tmp_path):
    path = _model(tmp_path, case)
    g = read(path).main
    xs = _random(g)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[g.outputs[0]], ref)


@pytest.mark.parametrize("case", sorted(CASES))
def test_float_mode_equals_litert_float(case, tmp_path):
    path = _model(tmp_path, case, "float32")
    g = read(path).main
    xs = _random(g, dtype=np.float32)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    ours = run_graph(g, xs, "float")[g.outputs[0]]
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-5)
    # tflite mode: reference_ops::BatchMatMul's sums in order, bit for bit
    np.testing.assert_array_equal(run_graph(g, xs, "tflite")[g.outputs[0]], ref)


@pytest.mark.parametrize("case", sorted(CASES))
def test_mli_mode_equals_tflite_mode(case, tmp_path):
    g = read(_model(tmp_path, case)).main
    model = lower(g, format="sa8", mli_version="2.0", layout="hwc")
    (layer,) = model.layers
    assert (layer.kind, layer.kernel) == ("fallback", "mlitool_batch_matmul8")
    assert layer.cfg["adj_x"] == CASES[case][2] and layer.cfg["adj_y"] == CASES[case][3]
    xs = _random(g)
    ours, _ = run_mli(g, model, xs, arith_for("vpx"))
    np.testing.assert_array_equal(ours[g.outputs[0]], run_graph(g, xs, "tflite")[g.outputs[0]])


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
@pytest.mark.parametrize("case", ["adj_broadcast", "constant_rhs"])
def test_fallback_c_on_the_real_library(case, fmt, mli_builds, tmp_path):
    path = _model(tmp_path, case, relus=True)
    H.assert_bit_exact(H.run_case(path, fmt, tmp_path / "out", mli_builds, mli_cflags("2.0")))
