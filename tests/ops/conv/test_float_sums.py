"""Float32 CONV_2D and FULLY_CONNECTED in tflite mode (`mlitool/ops/conv/tflite_float.py`): the
same bits as LiteRT's reference kernels (each sum added term by term in their loop order, then
the bias, then the clamp), over strides, SAME padding, dilation, groups and fused activations;
the exact sums rounded once to float32 differ on these models, so the order is what the test
checks. Float mode (order-free sums) stays within float32 rounding."""

from __future__ import annotations

import numpy as np
import pytest

from mlitool.execute import windows as win
from mlitool.execute.reference.graph import run_graph
from mlitool.pipeline import read
from tests.support.litert import reference_outputs
from tests.support.tflite_build import T, graph_model, options

ACT = {"NONE": 0, "RELU": 1, "RELU6": 3}
# name -> (input HWC, filters, kernel, stride, dilation, padding 0 SAME / 1 VALID, groups, act)
CONV = {
    "same_3x3": ((7, 9, 16), 8, 3, 1, 1, 0, 1, "NONE"),
    "stride2_5x5_relu": ((11, 10, 12), 6, 5, 2, 1, 0, 1, "RELU"),
    "dilated_valid": ((12, 12, 8), 5, 3, 1, 2, 1, 1, "NONE"),
    "grouped_relu6": ((6, 6, 12), 8, 3, 1, 1, 0, 4, "RELU6"),
    "pointwise_deep": ((4, 5, 96), 7, 1, 1, 1, 1, 1, "NONE"),
}


def _out(n: int, k: int, s: int, d: int, pad: int) -> int:
    return (n + s - 1) // s if pad == 0 else (n - (k - 1) * d - 1) // s + 1


def _conv_model(tmp_path, name: str):
    (h, w, c), o, k, s, d, pad, groups, act = CONV[name]
    rng = np.random.default_rng(sorted(CONV).index(name))
    wv = rng.uniform(-0.5, 0.5, (o, k, k, c // groups)).astype(np.float32)
    out = [1, _out(h, k, s, d, pad), _out(w, k, s, d, pad), o]
    tensors = [
        T([1, h, w, c], "float32"),
        T(list(wv.shape), "float32", data=wv),
        T([o], "float32", data=rng.uniform(-1, 1, o).astype(np.float32)),
        T(out, "float32"),
    ]
    opts = options(
        "Conv2DOptions",
        padding=pad,
        strideH=s,
        strideW=s,
        dilationHFactor=d,
        dilationWFactor=d,
        fusedActivationFunction=ACT[act],
    )
    path = tmp_path / f"conv_{name}.tflite"
    path.write_bytes(
        graph_model(tensors, [("CONV_2D", [0, 1, 2], [3], opts)], [0], [3], {"CONV_2D": 6})
    )
    return path


def _fc_model(tmp_path, rows: int, depth: int, units: int, act: str):
    rng = np.random.default_rng(depth)
    wv = rng.uniform(-0.5, 0.5, (units, depth)).astype(np.float32)
    tensors = [
        T([rows, depth], "float32"),
        T([units, depth], "float32", data=wv),
        T([units], "float32", data=rng.uniform(-1, 1, units).astype(np.float32)),
        T([rows, units], "float32"),
    ]
    opts = options("FullyConnectedOptions", fusedActivationFunction=ACT[act])
    path = tmp_path / f"fc_{rows}_{depth}_{units}.tflite"
    path.write_bytes(graph_model(tensors, [("FULLY_CONNECTED", [0, 1, 2], [3], opts)], [0], [3]))
    return path


def _check(path):
    g = read(path).main
    t = g.tensors[g.inputs[0]]
    x = np.random.default_rng(7).uniform(-2, 2, (3, *t.shape)).astype(np.float32)
    xs = {g.inputs[0]: x}
    ref = reference_outputs(path, g, xs)[g.outputs[0]]
    ours = run_graph(g, xs, "tflite")[g.outputs[0]]
    assert ours.dtype == np.float32 and ours.shape == ref.shape
    np.testing.assert_array_equal(ours, ref)
    # float mode's sums are near exact; LiteRT's carry one rounding per term
    floats = run_graph(g, xs, "float")[g.outputs[0]]
    np.testing.assert_allclose(floats, ref, rtol=0, atol=1e-5 * np.abs(ref).max())
    assert np.unique(ref).size > ref.size // 4  # real values, not a clamped constant
    return g, x, ref


def _rounded_once(g, x) -> np.ndarray:
    """Each sum exact (float64 of the float32 products) and rounded once to float32, + bias,
    clamped: what any other summation order tends to; it differs from LiteRT's."""
    op = g.ops[0]
    w = g.tensors[op.inputs[1]].data.astype(np.float64)
    bias = g.tensors[op.inputs[2]].data
    if op.type == "FULLY_CONNECTED":
        sums = x.reshape(-1, w.shape[1]).astype(np.float64) @ w.T
        return _clamp(op, sums.astype(np.float32) + bias)
    xs = x.reshape(-1, *x.shape[2:]).astype(np.float64)
    o, kh, kw, ci = w.shape
    n = xs.shape[3] // ci
    geom = win.geometry(op.options, xs.shape[1], xs.shape[2], kh, kw)
    per_group = [
        win.im2col(xs[..., k * ci : (k + 1) * ci], kh, kw, geom)
        @ w[k * o // n : (k + 1) * o // n].reshape(o // n, -1).T
        for k in range(n)
    ]
    return _clamp(op, np.concatenate(per_group, axis=-1).astype(np.float32) + bias)


def _clamp(op, y: np.ndarray) -> np.ndarray:
    lo, hi = {"RELU": (0, None), "RELU6": (0, 6)}.get(
        op.options.get("fused_activation"), (None,) * 2
    )
    return y if lo is None else np.clip(y, np.float32(lo), None if hi is None else np.float32(hi))


@pytest.mark.parametrize("name", sorted(CONV))
def test_float_conv_2d_is_litert_bit_for_bit(name, tmp_path):
    g, x, ref = _check(_conv_model(tmp_path, name))
    assert (_rounded_once(g, x).reshape(ref.shape) != ref).any()  # the order shows


@pytest.mark.parametrize("rows,depth,units,act", [(1, 300, 10, "NONE"), (4, 64, 33, "RELU")])
def test_float_fully_connected_is_litert_bit_for_bit(rows, depth, units, act, tmp_path):
    g, x, ref = _check(_fc_model(tmp_path, rows, depth, units, act))
    assert (_rounded_once(g, x).reshape(ref.shape) != ref).any()  # the order shows
