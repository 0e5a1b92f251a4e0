"""mli mode on constructed models and layers: every layer kind lowering produces (view, concat with
inserted converts, padding, constant operands, multi-input), input/output conversion, the MLI 1.x
refusal, and the pooling-hazard rewrite (issue 6 item 1) proven with the executor."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.execute.mli import bridge as B
from mlitool.execute.mli.kernels import pool
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.execute.mli.walker import run_model
from mlitool.execute.reference.graph import run_graph
from mlitool.execute.reference.inputs import random_inputs
from mlitool.geometry import pool_hazard, safe_pool_axis, tflite_padding
from mlitool.mli.lower.driver import lower
from mlitool.mli.types import ElType, MliTensor, Role
from mlitool.tflite.reader import read_model
from mlitool.verify.metrics import snr_db
from tests.support.paths import SAMPLES
from tests.support.tflite_build import T, options, single_op_model

ARITH = Arith("convergent", True)
rng = np.random.default_rng(7)


def act(shape, scale=0.05, zp=-3):
    return T(tuple(shape), "int8", scale, zp)


def _model(tmp_path, name, op, ins, outs, opts=None):
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(single_op_model(op, ins, outs, opts))
    return read_model(str(path)).main


def _mli_vs_tflite(graph, mli, n=16, seed=3):
    x = random_inputs(graph, n, seed)
    ref = run_graph(graph, x, "tflite")
    out, raw = B.run_mli(graph, mli, x, ARITH)
    i = graph.outputs[0]
    return int(np.abs(out[i].astype(np.int64) - ref[i].astype(np.int64)).max()), out, ref, raw


def test_constant_operand_without_batch_axis(tmp_path):
    """ADD of an activation and a full-shape constant: the constant is a PARAM tensor in the
    layer's inputs, passed as its data without the sample axis and broadcast over the batch."""
    const = rng.integers(-128, 128, (1, 3, 4, 5)).astype(np.int8)
    graph = _model(
        tmp_path,
        "add_c",
        "ADD",
        [act((1, 3, 4, 5)), T((1, 3, 4, 5), "int8", 0.02, 4, data=const)],
        [act((1, 3, 4, 5), 0.07, 1)],
        options("AddOptions"),
    )
    mli = lower(graph, format="sa8")
    layer = mli.layers[0]
    assert layer.kind == "eltwise_add"
    assert [mli.tensor(n).role for n in layer.inputs] == [Role.INPUT, Role.PARAM]
    diff, *_ = _mli_vs_tflite(graph, mli)
    assert diff <= 1  # eltwise requantization: 1 LSB


def test_concat_of_three_inputs_with_their_own_params(tmp_path):
    """Multi-input concatenation: lowering converts each input to the output's parameters."""
    graph = _model(
        tmp_path,
        "cat3",
        "CONCATENATION",
        [act((1, 2, 3, 2), 0.05, -3), act((1, 2, 3, 4), 0.02, 7), act((1, 2, 3, 1), 0.1, 0)],
        [act((1, 2, 3, 7), 0.06, 2)],
        options("ConcatenationOptions", axis=3),
    )
    mli = lower(graph, format="sa8")
    # the converts write into the output's buffer (views), or a concat copies them there
    assert [layer.kind for layer in mli.layers][:3] == ["convert"] * 3
    assert mli.layers[-1].kind in ("concat", "view")
    diff, out, ref, _ = _mli_vs_tflite(graph, mli)
    assert diff <= 1  # the converts requantize: 1 LSB


def test_concat_same_params_copies_values(tmp_path):
    graph = _model(
        tmp_path,
        "cat2",
        "CONCATENATION",
        [act((1, 4, 3)), act((1, 4, 5))],
        [act((1, 4, 8))],
        options("ConcatenationOptions", axis=-1),
    )
    mli = lower(graph, format="sa8")
    assert [layer.kind for layer in mli.layers] in (["concat"], ["copy", "copy", "view"])
    x = random_inputs(graph, 5, 1)
    out, _ = B.run_mli(graph, mli, x, ARITH)
    a, b = (x[i] for i in graph.inputs)
    np.testing.assert_array_equal(out[graph.outputs[0]], np.concatenate([a, b], axis=-1))


