"""Ops issue 3 lists whose lowering needed more than one plain MLI call: element-wise ops with a
constant that broadcasts, ARG_MAX over the last axis of a multi-row tensor, FULLY_CONNECTED over
several rows, PAD of an SA8 tensor whose zero point is not 0.

Each case checks the lowering (kinds, kernels, shapes, cfg), runs the MLI model with the
bit-exact executor against `tflite` mode on seeded random inputs (all four MLI builds), and
compiles the emitted C with gcc against the MLI 2.x declarations the tests carry.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest

from mlitool.emit.writer import emit
from mlitool.errors import UnsupportedError
from mlitool.execute.mli import bridge as B
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.execute.reference.graph import run_graph
from mlitool.execute.reference.inputs import random_inputs
from mlitool.mli.lower.driver import lower
from mlitool.mli.types import ElType, Role
from mlitool.tflite.reader import read_model
from tests.support.emit_probe import expected_lines, probe_source
from tests.support.paths import SAMPLES, mli_cflags
from tests.support.tflite_build import T, graph_model, options, single_op_model

WARN = ["-Wall", "-Wextra", "-Werror", "-pedantic"]
BUILDS = [Arith(r, a) for r in ("up", "convergent") for a in (True, False)]
needs_gcc = pytest.mark.skipif(not shutil.which("gcc"), reason="gcc not installed")


def sample(name: str):
    return read_model(str(SAMPLES / "ops" / f"{name}.tflite")).main


def built(tmp_path, name, op, ins, outs, opts=None):
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(single_op_model(op, ins, outs, opts))
    return read_model(str(path)).main


def act(shape, scale=0.05, zp=-3):
    return T(tuple(shape), "int8", scale, zp)


def worst_lsb(graph, mli, n=64, seed=5) -> int:
    """Largest |mli - tflite| over every output, sample and MLI build."""
    x = random_inputs(graph, n, seed)
    ref = run_graph(graph, x, "tflite")
    worst = 0
    for arith in BUILDS:
        out, _ = B.run_mli(graph, mli, x, arith)
        for i in graph.outputs:
            assert out[i].shape == ref[i].shape and out[i].dtype == ref[i].dtype
            worst = max(worst, int(np.abs(out[i].astype(np.int64) - ref[i].astype(np.int64)).max()))
    return worst


def compiles(mli, tmp_path) -> None:
    """gcc -std=c99 -Wall -Wextra -Werror -pedantic; a probe prints every tensor's fields."""
    emit(mli, tmp_path, "net")
    manifest = json.loads((tmp_path / "net.json").read_text())
    c_names = {t["name"]: t["c_name"] for t in manifest["tensors"]}
    (tmp_path / "probe.c").write_text(probe_source(manifest, "net.h"))
    inc = [*mli_cflags("2.0"), "-I", str(tmp_path)]
    for cmd in (
        ["gcc", "-std=c99", *WARN, *inc, "-c", "net.c", "-o", "net.o"],
        ["gcc", "-std=c99", *WARN, *inc, "probe.c", "net.o", "-o", "probe"],
    ):
        res = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
        assert res.returncode == 0, res.stderr[:3000]
    res = subprocess.run([str(tmp_path / "probe")], capture_output=True, text=True, check=True)
    assert res.stdout.splitlines() == expected_lines(mli, c_names)


def kinds(mli):
    return [(layer.kind, layer.kernel) for layer in mli.layers]


# --- element-wise with a broadcast constant -----------------------------------------------------

ELT = {
    "add_const": "add",
    "sub_const": "sub",
    "mul_const": "mul",
    "minimum_const": "min",
    "maximum_const": "max",
}


@pytest.mark.parametrize("name", sorted(ELT))
def test_eltwise_constant_materialized(name):
    graph = sample(name)
    mli = lower(graph, format="sa8")
    assert kinds(mli) == [(f"eltwise_{ELT[name]}", f"mli_krn_eltwise_{ELT[name]}_sa8")]
    x, c = (mli.tensor(n) for n in mli.layers[0].inputs)
    const = graph.tensors[graph.ops[0].inputs[1]]
    assert x.role == Role.INPUT and c.role == Role.PARAM
    assert const.shape == (8,) and x.shape == c.shape == (4, 4, 8)
    # every pixel carries the model's 8 constants, with the model's own parameters
    np.testing.assert_array_equal(c.data, np.tile(np.asarray(const.data, np.int8), (4, 4, 1)))
    assert int(c.zero_point[0]) == int(const.quant.zero_point[0])
    assert any("128 bytes of ROM instead of 8" in n for n in c.notes)
    # min / max select, no arithmetic: exact; add / sub / mul requantize: 1 LSB
    assert worst_lsb(graph, mli) == (0 if ELT[name] in ("min", "max") else 1)


