"""LAYER_RUNNERS of the MAC, pooling and RNN kernels: an MliLayer over MliModel tensors runs the
same arithmetic as the kernel (checked against the golden outputs)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from mlitool.execute.mli.kernels import mac, pool, rnn
from mlitool.mli.types import MliLayer, MliModel, Role
from tests.support.golden import arith_of, load
from tests.support.paths import shared_path

MODE = "UP_ACCU_OFF"


def _model(case, layer_kwargs):
    """MliModel whose tensors are the case's, named by role; activations lose their data."""
    tensors = {}
    for role, t in case.tensors.items():
        constant = role.startswith("weights") or role == "bias"
        tensors[role] = dataclasses.replace(
            t,
            name=role,
            role=Role.WEIGHTS if constant else Role.ACTIVATION,
            data=t.data if constant else None,
        )
    layer = MliLayer(index=0, op_type="TEST", **layer_kwargs)
    return MliModel(
        source="test",
        mli_version="2.0",
        format="",
        layout="hwc",
        tensors=tensors,
        layers=[layer],
        inputs=[],
        outputs=[],
    ), layer


def _case(kernel, index=0):
    return load(shared_path("golden"), MODE, kernel)[1][index]


@pytest.mark.parametrize(
    "kind,kernel",
    [
        ("conv2d", "conv2d_hwcn_sa8_sa8_sa32"),
        ("depthwise_conv2d", "depthwise_conv2d_hwcn_fx16"),
        ("group_conv2d", "group_conv2d_hwcn_fx16_fx8_fx8"),
        ("transpose_conv2d", "transpose_conv2d_hwcn_sa8_sa8_sa32"),
        ("fully_connected", "fully_connected_sa8_sa8_sa32"),
        ("fully_connected", "fully_connected_sa8_sa8_sa32_ext_bias"),
    ],
)
def test_mac_runner(kind, kernel):
    case = _case(kernel, 3)
    model, layer = _model(
        case,
        dict(
            kind=kind,
            kernel=f"mli_krn_{kernel}",
            inputs=["in"],
            outputs=["out"],
            weights="weights",
            bias="bias",
            cfg=case.cfg,
        ),
    )
    got = mac.LAYER_RUNNERS[kind](layer, model, [case.tensors["in"].data[None]], arith_of(MODE))
    np.testing.assert_array_equal(got[0], case.expected["out"])


@pytest.mark.parametrize("kind", ["avepool", "maxpool"])
def test_pool_runner(kind):
    case = _case(f"{kind}_hwc_sa8", 5)
    model, layer = _model(
        case,
        dict(
            kind=kind,
            kernel=f"mli_krn_{kind}_hwc_sa8",
            inputs=["in"],
            outputs=["out"],
            cfg=case.cfg,
        ),
    )
    got = pool.LAYER_RUNNERS[kind](layer, model, [case.tensors["in"].data[None]], arith_of(MODE))
    np.testing.assert_array_equal(got[0], case.expected["out"])


def test_rnn_dense_runner():
    case = next(
        c
        for c in load(shared_path("golden"), MODE, "rnn_dense_fx16")[1]
        if c.cfg["inputs_num"] == 3
    )
    params = {f"weights{i}": f"weights{i}" for i in range(3)}
    model, layer = _model(
        case,
        dict(
            kind="rnn_dense",
            kernel="mli_krn_rnn_dense_fx16",
            inputs=["in0", "in1", "in2"],
            outputs=["out"],
            bias="bias",
            params=params,
            cfg=case.cfg,
        ),
    )
    xs = [case.tensors[f"in{i}"].data[None] for i in range(3)]
    got = mac.LAYER_RUNNERS["rnn_dense"](layer, model, xs, arith_of(MODE))
    np.testing.assert_array_equal(got[0], case.expected["out"])


@pytest.mark.parametrize("kind", ["lstm_cell", "gru_cell"])
def test_rnn_cell_runner(kind):
    case = _case(f"{kind}_sa8_sa8_sa32", 1)
    inputs = ["in", "prev_out"] + (["cell"] if kind == "lstm_cell" else [])
    model, layer = _model(
        case,
        dict(
            kind=kind,
            kernel=f"mli_krn_{kind}_sa8_sa8_sa32",
            inputs=inputs,
            outputs=["out"],
            bias="bias",
            cfg=case.cfg,
            params={"weights_in": "weights_in", "weights_out": "weights_out"},
        ),
    )
    got = rnn.LAYER_RUNNERS[kind](
        layer, model, [case.tensors[r].data[None] for r in inputs], arith_of(MODE)
    )
    np.testing.assert_array_equal(got[0], case.expected["out"])