def test_padding_fills_real_zero(tmp_path):
    pads = np.array([[0, 0], [1, 2], [0, 3], [0, 0]], np.int32)
    graph = _model(
        tmp_path,
        "pad",
        "PAD",
        [act((1, 3, 3, 2), 0.05, 0), T((4, 2), "int32", data=pads)],
        [act((1, 6, 6, 2), 0.05, 0)],
    )
    mli = lower(graph, format="sa8")
    assert [layer.kind for layer in mli.layers] == ["padding"]
    x = random_inputs(graph, 4, 2)
    out, _ = B.run_mli(graph, mli, x, ARITH)
    expected = np.pad(x[graph.inputs[0]], [(0, 0)] + [tuple(p) for p in pads])
    np.testing.assert_array_equal(out[graph.outputs[0]], expected)
    fx = lower(graph, format="fx16")
    out, raw = B.run_mli(graph, fx, x, ARITH)
    np.testing.assert_array_equal(out[graph.outputs[0]], expected)  # FX: same real values back


def test_view_keeps_the_bytes(tmp_path):
    shape = np.array([1, 12, 2], np.int32)
    graph = _model(
        tmp_path,
        "reshape",
        "RESHAPE",
        [act((1, 2, 3, 4)), T((3,), "int32", data=shape)],
        [act((1, 12, 2))],
    )
    mli = lower(graph, format="sa8")
    assert [layer.kind for layer in mli.layers] == ["view"]
    x = random_inputs(graph, 3, 4)
    out, _ = B.run_mli(graph, mli, x, ARITH)
    np.testing.assert_array_equal(out[graph.outputs[0]], x[graph.inputs[0]].reshape(3, 1, 12, 2))


def test_input_conversion(tmp_path):
    graph = _model(tmp_path, "relu", "RELU", [act((1, 10), 0.05, -3)], [act((1, 10), 0.05, -3)])
    t = graph.tensors[graph.inputs[0]]
    q = np.arange(-128, 127, 8, dtype=np.int8)[:30].reshape(3, 1, 10)
    # SA8 with the model's parameters: the same integers.
    sa8 = lower(graph, format="sa8")
    m = sa8.tensor(sa8.inputs[0])
    assert B.same_sa8(t, m)
    np.testing.assert_array_equal(B.model_inputs(graph, sa8, {0: q})[m.name], q.reshape(3, 10))
    # FX16: dequantized, then MLI's float conversion (round half away from zero).
    fx = lower(graph, format="fx16")
    m = fx.tensor(fx.inputs[0])
    real = (q.astype(np.float64) + 3) * np.float32(0.05)
    expected = np.trunc(real * 2.0**m.frac_bits + np.where(real > 0, 0.5, -0.5))
    np.testing.assert_array_equal(
        B.model_inputs(graph, fx, {0: q})[m.name], expected.reshape(3, 10)
    )
    # Real values to the SA8 model: TFLite's quantization, as tflite mode does.
    r = np.linspace(-6, 6, 30, dtype=np.float32).reshape(3, 1, 10)
    expected = np.clip(np.round(r / np.float32(0.05)) - 3, -128, 127)
    np.testing.assert_array_equal(
        B.model_inputs(graph, sa8, {0: r})[sa8.inputs[0]], expected.reshape(3, 10)
    )


def test_float_model_outputs_are_real_values():
    graph = read_model(str(SAMPLES / "cnn_float.tflite")).main
    from mlitool.calibrate import collect_ranges

    data = np.load(SAMPLES / "cnn_calib.npy")
    mli = lower(graph, format="fx16", ranges=collect_ranges(graph, data))
    out, _ = B.run_mli(graph, mli, {0: data[:4]}, ARITH)
    y = out[graph.outputs[0]]
    assert y.dtype == np.float32 and y.shape == (4, 1, 10)
    np.testing.assert_allclose(y.sum(axis=-1), 1.0, atol=2e-3)  # softmax probabilities


