"""The float32 files of the op corpus (tests/corpus_ops) that were "float32 rounding" in tflite
mode: their sums are now added in LiteRT's reference order (`execute/reference/sequential.py`),
so tflite mode gives LiteRT's bits on several inputs (float mode, order-free, within float32
rounding). The rest stay within float32 rounding for
the host libm's sake (`tests.support.litert.LIBM_OPS`): TANH (tanhf), ELU (expm1f), LOG_SOFTMAX
(expf, logf), LOGISTIC (expf: equal on most inputs since its cutoffs are LiteRT's) and the
float LSTM (its gates' sigmoid and tanh)."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import read
from tests.support.litert import libm_ops, reference_outputs
from tests.support.paths import ROOT

CORPUS = ROOT / "tests" / "corpus_ops"
EXACT = [
    "batch_matmul_float32",
    "conv_2d_dilated_dynbatch_float32",
    "conv_2d_dilated_float32",
    "conv_2d_float32",
    "conv_2d_grouped_float32",
    "fully_connected_float32",
    "transpose_conv_float32",
]
LIBM = [
    "elu_float32",
    "log_softmax_float32",
    "logistic_float32",
    "lstm_bidirectional_float32",
    "lstm_float32",
    "tanh_float32",
]


def _run(name: str):
    path = CORPUS / f"{name}.tflite"
    g = read(path).main
    rng = np.random.default_rng(11)
    xs = {i: rng.uniform(-3, 3, (4, *g.tensors[i].shape)).astype(np.float32) for i in g.inputs}
    return g, xs, reference_outputs(path, g, xs), run_graph(g, xs, "tflite")


@pytest.mark.parametrize("name", EXACT)
def test_tflite_mode_is_litert_bit_for_bit(name):
    g, xs, ref, ours = _run(name)
    assert not libm_ops(g)
    floats = run_graph(g, xs, "float")
    for o in g.outputs:
        assert ours[o].dtype == np.float32
        np.testing.assert_array_equal(ours[o], ref[o].reshape(ours[o].shape))
        want = ref[o].reshape(ours[o].shape)
        # float mode's sums are near exact; LiteRT's carry one rounding per term
        np.testing.assert_allclose(floats[o], want, rtol=0, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("name", LIBM)
def test_libm_ops_stay_within_float32_rounding(name):
    g, _, ref, ours = _run(name)
    assert libm_ops(g)
    for o in g.outputs:
        np.testing.assert_allclose(ours[o], ref[o].reshape(ours[o].shape), rtol=1e-5, atol=1e-6)
