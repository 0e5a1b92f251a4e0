"""int16 x int16 -> int16 BATCH_MATMUL (16x8 models): tflite mode equals LiteRT's reference
kernel (int64 sums, the 64-bit MultiplyByQuantizedMultiplier) for adj_x / adj_y and broadcast
batch dimensions, scales of any ratio; the `batch_matmul16` layer makes the mli executor equal
tflite mode on power-of-two scales; its C equals the executor on the real MLI 2.0.2 library in
the four builds."""

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

# case: lhs shape, rhs shape, out shape, adj_x, adj_y
CASES = {
    "plain": ([1, 5, 7], [1, 7, 3], [1, 5, 3], False, False),
    "adj": ([1, 2, 7, 5], [1, 2, 3, 7], [1, 2, 5, 3], True, True),
    "broadcast": ([1, 2, 5, 7], [1, 1, 7, 3], [1, 2, 5, 3], False, False),
}
POW2 = (2.0**-12, 2.0**-11, 2.0**-8)  # lhs, rhs, output scales
RATIO = (3.1e-4, 1.7e-4, 2.3e-3)


def _model(tmp_path, case, scales):
    lhs, rhs, out, adj_x, adj_y = CASES[case]
    path = tmp_path / f"bmm16_{case}.tflite"
    tensors = [T(s, "int16", scale=q) for s, q in zip((lhs, rhs, out), scales)]
    opts = options("BatchMatMulOptions", adjX=adj_x, adjY=adj_y)
    path.write_bytes(graph_model(tensors, [("BATCH_MATMUL", [0, 1], [2], opts)], [0, 1], [2]))
    return path


def _inputs(g, n=8, seed=0):
    rng = np.random.default_rng(seed)
    return {
        i: rng.integers(-32768, 32768, (n, *g.tensors[i].shape)).astype(np.int16) for i in g.inputs
    }


@pytest.mark.parametrize("scales", [POW2, RATIO], ids=["pow2", "ratio"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_tflite_mode_equals_litert(case, scales, tmp_path):
    path = _model(tmp_path, case, scales)
    g = read(path).main
    xs = _inputs(g)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    ours = run_graph(g, xs, "tflite")[g.outputs[0]]
    np.testing.assert_array_equal(ours, ref)
    assert 0 < np.count_nonzero(np.abs(ref.astype(int)) == 32767) < ref.size  # some saturate


@pytest.mark.parametrize("case", sorted(CASES))
def test_mli_mode_equals_tflite_mode(case, tmp_path):
    g = read(_model(tmp_path, case, POW2)).main
    model = lower(g, format="fx16", mli_version="2.0", layout="hwc")
    kernels = [la.kernel for la in model.layers if la.kind == "fallback"]
    assert kernels == ["mlitool_batch_matmul16"]
    xs = _inputs(g, seed=1)
    ours = run_mli(g, model, xs, arith_for("vpx"))[0][g.outputs[0]]
    want = run_graph(g, xs, "tflite")[g.outputs[0]]
    np.testing.assert_array_equal(ours.reshape(want.shape), want)


@pytest.mark.parametrize("case", sorted(CASES))
def test_fallback_c_on_the_real_library(case, mli_builds, tmp_path):
    path = _model(tmp_path, case, RATIO)
    H.assert_bit_exact(H.run_case(path, "fx16", tmp_path / "out", mli_builds, mli_cflags("2.0")))