def test_mli_1x_is_refused(tmp_path):
    graph = _model(tmp_path, "relu", "RELU", [act((1, 10))], [act((1, 10))])
    mli = lower(graph, format="fx16", mli_version="1.1")
    with pytest.raises(UnsupportedError, match="MLI 1.1 has no reference build"):
        run_model(mli, {mli.inputs[0]: np.zeros((1, 10), np.int16)}, ARITH)


# --- pooling hazard (issue 6 item 1) ----------------------------------------------------------


@pytest.mark.parametrize("name", ["avg_pool_global_same", "max_pool_global_same"])
def test_pool_hazard_samples(name):
    """The global SAME pools are lowered as an equivalent safe window; mli mode matches tflite mode
    (max: exactly; average: MLI's 16-bit reciprocal, 1 LSB) and the float twin."""
    graph = read_model(str(SAMPLES / "ops" / f"{name}.tflite")).main
    mli = lower(graph, format="sa8")
    layer = mli.layers[0]
    c = layer.cfg
    inp = mli.tensor(layer.inputs[0])
    for n, k, pb, pa in (
        (inp.shape[0], c["kernel_height"], c["padding_top"], c["padding_bottom"]),
        (inp.shape[1], c["kernel_width"], c["padding_left"], c["padding_right"]),
    ):
        assert not pool_hazard(n, k, pb, pa)
    op = graph.ops[0]
    in_h = graph.tensors[op.inputs[0]].shape[1]
    assert pool_hazard(
        in_h,
        op.options["filter_h"],
        *tflite_padding("SAME", in_h, op.options["filter_h"], op.options["stride_h"])[1:],
    )
    assert any("would make MLI write outside" in note for note in layer.notes)
    diff, out, ref, _ = _mli_vs_tflite(graph, mli, n=64)
    assert diff <= (0 if name.startswith("max") else 1)
    x = random_inputs(graph, 64, 3)
    fl = run_graph(graph, x, "float")
    i = graph.outputs[0]
    assert snr_db(fl[i], graph.tensors[i].quant.dequantize(out[i])) > 38


def _sa8(shape, scale=8192, frac=15, zp=-5):
    return MliTensor(
        name="t",
        role=Role.ACTIVATION,
        shape=shape,
        el_type=ElType.SA8,
        zero_point=np.array([zp], np.int16),
        scale=np.array([scale], np.int16),
        scale_frac_bits=np.array([frac], np.int8),
    )


def _axis_cases():
    for n, k, s in itertools.product(range(1, 6), range(1, 9), range(1, 4)):
        for padding in ("SAME", "VALID"):
            if padding == "VALID" and k > n:
                continue
            out, pb, pa = tflite_padding(padding, n, k, s)
            yield n, k, s, pb, pa, out


def test_safe_pool_rewrite_is_equivalent_on_every_small_config():
    """Every TFLite pooling geometry up to 5x5 inputs, windows to 8, strides to 3: the rewritten
    (safe) configuration gives exactly the original's result in the executor, and both equal a
    direct numpy max / average over the valid elements."""
    cases = list(_axis_cases())
    hazardous = [c for c in cases if pool_hazard(c[0], c[1], c[3], c[4])]
    assert len(hazardous) > 20
    refused = 0
    for (nh, kh, sh, pt, pbm, oh), (nw, kw, sw, pl, pr, ow) in zip(hazardous, reversed(cases)):
        safe_h = safe_pool_axis(nh, kh, sh, pt, pbm, oh)
        safe_w = safe_pool_axis(nw, kw, sw, pl, pr, ow)
        if safe_h is None or safe_w is None:
            refused += 1
            continue
        assert not pool_hazard(nh, safe_h[0], safe_h[2], safe_h[3])
        assert not pool_hazard(nw, safe_w[0], safe_w[2], safe_w[3])
        inp, out = _sa8((nh, nw, 3)), _sa8((oh, ow, 3))
        x = rng.integers(-128, 128, (4, nh, nw, 3)).astype(np.int8)

        def cfg(h, w):
            return {
                "kernel_height": h[0],
                "stride_height": h[1],
                "padding_top": h[2],
                "padding_bottom": h[3],
                "kernel_width": w[0],
                "stride_width": w[1],
                "padding_left": w[2],
                "padding_right": w[3],
            }

        orig, safe = cfg((kh, sh, pt, pbm), (kw, sw, pl, pr)), cfg(safe_h, safe_w)
        ref_max = np.empty((4, oh, ow, 3), np.int64)
        ref_avg = np.empty((4, oh, ow, 3))
        for i, j in itertools.product(range(oh), range(ow)):
            r0, c0 = i * sh - pt, j * sw - pl
            win = x[:, max(r0, 0) : min(r0 + kh, nh), max(c0, 0) : min(c0 + kw, nw), :].astype(
                np.int64
            )
            ref_max[:, i, j] = win.max(axis=(1, 2))
            ref_avg[:, i, j] = win.mean(axis=(1, 2))
        for arith in (Arith("up", False), Arith("convergent", True)):
            m_safe = pool.maxpool(x, inp, out, safe, arith)
            np.testing.assert_array_equal(m_safe, pool.maxpool(x, inp, out, orig, arith))
            np.testing.assert_array_equal(m_safe, ref_max)
            a_safe = pool.avepool(x, inp, out, safe, arith)
            np.testing.assert_array_equal(a_safe, pool.avepool(x, inp, out, orig, arith))
            assert np.abs(a_safe - ref_avg).max() <= 1.0  # 16-bit reciprocal rounding
    assert refused == 0  # every hazardous geometry here has a safe equivalent


