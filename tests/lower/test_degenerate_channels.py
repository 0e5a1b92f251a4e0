"""Channels trained to zero (per-channel scales near 1e-34) convert to sa8: their scale is
clamped to a representable one, their weights requantize to 0, the manifest says so, and the
MLI arithmetic stays as close to float as the other channels."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mlitool.execute.mli.bridge import run_mli
from mlitool.execute.mli.presets import arith_for
from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import ModelOptions, load, settle
from tests.support.cli import run_main
from tests.support.tflite_build import T, graph_model, options


def _conv(tmp_path, *, int8: bool):
    rng = np.random.default_rng(4)
    w = rng.normal(0, 0.3, (3, 3, 3, 2)).astype(np.float32)
    w[1] *= 1e-33  # output channel 1: trained to zero
    bias = np.float32([0.05, 0.02, -0.03])
    if int8:
        scales = np.abs(w).reshape(3, -1).max(axis=1) / 127
        tensors = [
            T([1, 6, 6, 2], name="x", scale=[1 / 64], zero_point=[0]),
            T(
                [3, 3, 3, 2],
                data=np.round(w / scales[:, None, None, None]).astype(np.int8),
                name="w",
                scale=scales.tolist(),
                zero_point=[0, 0, 0],
            ),
            T(
                [3],
                dtype="int32",
                data=np.clip(
                    np.round(bias / (scales.astype(np.float64) / 64)), -(2**31), 2**31 - 1
                ).astype(np.int32),
                name="b",
                scale=(scales / 64).tolist(),
                zero_point=[0, 0, 0],
            ),
            T([1, 4, 4, 3], name="y", scale=[1 / 32], zero_point=[0]),
        ]
    else:
        tensors = [
            T([1, 6, 6, 2], dtype="float32", name="x"),
            T([3, 3, 3, 2], dtype="float32", data=w, name="w"),
            T([3], dtype="float32", data=bias, name="b"),
            T([1, 4, 4, 3], dtype="float32", name="y"),
        ]
    path = tmp_path / f"conv_{'int8' if int8 else 'float'}.tflite"
    path.write_bytes(
        graph_model(
            tensors,
            [
                (
                    "CONV_2D",
                    [0, 1, 2],
                    [3],
                    options("Conv2DOptions", padding=1, strideW=1, strideH=1),
                )
            ],
            [0],
            [3],
        )
    )
    return path


@pytest.mark.parametrize("int8", [False, True], ids=["float", "int8"])
def test_channel_trained_to_zero_converts_to_sa8(int8, tmp_path, capsys):
    path = _conv(tmp_path, int8=int8)
    x = np.random.default_rng(5).uniform(-1, 1, (8, 1, 6, 6, 2)).astype(np.float32)
    if int8:
        x = np.clip(np.round(x * 64), -128, 127).astype(np.int8)
    np.save(tmp_path / "x.npy", x)
    calib = [] if int8 else ["--calibration", tmp_path / "x.npy"]
    code, out, err = run_main(["convert", path, "-o", tmp_path / "o", *calib, "--json"], capsys)
    assert code == 0, err
    assert "1 channel(s) (1) have scales below MLI 2.x's range" in err
    manifest = json.loads((tmp_path / "o" / f"{path.stem}.json").read_text())
    weights = next(t for t in manifest["tensors"] if t["role"] == "weights")
    assert any("channel(s) (1)" in n for n in weights["notes"])
    opts = ModelOptions(calibration=None if int8 else tmp_path / "x.npy")
    graph, mli = load(path, settle(opts))
    w = next(t for t in mli.tensors.values() if t.role.value == "weights")
    assert not w.data[..., 1].any() and w.data[..., 0].any()  # HWCN: channel 1 all zero
    assert int(w.scale_frac_bits.max()) <= 127
    # MLI arithmetic against float, per output channel: the zero channel is as good as the rest.
    real = run_graph(graph, {graph.inputs[0]: x}, "float")[graph.outputs[0]]
    values, _ = run_mli(graph, mli, {graph.inputs[0]: x}, arith_for("vpx"))
    got = np.asarray(values[graph.outputs[0]], np.float64)
    if int8:
        got = got / 32
    err_per_channel = np.abs(got - real).reshape(-1, 3).max(axis=0)
    assert err_per_channel[1] <= 1 / 32 + 1e-6 and err_per_channel.max() < 0.1