def test_eltwise_constant_fx16():
    graph = sample("add_const")
    mli = lower(graph, format="fx16")
    c = mli.tensor(mli.layers[-1].inputs[1])
    real = graph.tensors[graph.ops[0].inputs[1]]
    want = real.quant.dequantize(np.asarray(real.data))
    assert c.shape == (4, 4, 8) and c.el_type == ElType.FX16
    np.testing.assert_allclose(c.data[2, 3] * 2.0**-c.frac_bits, want, atol=2.0**-c.frac_bits)


def test_uniform_constant_becomes_a_scalar(tmp_path):
    const = np.full((6,), 37, np.int8)
    graph = built(
        tmp_path,
        "add_u",
        "ADD",
        [act((1, 3, 2, 6)), T((6,), "int8", 0.02, 4, data=const)],
        [act((1, 3, 2, 6), 0.07, 1)],
        options("AddOptions"),
    )
    mli = lower(graph, format="sa8")
    c = mli.tensor(mli.layers[0].inputs[1])
    assert c.shape == () and int(c.data) == 37 and any("scalar" in n for n in c.notes)
    assert worst_lsb(graph, mli) <= 1


def test_broadcast_constant_on_the_left_and_over_rows(tmp_path):
    """SUB(const, x) with a [3, 1, 1] constant broadcast over [1, 3, 2, 4]."""
    const = np.array([-100, 5, 90], np.int8).reshape(3, 1, 1)
    graph = built(
        tmp_path,
        "sub_l",
        "SUB",
        [T((3, 1, 1), "int8", 0.03, -2, data=const), act((1, 3, 2, 4))],
        [act((1, 3, 2, 4), 0.08, 3)],
        options("SubOptions"),
    )
    mli = lower(graph, format="sa8")
    c, x = (mli.tensor(n) for n in mli.layers[0].inputs)
    assert c.role == Role.PARAM and c.shape == x.shape == (3, 2, 4)
    np.testing.assert_array_equal(c.data[:, 1, 3], [-100, 5, 90])
    assert worst_lsb(graph, mli) <= 1


def test_broadcast_activation_is_one_call_per_channel(tmp_path):
    graph = built(
        tmp_path,
        "add_aa",
        "ADD",
        [act((1, 1, 1, 8)), act((1, 4, 4, 8))],
        [act((1, 4, 4, 8))],
        options("AddOptions"),
    )
    mli = lower(graph, format="sa8")
    (layer,) = mli.layers
    # 8 calls (one per channel, over its 16 pixels, the [1,1,1,8] operand's value the scalar),
    # not 16 calls over 8 channels
    assert layer.calls.loops == (2,)
    views = [mli.tensor(v) for v in layer.calls.views]
    assert [(v.shape, v.mem_stride) for v in views] == [((1,), (1,))] + [((16, 1), (8, 1))] * 2
    assert worst_lsb(graph, mli) <= 1
    with pytest.raises(UnsupportedError, match=r"op 0 \(ADD\).*broadcasts to \[1, 4, 4, 8\]"):
        lower(graph, format="fx16", mli_version="1.1")


@needs_gcc
def test_eltwise_constant_compiles(tmp_path):
    compiles(lower(sample("mul_const"), format="sa8"), tmp_path)


# --- fully connected over several rows ----------------------------------------------------------


