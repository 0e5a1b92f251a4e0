"""SOFTMAX on int16 (16x8 models) in `tflite` mode: TFLite's reference SoftmaxInt16 (exp and
1 / (1 + x) tables with interpolation), equal to LiteRT's reference kernel on every element; the
same model converts to fx16 and runs on the real MLI library bit-exact against the executor.
(int16 LOGISTIC and TANH: test_int16_sigmoid.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.reference.graph import run_graph
from mlitool.ops.activation.softmax16 import lut_lookup
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.litert import reference_outputs
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options, single_op_model

OUT = dict(dtype="int16", scale=[1 / 32768], zero_point=[0])


def fc_softmax(path, out_scale=1 / 1000):
    """int16 [1, 16] -> FULLY_CONNECTED (int8 weights, int64 bias) -> [1, 10] -> SOFTMAX."""
    rng = np.random.default_rng(4)
    ws = 0.004
    tensors = [
        T([1, 16], dtype="int16", name="x", scale=[1 / 4096], zero_point=[0]),
        T(
            [10, 16],
            data=rng.integers(-127, 128, (10, 16)).astype(np.int8),
            name="w",
            scale=[ws],
            zero_point=[0],
        ),
        T(
            [10],
            dtype="int64",
            data=rng.integers(-5000, 5000, 10).astype(np.int64),
            name="b",
            scale=[ws / 4096],
            zero_point=[0],
        ),
        T([1, 10], dtype="int16", name="logits", scale=[out_scale], zero_point=[0]),
        T([1, 10], name="probs", **OUT),
    ]
    ops = [
        ("FULLY_CONNECTED", [0, 1, 2], [3], options("FullyConnectedOptions")),
        ("SOFTMAX", [3], [4], options("SoftmaxOptions", beta=1.0)),
    ]
    path.write_bytes(graph_model(tensors, ops, [0], [4]))
    return path


def softmax_only(path, scale: float, beta: float, shape=(1, 3, 12)):
    path.write_bytes(
        single_op_model(
            "SOFTMAX",
            [T(list(shape), dtype="int16", scale=[scale], zero_point=[0])],
            [T(list(shape), **OUT)],
            options("SoftmaxOptions", beta=beta),
        )
    )
    return path


def _x(g, n, seed, spread=32768):
    shape = (n,) + tuple(g.tensors[g.inputs[0]].shape)
    rng = np.random.default_rng(seed)
    return rng.integers(-spread, spread, shape).astype(np.int16)


def _equal_to_litert(path, x_spread=32768, n=64):
    g = read(path).main
    x = {g.inputs[0]: _x(g, n, 11, x_spread)}
    ours = run_graph(g, x, "tflite", keep=True)
    ref = reference_outputs(path, g, x)
    for op in g.ops:
        i = op.outputs[0]
        assert ours[i].dtype == np.int16
        np.testing.assert_array_equal(ours[i], ref[i])
    return ours[g.outputs[0]]


def test_fc_then_softmax_equals_litert(tmp_path):
    probs = _equal_to_litert(fc_softmax(tmp_path / "fc_sm.tflite"), x_spread=12000)
    assert len(np.unique(probs)) > 100 and probs.min() >= 0  # real probabilities
    # rows sum to one within the rounding of ten Q0.15 values
    assert np.abs(probs.astype(np.int64).sum(axis=-1) - 32768).max() <= 10


@pytest.mark.parametrize(
    "scale,beta", [(1 / 4096, 1.0), (1 / 256, 1.0), (0.05, 1.0), (1 / 1000, 0.5), (3e-5, 2.0)]
)
def test_softmax_rows_equal_litert(scale, beta, tmp_path):
    """Scales where the row's differences stay inside [-10, 0], and where most fall beyond
    -10 (exp table's end), over several rows and beta != 1."""
    _equal_to_litert(softmax_only(tmp_path / "sm.tflite", scale, beta))


def test_lut_lookup_interpolates():
    """Entries 256 + (v >> 7) and the next, weighted by the low 7 bits (rounded)."""
    table = np.arange(513, dtype=np.int64) * 128 - 32768
    v = np.array([-32768, -1, 0, 64, 127, 32767])
    np.testing.assert_array_equal(lut_lookup(v, table), v)  # a linear table is the identity
    steps = np.zeros(513, np.int64)
    steps[257] = 100
    assert lut_lookup(np.array([0, 64, 127, 128]), steps).tolist() == [0, 50, 99, 100]


def test_fc_softmax_runs_on_the_real_library(mli_builds, tmp_path):
    path = fc_softmax(tmp_path / "fc_sm.tflite")
    H.assert_bit_exact(H.run_case(path, "fx16", tmp_path / "out", mli_builds, mli_cflags("2.0")))
