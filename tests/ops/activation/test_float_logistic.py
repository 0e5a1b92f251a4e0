"""Float32 LOGISTIC in float and tflite mode is reference_ops::Logistic: 1 above 16.619047,
exp(x) below -9, 1 / (1 + exp(-x)) in float32 between. LiteRT's exp is the host libm's expf
(glibc's misses the correctly rounded value on about 1 input in 2000) and ours is correctly
rounded, so against LiteRT a few elements in 10,000 may differ by one ulp; without the cutoffs
it was one in seven."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import read
from tests.support.litert import reference_outputs
from tests.support.tflite_build import T, single_op_model

f32 = np.float32


def _model(tmp_path):
    path = tmp_path / "logistic.tflite"
    path.write_bytes(
        single_op_model("LOGISTIC", [T([1, 64, 64], "float32")], [T([1, 64, 64], "float32")])
    )
    return path


def _inputs(g):
    rng = np.random.default_rng(4)
    return {g.inputs[0]: rng.uniform(-20, 20, (4, 1, 64, 64)).astype(f32)}


@pytest.mark.parametrize("mode", ["float", "tflite"])
def test_the_cutoffs_and_the_float32_formula(mode, tmp_path):
    g = read(_model(tmp_path)).main
    xs = _inputs(g)
    x = xs[g.inputs[0]]
    y = run_graph(g, xs, mode)[g.outputs[0]]
    x64 = x.astype(np.float64)
    high, low = x > f32(16.619047164916992188), x < f32(-9)
    assert high.any() and low.any()
    assert (y[high] == 1).all()
    # exp(x) correctly rounded: float64 exp is within 1 ulp of float64, far below float32's
    np.testing.assert_array_equal(y[low], np.exp(x64[low]).astype(f32))
    mid = ~(high | low)
    e = np.exp(-x64[mid]).astype(f32)
    np.testing.assert_array_equal(y[mid], f32(1) / (f32(1) + e))


def test_within_the_host_libm_of_litert(tmp_path):
    path = _model(tmp_path)
    g = read(path).main
    xs = _inputs(g)
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    ours = run_graph(g, xs, "tflite")[g.outputs[0]].reshape(ref.shape)
    differ = ours != ref
    assert differ.mean() < 0.002
    np.testing.assert_allclose(ours, ref, rtol=2**-22, atol=0)  # one ulp
