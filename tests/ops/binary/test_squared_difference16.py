"""int16 SQUARED_DIFFERENCE (16x8 models): TFLite Micro's kernel (LiteRT has none: it refuses
int16, as the first test shows). tflite mode stays within its rounding of the real squared
difference, the `squared_difference16` layer makes the mli executor equal tflite mode on
power-of-two scales (an activation against a broadcast constant, and two activations), and its C
equals the executor on the real MLI 2.0.2 library in the four builds."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model

SHAPE = [1, 4, 4, 8]
K = (np.arange(8) * 3000 - 12000).astype(np.int16)  # the constant operand, per channel


def _model(tmp_path, scales, const: bool):
    s1, s2, so = scales
    second = T([8], "int16", scale=s2, data=K) if const else T(SHAPE, "int16", scale=s2)
    tensors = [T(SHAPE, "int16", scale=s1), second, T(SHAPE, "int16", scale=so)]
    path = tmp_path / f"sqd16_{int(const)}.tflite"
    ops = [("SQUARED_DIFFERENCE", [0, 1], [2], None)]
    path.write_bytes(graph_model(tensors, ops, [0] if const else [0, 1], [2]))
    return path


def _inputs(g, n=8, seed=0):
    rng = np.random.default_rng(seed)
    return {
        i: rng.integers(-32768, 32768, (n, *g.tensors[i].shape)).astype(np.int16) for i in g.inputs
    }


def test_litert_has_no_int16_squared_difference(tmp_path):
    litert = pytest.importorskip("ai_edge_litert.interpreter")
    path = _model(tmp_path, (2.0**-12, 2.0**-12, 2.0**-6), const=False)
    it = litert.Interpreter(
        model_path=str(path), experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF
    )
    it.allocate_tensors()
    with pytest.raises(RuntimeError, match="only supports FLOAT32 and INT32"):
        it.invoke()


@pytest.mark.parametrize("scales", [(3.1e-4, 1.7e-4, 0.005), (2.0**-12, 2.0**-11, 2.0**-6)])
def test_tflite_mode_within_its_rounding_of_the_real_result(scales, tmp_path):
    g = read(_model(tmp_path, scales, const=False)).main
    xs = _inputs(g)
    s1, s2, so = scales
    ours = run_graph(g, xs, "tflite")[g.outputs[0]].astype(np.float64)
    a, b = (xs[i].astype(np.float64) for i in g.inputs)
    d = a * s1 - b * s2
    real = d * d / so
    # each operand lands on the scale 2 max(s1, s2), rounded twice (up to one step off), so
    # the difference is up to e = 2 steps off; the square then up to 2 |d| e + e^2
    e = 2 * (2 * max(s1, s2))
    bound = (2 * np.abs(d) * e + e * e) / so + 1
    inside = real < 32767
    assert np.all(np.abs(ours - real)[inside] <= bound[inside])
    assert np.all(ours[~inside] == 32767) and inside.any() and (~inside).any()


@pytest.mark.parametrize("const", [True, False], ids=["constant", "activations"])
def test_mli_mode_equals_tflite_mode(const, tmp_path):
    g = read(_model(tmp_path, (2.0**-12, 2.0**-11, 2.0**-6), const)).main
    model = lower(g, format="fx16", mli_version="2.0", layout="hwc")
    kernels = [la.kernel for la in model.layers if la.kind == "fallback"]
    assert kernels == ["mlitool_squared_difference16"]
    xs = _inputs(g, seed=1)
    ours = run_mli(g, model, xs, arith_for("vpx"))[0][g.outputs[0]]
    want = run_graph(g, xs, "tflite")[g.outputs[0]]
    np.testing.assert_array_equal(ours.reshape(want.shape), want)


@pytest.mark.parametrize("const", [True, False], ids=["constant", "activations"])
def test_fallback_c_on_the_real_library(const, mli_builds, tmp_path):
    path = _model(tmp_path, (3.1e-4, 1.7e-4, 0.005), const)
    H.assert_bit_exact(H.run_case(path, "fx16", tmp_path / "out", mli_builds, mli_cflags("2.0")))
