"""mli mode on the shared int8 models: runs in every build, layer by layer within MLI's documented
distance of TFLite's reference arithmetic (tflite mode, itself equal to the interpreter), the real
inputs give the documented classes, and the FX formats track the float reference."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.mli import bridge as B
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.execute.reference.graph import run_graph
from mlitool.execute.reference.inputs import random_inputs
from mlitool.mli.lower.driver import lower
from mlitool.tflite.reader import read_model
from mlitool.verify.metrics import snr_db
from tests.support.paths import shared_path
from tests.support.real_inputs import assert_resnet8_classes, cifar10_test20_int8

MODELS = {
    "kws": "mlperf_tiny/kws_ref_model_int8.tflite",
    "vww_96": "mlperf_tiny/vww_96_int8.tflite",
    "resnet8": "mlperf_tiny/resnet8_int8.tflite",
    "ad01": "mlperf_tiny/ad01_int8.tflite",
    "hello_world": "tflm/hello_world_int8.tflite",
    "micro_speech": "tflm/micro_speech_int8.tflite",
    "mobilenet_v1": "embarc_mli/mobilenet_v1_int8.tflite",
}
BUILDS = [Arith(r, a) for r in ("up", "convergent") for a in (True, False)]
MAC_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")
# Isolated (same input as tflite mode), FULL_ACCU ON, measured on 16 random inputs per model:
# MAC layers, average pooling and the element-wise add differ by at most 1 LSB (section 5 /
# the int16-scale requantization of section 8); MLI's LUT softmax by at most 1 LSB on these
# models (kws: 0, micro_speech and mobilenet_v1: 1); views are exact.
ISOLATED_BOUND = {
    "CONV_2D": 1,
    "DEPTHWISE_CONV_2D": 1,
    "FULLY_CONNECTED": 1,
    "AVERAGE_POOL_2D": 1,
    "ADD": 1,
    "SOFTMAX": 1,
    "RESHAPE": 0,
}


@pytest.fixture(scope="module", params=sorted(MODELS))
def case(request):
    path = shared_path("models", MODELS[request.param])
    graph = read_model(path).main
    return request.param, graph, lower(graph, format="sa8", source=str(path))


def test_runs_in_every_build(case):
    name, graph, mli = case
    x = random_inputs(graph, 4, seed=1)
    ref = run_graph(graph, x, "tflite")
    for arith in BUILDS:
        out, raw = B.run_mli(graph, mli, x, arith)
        for i in graph.outputs:
            t = graph.tensors[i]
            assert out[i].dtype == np.dtype(t.dtype)
            assert out[i].shape == ref[i].shape
        assert set(raw) == set(mli.outputs)


def test_isolated_layers_within_documented_lsb(case):
    """Each op's MLI layers fed tflite mode's own input: at most 1 LSB from TFLite (FULL_ACCU ON)."""
    name, graph, mli = case
    x = random_inputs(graph, 16, seed=2)
    ref = run_graph(graph, x, "tflite", keep=True)
    groups, primary = B.layers_by_op(mli), B.primary_tensors(graph, mli)
    for arith in (Arith("up", True), Arith("convergent", True)):
        for op in graph.ops:
            got = B.run_op(graph, mli, op.index, ref, arith, groups, primary)
            for i, q in got.items():
                v = B.to_model(graph.tensors[i], mli.tensor(primary[i]), q)
                diff = int(np.abs(v.astype(np.int64) - ref[i].astype(np.int64)).max())
                assert diff <= ISOLATED_BOUND[op.type], (name, op.label, arith.name, diff)


def test_reduced_accumulator_costs_up_to_31_lsb_on_vww():
    """Issue 6 item 3 / mli-arithmetic 8b: FULL_ACCU OFF costs up to 31 LSB on vww layer 22."""
    path = shared_path("models", MODELS["vww_96"])
    graph = read_model(path).main
    mli = lower(graph, format="sa8")
    x = random_inputs(graph, 8, seed=3)
    ref = run_graph(graph, x, "tflite", keep=True)
    groups, primary = B.layers_by_op(mli), B.primary_tensors(graph, mli)
    i = graph.ops[22].outputs[0]
    t, m = graph.tensors[i], mli.tensor(primary[i])
    assert graph.ops[22].type == "CONV_2D"
    worst = {}
    for full in (True, False):
        got = B.run_op(graph, mli, 22, ref, Arith("up", full), groups, primary)[i]
        worst[full] = int(np.abs(B.to_model(t, m, got).astype(int) - ref[i]).max())
    assert worst[True] <= 1
    assert 20 <= worst[False] <= 31, worst


@pytest.mark.parametrize("arith", BUILDS, ids=lambda a: a.name)
def test_kws_real_input_is_class_5(arith):
    graph = read_model(shared_path("models", MODELS["kws"])).main
    mli = lower(graph, format="sa8")
    x = np.load(shared_path("models", "inputs", "kws_mfcc_int8.npy"))
    out, _ = B.run_mli(graph, mli, {0: x}, arith)
    y = out[graph.outputs[0]].reshape(-1)
    assert int(np.argmax(y)) == 5
    assert y.tolist() == [-128] * 5 + [127] + [-128] * 6  # identical to the interpreter


@pytest.mark.parametrize("arith", BUILDS, ids=lambda a: a.name)
def test_resnet8_real_images_get_the_interpreters_classes(arith):
    graph = read_model(shared_path("models", MODELS["resnet8"])).main
    mli = lower(graph, format="sa8")
    x = cifar10_test20_int8().reshape(20, 1, 32, 32, 3)
    out, _ = B.run_mli(graph, mli, {0: x}, arith)
    y = out[graph.outputs[0]].reshape(20, -1).astype(int)
    assert_resnet8_classes(y)
    # Unambiguous in MLI's result: the top class leads the next by 118 LSB or more (measured:
    # 140, 140, 118, 141 in UP/CONVERGENT x FULL_ACCU ON/OFF).
    top2 = np.sort(y, axis=1)[:, -2:]
    assert (top2[:, 1] - top2[:, 0]).min() >= 100


# FX formats vs the float reference (float mode on the dequantized int8 model), SNR in dB at the
# output on 16 random inputs (seed 5), ROUND_MODE CONVERGENT. Measured (fx16 / fx8w16d / int8
# tflite mode): vww 35.1/33.9/30.7, resnet8 38.8/17.7/22.9, ad01 30.6/23.8/24.2, hello_world
# 73.2/30.0/35.1, micro_speech 68.9/25.5/30.0, mobilenet_v1 36.0/-5.9/21.1. Asserted with ~3 dB
# margin. fx16 must beat the int8 model itself. mobilenet_v1's depthwise weights need per-channel
# scales: fx8 weights share one power-of-two scale per tensor, so fx8w16d cannot hold it (only
# checked to run). kws is left out: random MFCCs drive its logits far out of range (the int8
# model itself is at -1.3 dB there); its real input is checked below.
FX_SNR = {
    "vww_96": (32, 30),
    "resnet8": (35, 14),
    "ad01": (27, 20),
    "hello_world": (69, 26),
    "micro_speech": (65, 22),
    "mobilenet_v1": (33, None),
}


@pytest.mark.parametrize("name", sorted(FX_SNR))
def test_fx_formats_track_float(name):
    graph = read_model(shared_path("models", MODELS[name])).main
    x = random_inputs(graph, 16, seed=5)
    fl = run_graph(graph, x, "float")
    tf = run_graph(graph, x, "tflite")
    i = graph.outputs[0]
    int8_snr = snr_db(fl[i], graph.tensors[i].quant.dequantize(tf[i]))
    for fmt, bound in zip(("fx16", "fx8w16d"), FX_SNR[name]):
        mli = lower(graph, format=fmt)
        _, raw = B.run_mli(graph, mli, x, Arith("convergent", True))
        m = mli.tensor(B.primary_tensors(graph, mli)[i])
        real = B.decode(m, raw[m.name]).reshape(fl[i].shape)
        assert np.isfinite(real).all()
        if bound is not None:
            assert snr_db(fl[i], real) >= bound, (fmt, snr_db(fl[i], real))
        if fmt == "fx16":
            assert snr_db(fl[i], real) > int8_snr + 3


def test_kws_fx16_real_input_is_class_5():
    graph = read_model(shared_path("models", MODELS["kws"])).main
    x = np.load(shared_path("models", "inputs", "kws_mfcc_int8.npy"))
    for fmt in ("fx16", "fx8w16d"):
        out, _ = B.run_mli(graph, lower(graph, format=fmt), {0: x}, Arith("convergent", True))
        assert int(np.argmax(out[graph.outputs[0]])) == 5