def test_fc_keep_dims_as_pointwise_conv():
    graph = sample("fully_connected_keep_dims")
    mli = lower(graph, format="sa8")
    assert kinds(mli) == [
        ("view", ""),
        ("conv2d", "mli_krn_conv2d_hwcn_sa8_sa8_sa32"),
        ("view", ""),
    ]
    view_in, conv, view_out = mli.layers
    x, xr = mli.tensor(view_in.inputs[0]), mli.tensor(view_in.outputs[0])
    assert x.role == Role.INPUT and x.shape == (4, 16)
    assert xr.shape == (4, 1, 16) and xr.buffer == x.name and conv.inputs == [xr.name]
    w = mli.tensor(conv.weights)
    wt = graph.tensors[graph.ops[0].inputs[1]]
    assert w.shape == (1, 1, 16, 8) and w.layout == "HWCN" and w.dim == 3
    np.testing.assert_array_equal(w.data[0, 0], np.asarray(wt.data).T)  # (N, M)
    assert len(w.scale) == 8 and mli.tensor(conv.bias).shape == (8,)
    assert conv.cfg == {
        "relu_type": 0,
        "stride_width": 1,
        "stride_height": 1,
        "padding_left": 0,
        "padding_right": 0,
        "padding_top": 0,
        "padding_bottom": 0,
        "dilation_width": 1,
        "dilation_height": 1,
    }
    y_hwc, y = mli.tensor(conv.outputs[0]), mli.tensor(view_out.outputs[0])
    assert y_hwc.shape == (4, 1, 8) and y.shape == (4, 8) and y.buffer == y_hwc.name
    assert y.role == Role.OUTPUT and mli.outputs == [y.name]
    assert worst_lsb(graph, mli) <= 1  # MAC requantization, as the other MAC layers


def test_fc_rows_fx16():
    graph = sample("fully_connected_keep_dims")
    mli = lower(graph, format="fx16")
    assert [layer.kernel for layer in mli.layers if layer.kernel] == ["mli_krn_conv2d_hwcn_fx16"]
    assert mli.tensor(mli.layers[1].weights).shape == (1, 1, 16, 8)
    assert worst_lsb(graph, mli) <= 1  # FX16 real values, quantized back to int8


@pytest.mark.parametrize(
    "in_shape,keep,out_shape",
    [((1, 4, 16), False, (4, 8)), ((4, 16), False, (4, 8)), ((1, 2, 3, 16), True, (1, 2, 3, 8))],
)
def test_fc_rows_shapes(tmp_path, in_shape, keep, out_shape):
    rng = np.random.default_rng(11)
    w = rng.integers(-127, 128, (8, 16)).astype(np.int8)
    b = rng.integers(-2000, 2000, (8,)).astype(np.int32)
    graph = built(
        tmp_path,
        "fc",
        "FULLY_CONNECTED",
        [
            act(in_shape, 0.04, 5),
            T((8, 16), "int8", 0.01, 0, data=w),
            T((8,), "int32", 0.0004, 0, data=b),
        ],
        [act(out_shape, 0.1, -7)],
        options("FullyConnectedOptions", keepNumDims=keep, fusedActivationFunction=1),
    )
    mli = lower(graph, format="sa8")
    conv = next(layer for layer in mli.layers if layer.kind == "conv2d")
    rows = int(np.prod(in_shape)) // 16
    assert mli.tensor(conv.inputs[0]).shape == (rows, 1, 16)
    assert conv.cfg["relu_type"] == 1
    assert mli.tensor(mli.outputs[0]).shape == (out_shape if len(out_shape) == 2 else out_shape[1:])
    assert worst_lsb(graph, mli) <= 1


def test_fc_rows_refused_for_chw(tmp_path):
    graph = sample("fully_connected_keep_dims")
    with pytest.raises(UnsupportedError, match="layout hwc"):
        lower(graph, format="fx16", mli_version="1.1", layout="chw")


@needs_gcc
def test_fc_rows_compiles(tmp_path):
    compiles(lower(sample("fully_connected_keep_dims"), format="sa8"), tmp_path)


# --- ARG_MAX over the last axis of several rows -------------------------------------------------


