"""TRANSPOSE_CONV in the three execution modes: `tflite` mode equals LiteRT's reference kernels
exactly (int8 per-channel, 16x8 and float32, bit for bit), `float` mode equals LiteRT's float kernel within float32
rounding, and `mli` mode (mli_krn_transpose_conv2d_hwcn_*) stays within the figures verify
reports against `tflite` mode."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mlitool.execute import windows as win
from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import read
from tests.support.tconv_models import INT8_CASES, WIDE_CASES, decoder_model, tconv_model

CASES = {
    **{f"int8_{k}": v for k, v in INT8_CASES.items()},
    **{f"16x8_{k}": v for k, v in WIDE_CASES.items()},
}


def _litert(path, g, x):
    pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    from mlitool.oracle import run_litert

    return run_litert(path, g, {g.inputs[0]: x}, [g.outputs[0]])[g.outputs[0]]


def _full_range(g, n=12, seed=5):
    t = g.tensors[g.inputs[0]]
    info = np.iinfo(np.dtype(t.dtype))
    shape = (n,) + tuple(t.shape)
    return np.random.default_rng(seed).integers(info.min, info.max + 1, shape).astype(t.dtype)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tflite_mode_is_litert(name, tmp_path):
    path = tconv_model(tmp_path / f"{name}.tflite", **CASES[name])
    g = read(path).main
    x = _full_range(g)
    ours = run_graph(g, {g.inputs[0]: x}, "tflite")[g.outputs[0]]
    ref = _litert(path, g, x)
    assert ours.dtype == ref.dtype
    np.testing.assert_array_equal(ours, ref)
    info = np.iinfo(ours.dtype)
    assert len(np.unique(ours)) > 25  # real values, not a saturated constant
    assert np.mean((ours == info.min) | (ours == info.max)) < 0.05


@pytest.mark.parametrize(
    "padding,out_hw,act",
    [("SAME", (10, 12), "NONE"), ("SAME", (9, 11), "RELU"), ("VALID", (11, 13), "RELU6")],
)
def test_float_mode_is_litert_float(padding, out_hw, act, tmp_path):
    path = tconv_model(tmp_path / "f.tflite", kind="float", padding=padding, out_hw=out_hw, act=act)
    g = read(path).main
    x = np.random.default_rng(2).normal(0, 1, (8,) + tuple(g.tensors[g.inputs[0]].shape))
    x = x.astype(np.float32)
    ours = run_graph(g, {g.inputs[0]: x}, "float")[g.outputs[0]]
    ref = _litert(path, g, x)
    assert np.abs(ref).max() > 1
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-5)
    # tflite mode: reference_ops::TransposeConv's scatter order, bit for bit
    tfl = run_graph(g, {g.inputs[0]: x}, "tflite")[g.outputs[0]]
    np.testing.assert_array_equal(tfl, ref)
    # the order shows: the taps in ascending order (a gather's) round otherwise
    w, b = (g.tensors[g.ops[0].inputs[i]].data for i in (1, 3))
    ascending = win.transpose_conv_sum(
        x.reshape(-1, *x.shape[2:]), w, g.ops[0].options, *ref.shape[-3:-1]
    )
    inside = ref.reshape(ascending.shape)
    unclamped = (inside > 0) & (inside < 6)  # where no fused activation clamps
    assert (ascending + b != inside)[unclamped].any()


def test_float_mode_of_the_int8_model_is_its_real_arithmetic(tmp_path):
    """Float mode on the quantized model (dequantized weights, no requantization) is within half
    an output step (and float32 rounding) of LiteRT's integer result."""
    path = tconv_model(tmp_path / "q.tflite")
    g = read(path).main
    x = np.random.default_rng(4).integers(-60, 60, (8,) + tuple(g.tensors[g.inputs[0]].shape))
    x = x.astype(np.int8)
    real = run_graph(g, {g.inputs[0]: x}, "float")[g.outputs[0]]
    q = g.tensors[g.outputs[0]].quant
    ref = (_litert(path, g, x).astype(np.float64) - q.zero_point[0]) * q.scale[0]
    assert np.abs(real - ref).max() <= 0.51 * q.scale[0]


def test_decoder_block_tflite_mode_is_litert_at_every_layer(tmp_path):
    pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    from mlitool.oracle import run_litert

    path = decoder_model(tmp_path / "decoder.tflite")
    g = read(path).main
    x = _full_range(g)
    ours = run_graph(g, {g.inputs[0]: x}, "tflite", keep=True)
    wanted = [op.outputs[0] for op in g.ops]
    ref = run_litert(path, g, {g.inputs[0]: x}, wanted)
    for i in wanted:
        np.testing.assert_array_equal(ours[i], ref[i])


def _verify(path, fmt, capsys):
    from mlitool.cli.entry import main

    with pytest.raises(SystemExit) as exc:
        main(["verify", str(path), "-f", fmt, "-n", "32", "--json"])
    assert exc.value.code == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", ["same_s2", "valid_s2_relu", "same_k4_s2"])
def test_verify_sa8_within_one_lsb_of_tflite(name, tmp_path, capsys):
    doc = _verify(tconv_model(tmp_path / f"{name}.tflite", **INT8_CASES[name]), "sa8", capsys)
    out = doc["outputs"][0]
    # measured (32 random samples, VPX build): at most 1 LSB, under 1 % of the elements differ
    assert out["vs_tflite"]["max_lsb"] <= 1
    assert out["vs_tflite"]["differing_share"] < 0.02
    assert out["vs_float"]["snr_db"] > 30


def test_verify_16x8_fx16_costs_a_few_int16_lsb(tmp_path, capsys):
    doc = _verify(tconv_model(tmp_path / "w.tflite", **WIDE_CASES["same_s2"]), "fx16", capsys)
    out = doc["outputs"][0]
    assert doc["references"]["tflite"] is True
    assert 0 < out["vs_tflite"]["max_lsb"] <= 4  # measured: 2 (frac-bit rounding)
    assert out["vs_float"]["snr_db"] > 60
