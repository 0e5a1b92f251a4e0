"""QDQ files (issue 34): a float graph with a QUANTIZE -> DEQUANTIZE pair on every activation and
weight (PT2E converted without a quantization config) converts as the int8 model it means, with
no calibration: every SA8 tensor carries exactly its pair's scale and zero point, the weights
are the pair's int8 values per channel (their axis carried through litert-torch's OIHW -> OHWI
TRANSPOSE), and the MLI model equals the one of the same model written int8. tflite mode runs
the file as LiteRT does (float with fake quantization); mli mode stays within 1 LSB of it, and
the emitted C equals mli mode on the real MLI 2.0.2 library in the four builds.
Before: "float activations need value ranges to be quantized"."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute.mli import bridge as B
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import ModelOptions, load, read, settle
from tests.support import runtime_harness as H
from tests.support.paths import mli_cflags
from tests.support.tflite_build import T, graph_model, options

X_Q = (0.02, 3)  # the input's pair
Y_Q = (0.05, -10)  # the convolution output's pair
W_SCALES = [0.011, 0.007, 0.013, 0.009]  # per output channel
RNG = np.random.default_rng(34)
W_INT = RNG.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)  # O, I, H, W as PyTorch has them
W_FLOAT = (W_INT * np.float32(W_SCALES).reshape(4, 1, 1, 1)).astype(np.float32)
W_FLOAT += RNG.uniform(-0.4, 0.4, W_FLOAT.shape).astype(np.float32) * np.float32(0.007)
BIAS = np.array([0.1, -0.2, 0.05, 0.3], np.float32)
CONV = options("Conv2DOptions", padding=0, strideW=1, strideH=1)  # SAME


def _w_int() -> np.ndarray:
    """The int8 weights the pair means (TFLite rounds half away from zero), OHWI."""
    v = W_FLOAT.astype(np.float64) / np.float32(W_SCALES).astype(np.float64).reshape(4, 1, 1, 1)
    q = np.clip(np.sign(v) * np.floor(np.abs(v) + 0.5), -127, 127).astype(np.int8)
    return q.transpose(0, 2, 3, 1)


def qdq_model(path):
    """x -> Q -> DQ -> CONV_2D(w: OIHW const -> Q per channel -> DQ -> TRANSPOSE to OHWI, float
    bias) -> Q -> DQ -> y."""
    tensors = [
        T([1, 6, 6, 3], dtype="float32", name="x"),  # 0
        T([1, 6, 6, 3], scale=[X_Q[0]], zero_point=[X_Q[1]], name="x_q"),  # 1
        T([1, 6, 6, 3], dtype="float32", name="x_dq"),  # 2
        T([4, 3, 3, 3], dtype="float32", name="w_oihw", data=W_FLOAT),  # 3
        T([4, 3, 3, 3], scale=W_SCALES, zero_point=[0] * 4, axis=0, name="w_q"),  # 4
        T([4, 3, 3, 3], dtype="float32", name="w_dq"),  # 5
        T([4], dtype="int32", name="perm", data=np.array([0, 2, 3, 1], np.int32)),  # 6
        T([4, 3, 3, 3], dtype="float32", name="w"),  # 7
        T([4], dtype="float32", name="bias", data=BIAS),  # 8
        T([1, 6, 6, 4], dtype="float32", name="y"),  # 9
        T([1, 6, 6, 4], scale=[Y_Q[0]], zero_point=[Y_Q[1]], name="y_q"),  # 10
        T([1, 6, 6, 4], dtype="float32", name="y_dq"),  # 11
    ]
    ops = [
        ("QUANTIZE", [3], [4], None),
        ("DEQUANTIZE", [4], [5], None),
        ("QUANTIZE", [0], [1], None),
        ("DEQUANTIZE", [1], [2], None),
        ("TRANSPOSE", [5, 6], [7], None),
        ("CONV_2D", [2, 7, 8], [9], CONV),
        ("QUANTIZE", [9], [10], None),
        ("DEQUANTIZE", [10], [11], None),
    ]
    path.write_bytes(graph_model(tensors, ops, [0], [11]))
    return path


def int8_twin(path):
    """The same model written int8: what the QDQ file means (bias int32 at x scale * w scale)."""
    w_scales = np.float32(W_SCALES)
    b_scales = (np.float32(X_Q[0]) * w_scales).astype(np.float32)
    bias = np.round(BIAS.astype(np.float64) / b_scales.astype(np.float64)).astype(np.int32)
    tensors = [
        T([1, 6, 6, 3], scale=[X_Q[0]], zero_point=[X_Q[1]], name="x"),
        T([4, 3, 3, 3], scale=W_SCALES, zero_point=[0] * 4, axis=0, name="w", data=_w_int()),
        T([4], dtype="int32", scale=list(b_scales), zero_point=[0] * 4, name="bias", data=bias),
        T([1, 6, 6, 4], scale=[Y_Q[0]], zero_point=[Y_Q[1]], name="y"),
    ]
    path.write_bytes(graph_model(tensors, [("CONV_2D", [0, 1, 2], [3], CONV)], [0], [3]))
    return path


def _conv_layer(mli):
    (layer,) = [la for la in mli.layers if la.kind == "conv2d"]
    return [mli.tensor(n) for n in (*layer.inputs, layer.weights, layer.bias, *layer.outputs)]


def _sa(t):
    return (t.el_type, list(t.scale), list(t.scale_frac_bits), list(t.zero_point), t.dim)


def test_converts_without_calibration_with_the_pairs_parameters(tmp_path):
    s = settle(ModelOptions(format="sa8"))
    g, mli = load(qdq_model(tmp_path / "qdq.tflite"), s)  # before: "need value ranges"
    _, twin = load(int8_twin(tmp_path / "int8.tflite"), s)
    x, w, b, y = _conv_layer(mli)
    tx, tw, tb, ty = _conv_layer(twin)
    for ours, theirs in ((x, tx), (w, tw), (b, tb), (y, ty)):
        assert _sa(ours) == _sa(theirs), ours.name
    assert np.array_equal(w.data, tw.data) and np.array_equal(b.data, tb.data)
    assert np.array_equal(w.data, _w_int().transpose(1, 2, 3, 0))  # MLI's HWCN
    assert list(x.zero_point) == [X_Q[1]] and list(y.zero_point) == [Y_Q[1]]
    assert x.real_scale()[0] == pytest.approx(X_Q[0], rel=2**-14)
    # the pairs are no layers of their own: one conv, and a copy into the float output's tensor
    assert [la.kind for la in mli.layers] == ["conv2d", "convert"]
    (out,) = [mli.tensor(n) for n in mli.outputs]
    assert _sa(out) == _sa(ty)


def test_fx16_takes_the_pairs_ranges(tmp_path):
    g, mli = load(qdq_model(tmp_path / "qdq.tflite"), settle(ModelOptions(format="fx16")))
    x, _, _, y = _conv_layer(mli)
    # x's pair holds [0.02 * (-131), 0.02 * 124]: |2.62| < 4 -> 15 - 2 = 13 frac bits
    assert x.frac_bits == 13
    # y's: [0.05 * (-118), 0.05 * 137]: 6.85 < 8 -> 12 frac bits
    assert y.frac_bits == 12


def test_mli_mode_within_one_lsb_of_tflite_mode(tmp_path):
    path = qdq_model(tmp_path / "qdq.tflite")
    g = read(path).main
    _, mli = load(path, settle(ModelOptions(format="sa8")))
    x = np.random.default_rng(3).uniform(-2.5, 2.5, (8, 1, 6, 6, 3)).astype(np.float32)
    tf = run_graph(g, {0: x}, "tflite", keep=True)
    got, _ = B.run_mli(g, mli, {0: x}, Arith("up", False))
    y_q = tf[10].astype(np.int64)  # the int8 tensor of the output's pair in tflite mode
    ours = np.round(got[11].astype(np.float64) / Y_Q[0]).astype(np.int64) + Y_Q[1]
    assert np.abs(ours - y_q).max() <= 1
    assert np.mean(ours == y_q) > 0.9


def test_litert_runs_the_file_as_tflite_mode(tmp_path):
    pytest.importorskip("ai_edge_litert.interpreter", reason="needs ai-edge-litert")
    from mlitool.oracle import run_litert

    path = qdq_model(tmp_path / "qdq.tflite")
    g = read(path).main
    x = np.random.default_rng(4).uniform(-2.5, 2.5, (4, 1, 6, 6, 3)).astype(np.float32)
    want = run_litert(path, g, {0: x}, [10])[10]
    got = run_graph(g, {0: x}, "tflite", keep=True)[10]
    assert np.array_equal(got.reshape(want.shape), want)


def test_the_c_equals_mli_mode(mli_builds, tmp_path):
    results = H.run_case(
        qdq_model(tmp_path / "qdq.tflite"),
        "sa8",
        tmp_path / "out",
        mli_builds,
        mli_cflags("2.0"),
        samples=4,
    )
    H.assert_bit_exact(results)


def test_verify_gives_lsb_figures_in_the_pairs_units(tmp_path):
    from mlitool.verify.command import VerifyOptions, verify

    path = qdq_model(tmp_path / "qdq.tflite")
    doc = verify(path, ModelOptions(format="sa8"), VerifyOptions(samples=8))
    (out,) = doc["outputs"]
    assert out["vs_tflite"]["max_lsb"] <= 1  # before: no LSB figure (a float output)
    conv = [la for la in doc["layers"] if la["type"] == "CONV_2D"]
    assert conv and conv[0]["chained"]["max_lsb"] <= 1 and conv[0]["isolated"]["max_lsb"] <= 1