# Every lowerable one-op sample vs tflite mode on 32 random inputs, all four builds (measured).
# Data movement is exact; arithmetic kernels are within 1 LSB; relu6 / relu_n1_to_1 clamp in the
# input's parameters with MLI's truncated limits (section 7), then a convert requantizes: one
# input LSB at the clamp becomes 3 / 5 output LSB of these models' finer output scales.
_EXACT = {
    "concatenation",
    "fully_connected_per_tensor",
    "logistic",
    "max_pool",
    "max_pool_global_same",
    "maximum",
    "maximum_const",
    "minimum",
    "minimum_const",
    "relu",
    "pad",
    "reshape",
    "squeeze",
    "tanh",
    "transpose",
    "slice",
    "split",
    "split_v",
    "strided_slice",
}
_WIDER = {"relu6": 3, "relu_n1_to_1": 5}
# ARG_MAX indices: MLI keeps the last of equal maxima, TFLite the first (golden-checked heap
# order, tests/test_mli_elt_runners.py). Where the maximum is unique the indices must be equal;
# on ties MLI's index must point at a maximum.
_TIES = {"arg_max"}


def _check_ties(graph, x, mli_out, ref_out):
    op = graph.ops[0]
    v = x[graph.inputs[0]]
    axis = int(np.asarray(graph.tensors[op.inputs[1]].data).reshape(-1)[0]) % (v.ndim - 1) + 1
    best = v.max(axis=axis)
    unique = (v == np.expand_dims(best, axis)).sum(axis=axis) == 1
    np.testing.assert_array_equal(mli_out[unique], ref_out[unique])
    picked = np.take_along_axis(v, np.expand_dims(mli_out.astype(np.int64), axis), axis)
    np.testing.assert_array_equal(np.squeeze(picked, axis), best)


def _sample_ops():
    for path in sorted((SAMPLES / "ops").glob("*.tflite")):
        if not path.stem.endswith("_float"):
            yield path.stem


@pytest.mark.parametrize("name", list(_sample_ops()))
def test_sample_op_models_vs_tflite(name):
    graph = read_model(str(SAMPLES / "ops" / f"{name}.tflite")).main
    mli = lower(
        graph, format="sa8"
    )  # every int8 sample op lowers (none is refused): a refusal fails
    x = random_inputs(graph, 32, 0)
    ref = run_graph(graph, x, "tflite")
    bound = 0 if name in _EXACT else _WIDER.get(name, 1)
    for arith in (Arith(r, a) for r in ("up", "convergent") for a in (True, False)):
        out, _ = B.run_mli(graph, mli, x, arith)
        for i in graph.outputs:
            if name in _TIES:
                _check_ties(graph, x, out[i], ref[i])
                continue
            assert int(np.abs(out[i].astype(int) - ref[i].astype(int)).max()) <= bound, arith.name
