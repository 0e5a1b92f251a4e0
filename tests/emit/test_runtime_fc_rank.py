"""FULLY_CONNECTED whose TFLite output keeps its dimensions ([1, 1, N], as after an LSTM in
TFLite Micro's DTLN model): mli_krn_fully_connected writes a rank-1 vector (MLI 2.x returns
MLI_STATUS_SHAPE_MISMATCH otherwise), which the model's tensor is a view of. Checked on the real
MLI 2.0.2 library in the four builds."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.mli.lower.driver import lower
from mlitool.pipeline import read
from tests.support import runtime_harness as H
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options


def fc_keep_dims_model(path):
    """[1, 1, 12] -FC(keep_num_dims, RELU)-> [1, 1, 7] -FC(keep_num_dims)-> [1, 1, 5]."""
    rng = np.random.default_rng(4)
    tensors = [
        T([1, 1, 12], scale=0.05, zero_point=3, name="x"),
        T([7, 12], scale=0.01, data=rng.integers(-127, 128, (7, 12)).astype(np.int8)),
        T([7], dtype="int32", scale=0.0005, data=rng.integers(-900, 900, 7).astype(np.int32)),
        T([1, 1, 7], scale=0.04, zero_point=-128, name="hidden"),
        T([5, 7], scale=0.02, data=rng.integers(-127, 128, (5, 7)).astype(np.int8)),
        T([5], dtype="int32", scale=0.0008, data=rng.integers(-900, 900, 5).astype(np.int32)),
        T([1, 1, 5], scale=0.06, zero_point=-4, name="y"),
    ]
    ops = [
        (
            "FULLY_CONNECTED",
            [0, 1, 2],
            [3],
            options("FullyConnectedOptions", fusedActivationFunction=1, keepNumDims=True),
        ),
        ("FULLY_CONNECTED", [3, 4, 5], [6], options("FullyConnectedOptions", keepNumDims=True)),
    ]
    path.write_bytes(graph_model(tensors, ops, [0], [6]))
    return path


def test_kernel_output_is_a_vector(tmp_path):
    model = lower(read(fc_keep_dims_model(tmp_path / "fc.tflite")).main, format="sa8")
    kernels = [la for la in model.layers if la.kind == "fully_connected"]
    assert [model.tensor(la.outputs[0]).shape for la in kernels] == [(7,), (5,)]
    views = [la for la in model.layers if la.kind == "view"]
    assert [model.tensor(la.outputs[0]).shape for la in views] == [(1, 7), (1, 5)]


@pytest.mark.parametrize("fmt", ["sa8", "fx16", "fx8w16d"])
def test_keep_dims_fc_on_the_real_library(fmt, mli_builds, tmp_path):
    H.assert_bit_exact(
        H.run_case(
            fc_keep_dims_model(tmp_path / "fc.tflite"),
            fmt,
            tmp_path / "out",
            mli_builds,
            mli_cflags("2.0"),
        )
    )