def argmax_reference(x: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """(first, last) index of the maximum along `axis`: TFLite returns the first, MLI the last."""
    n = x.shape[axis]
    first = np.argmax(x, axis=axis)
    last = n - 1 - np.argmax(np.flip(x, axis=axis), axis=axis)
    return first, last


def check_argmax(graph, mli, axis: int, n=64, seed=9) -> int:
    """MLI's indices equal the last maximum exactly, and TFLite's wherever the maximum is
    unique; returns how many samples had ties."""
    x = random_inputs(graph, n, seed)
    v = x[graph.inputs[0]]
    first, last = argmax_reference(v, axis + 1)
    ref = run_graph(graph, x, "tflite")[graph.outputs[0]]
    np.testing.assert_array_equal(ref, first)  # the reference semantics, checked
    for arith in BUILDS:
        out = B.run_mli(graph, mli, x, arith)[0][graph.outputs[0]]
        assert out.dtype == ref.dtype and out.shape == ref.shape
        np.testing.assert_array_equal(out, last)
    return int((first != last).sum())


def test_argmax_rows_lowering():
    graph = sample("arg_max")
    mli = lower(graph, format="sa8")
    assert [layer.kind for layer in mli.layers] == ["view", "argmax", "view", "convert", "view"]
    view_x, am, view_rows, conv, view_out = mli.layers
    assert am.kernel == "mli_krn_argmax_sa8" and am.cfg == {"axis": 0, "topk": 1}
    assert mli.tensor(am.inputs[0]).shape == (16, 8)
    offs = mli.tensor(am.outputs[0])
    assert offs.shape == (16, 1) and offs.el_type == ElType.SA32 and offs.dim == -1
    rows = mli.tensor(view_rows.outputs[0])
    assert rows.buffer == offs.name and rows.shape == (16,) and rows.dim == 0
    np.testing.assert_array_equal(rows.zero_point, np.arange(16) * 8)
    np.testing.assert_array_equal(rows.scale, np.ones(16))
    assert conv.kernel == "mli_hlp_convert_tensor" and conv.inputs == [rows.name]
    flat, out = mli.tensor(conv.outputs[0]), mli.tensor(view_out.outputs[0])
    assert flat.shape == (16,) and flat.dim == -1 and int(flat.zero_point[0]) == 0
    assert out.shape == (4, 4) and out.role == Role.OUTPUT and out.buffer == flat.name
    assert any("last index" in n for n in am.notes)


@pytest.mark.parametrize("fmt", ["sa8", "fx16"])
def test_argmax_rows_indices(fmt):
    graph = sample("arg_max")
    ties = check_argmax(graph, lower(graph, format=fmt), axis=3)
    assert ties > 0  # the random inputs exercise equal maxima too


@pytest.mark.parametrize(
    "in_shape,axis,out_type",
    [((1, 5, 7, 1), 2, "int32"), ((1, 6, 9), -1, "int64"), ((1, 1, 1, 11), 3, "int32")],
)
def test_argmax_shapes(tmp_path, in_shape, axis, out_type):
    out_shape = tuple(d for i, d in enumerate(in_shape) if i != axis % len(in_shape))
    graph = built(
        tmp_path,
        "am",
        "ARG_MAX",
        [act(in_shape), T((1,), "int32", data=np.array([axis], np.int32))],
        [T(out_shape, out_type)],
        options("ArgMaxOptions", outputType=2 if out_type == "int32" else 4),
    )
    mli = lower(graph, format="sa8")
    rows = int(np.prod(in_shape[: axis % len(in_shape)]))
    am = next(layer for layer in mli.layers if layer.kind == "argmax")
    assert am.cfg == ({"axis": -1, "topk": 1} if rows == 1 else {"axis": 0, "topk": 1})
    check_argmax(graph, mli, axis % len(in_shape))


def test_argmax_refusals(tmp_path):
    graph = built(
        tmp_path,
        "am1",
        "ARG_MAX",
        [act((1, 4, 8)), T((1,), "int32", data=np.array([1], np.int32))],
        [T((1, 8), "int32")],
        options("ArgMaxOptions", outputType=2),
    )
    with pytest.raises(UnsupportedError, match="last non-unit axis"):
        lower(graph, format="sa8")
    graph = built(
        tmp_path,
        "am2",
        "ARG_MAX",
        [act((1, 5000, 8)), T((1,), "int32", data=np.array([2], np.int32))],
        [T((1, 5000), "int32")],
        options("ArgMaxOptions", outputType=2),
    )
    with pytest.raises(UnsupportedError, match="39992 do not fit the int16 zero points"):
        lower(graph, format="sa8")


@needs_gcc
def test_argmax_rows_compiles(tmp_path):
    compiles(lower(sample("arg_max"), format="sa8"), tmp_path)


# --- PAD of SA8 data whose zero point is not 0 --------------------------------------------------


def graph_of(tmp_path, tensors: list[T], ops: list[tuple], inputs, outputs, name="m"):
    """A multi-op model: `ops` = (BuiltinOperator name, inputs, outputs, options or None)."""
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(graph_model(tensors, ops, inputs, outputs))
    return read_model(str(path)).main


def test_pad_sample_through_sa32():
    graph = sample("pad")
    mli = lower(graph, format="sa8")
    assert kinds(mli) == [
        ("convert", "mli_hlp_convert_tensor"),
        ("padding", "mli_mov_tensor_sync"),
        ("convert", "mli_hlp_convert_tensor"),
    ]
    up, pad, down = mli.layers
    x, wide = mli.tensor(up.inputs[0]), mli.tensor(up.outputs[0])
    padded, out = mli.tensor(pad.outputs[0]), mli.tensor(down.outputs[0])
    assert int(x.zero_point[0]) == -8 and x.el_type == ElType.SA8
    assert wide.el_type == padded.el_type == ElType.SA32
    assert int(wide.zero_point[0]) == int(padded.zero_point[0]) == 0
    assert (int(wide.scale[0]), int(wide.scale_frac_bits[0])) == (
        int(x.scale[0]),
        int(x.scale_frac_bits[0]),
    )
    assert wide.shape == (4, 4, 8) and padded.shape == out.shape == (7, 7, 8)
    pads = np.asarray(graph.tensors[graph.ops[0].inputs[1]].data)
    assert pad.cfg == {
        "padding_left": int(pads[2, 0]),
        "padding_right": int(pads[2, 1]),
        "padding_top": int(pads[1, 0]),
        "padding_bottom": int(pads[1, 1]),
    }
    assert any("extra activation RAM" in n for n in pad.notes)
    assert out.role == Role.OUTPUT and int(out.zero_point[0]) == -8
    assert worst_lsb(graph, mli) == 0
    x_in = random_inputs(graph, 8, 2)
    got = B.run_mli(graph, mli, x_in, BUILDS[0])[0][graph.outputs[0]]
    want = np.pad(x_in[graph.inputs[0]], [(0, 0)] + [tuple(p) for p in pads], constant_values=-8)
    np.testing.assert_array_equal(got, want)


def test_pad_fx16_unchanged():
    graph = sample("pad")
    mli = lower(graph, format="fx16")
    assert [layer.kind for layer in mli.layers] == ["padding"]
    assert worst_lsb(graph, mli) == 0


def pad_conv_graph(
    tmp_path,
    conv="CONV_2D",
    padding=0,
    pads=((1, 1), (2, 0)),
    out_hw=None,
    also_output=False,
    padv2=None,
    name="pc",
):
    """x [1,5,6,3] (zp 9) -> PAD (or PADV2 with `padv2`) -> 3x3 conv (padding 0 SAME, 1 VALID)."""
    rng = np.random.default_rng(3)
    h, w = 5 + sum(pads[0]), 6 + sum(pads[1])
    if conv == "CONV_2D":
        wshape, cout = (4, 3, 3, 3), 4
        opts = options("Conv2DOptions", padding=padding, strideW=1, strideH=1)
    else:
        wshape, cout = (1, 3, 3, 6), 6
        opts = options(
            "DepthwiseConv2DOptions", padding=padding, strideW=1, strideH=1, depthMultiplier=2
        )
    oh, ow = out_hw or ((h, w) if padding == 0 else (h - 2, w - 2))
    wq = rng.integers(-127, 128, wshape).astype(np.int8)
    ws = np.linspace(0.004, 0.009, cout)
    bq = rng.integers(-3000, 3000, (cout,)).astype(np.int32)
    pad_arr = np.array([[0, 0], list(pads[0]), list(pads[1]), [0, 0]], np.int32)
    tensors = [
        act((1, 5, 6, 3), 0.04, 9),
        T((4, 2), "int32", data=pad_arr),
        act((1, h, w, 3), 0.04, 9),
        T(wshape, "int8", ws, 0, axis=0 if conv == "CONV_2D" else 3, data=wq),
        T((cout,), "int32", ws * 0.04, 0, data=bq),
        act((1, oh, ow, cout), 0.08, -4),
    ]
    pad_ins = [0, 1]
    if padv2 is not None:
        tensors.append(T((1,), "int8", 0.04, 9, data=np.array([padv2], np.int8)))
        pad_ins.append(len(tensors) - 1)
    ops = [
        ("PADV2" if padv2 is not None else "PAD", pad_ins, [2], None),
        (conv, [2, 3, 4], [5], opts),
    ]
    outputs = [2, 5] if also_output else [5]
    return graph_of(tmp_path, tensors, ops, [0], outputs, name)


@pytest.mark.parametrize(
    "conv,padding",
    [("CONV_2D", 1), ("CONV_2D", 0), ("DEPTHWISE_CONV_2D", 1), ("DEPTHWISE_CONV_2D", 0)],
)
def test_pad_fused_into_conv(tmp_path, conv, padding):
    pads = ((1, 1), (2, 0)) if padding == 1 else ((1, 0), (0, 1))
    graph = pad_conv_graph(tmp_path, conv, padding, pads)
    mli = lower(graph, format="sa8")
    layer = mli.layers[-1]
    assert [lay.kind for lay in mli.layers] == ["conv2d" if conv == "CONV_2D" else "group_conv2d"]
    assert mli.tensor(layer.inputs[0]).shape == (5, 6, 3)  # the unpadded input
    same = 1 if padding == 0 else 0  # SAME 3x3: 1 on each side
    cfg = layer.cfg
    assert (
        cfg["padding_top"],
        cfg["padding_bottom"],
        cfg["padding_left"],
        cfg["padding_right"],
    ) == tuple(p + same for p in pads[0] + pads[1])
    assert any("takes the padding of op 0 (PAD)" in n for n in layer.notes)
    assert worst_lsb(graph, mli) <= 1
    # the same conv after an explicit (SA32) pad gives the same integers
    unfused = lower(
        pad_conv_graph(tmp_path, conv, padding, pads, also_output=True, name="pc2"), format="sa8"
    )
    assert [lay.kind for lay in unfused.layers][:3] == ["convert", "padding", "convert"]
    x = random_inputs(graph, 16, 4)
    for arith in BUILDS:
        a = B.run_mli(graph, mli, x, arith)[0][graph.outputs[0]]
        b = B.run_mli(graph, unfused, x, arith)[0][graph.outputs[-1]]
        np.testing.assert_array_equal(a, b)


def test_pad_too_wide_for_the_kernel_is_not_fused(tmp_path):
    """MLI needs conv padding < kernel size: a pad of 3 before a 3x3 VALID conv, or 2 before
    a 3x3 SAME one (2 + 1), stays a copy."""
    graph = pad_conv_graph(tmp_path, "CONV_2D", 1, pads=((3, 0), (0, 1)))
    mli = lower(graph, format="sa8")
    assert [lay.kind for lay in mli.layers] == ["convert", "padding", "convert", "conv2d"]
    assert worst_lsb(graph, mli) <= 1
    graph = pad_conv_graph(tmp_path, "CONV_2D", 0, pads=((0, 0), (2, 0)), name="same")
    mli = lower(graph, format="sa8")
    assert [lay.kind for lay in mli.layers] == ["convert", "padding", "convert", "conv2d"]
    assert worst_lsb(graph, mli) <= 1


@pytest.mark.parametrize("value", [9, 0, -100])
def test_padv2(tmp_path, value):
    """PADV2 with the zero point (real 0) fuses; other values go through SA32 with zero point
    zp - value, in which raw 0 is the pad value."""
    graph = pad_conv_graph(tmp_path, "CONV_2D", 1, padv2=value, name=f"p2_{value}")
    mli = lower(graph, format="sa8")
    kinds_ = [lay.kind for lay in mli.layers]
    if value == 9:
        assert kinds_ == ["conv2d"]
    elif value == 0:
        assert kinds_ == ["padding", "conv2d"]  # raw 0 in SA8 already
    else:
        assert kinds_ == ["convert", "padding", "convert", "conv2d"]
        assert int(mli.tensor(mli.layers[0].outputs[0]).zero_point[0]) == 9 - value
    assert worst_lsb(graph, mli) <= 1
    if value == -100:  # MLI's FX padding fills 0: fallback C fills the real value
        fx = lower(graph, format="fx16")
        pad = next(la for la in fx.layers if la.kind == "fallback")
        assert pad.kernel == "mlitool_pad16"
        x = graph.tensors[graph.ops[0].inputs[0]]
        real = (value - int(x.quant.zero_point[0])) * float(x.quant.scale[0])
        frac = fx.tensor(pad.inputs[0]).frac_bits
        assert pad.cfg["fill"] == round(real * 2**frac) != 0


@needs_gcc
def test_pad_compiles(tmp_path):
    compiles(lower(sample("pad"), format="sa8"), tmp_path)
    (tmp_path / "fused").mkdir()
    compiles(
        lower(pad_conv_graph(tmp_path, "DEPTHWISE_CONV_2D", 0), format="sa8"), tmp_path / "fused"
    )
