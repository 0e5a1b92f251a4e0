"""TRANSPOSE_CONV lowering: the MLI layer it becomes (weights HWCN as TFLite scatters them,
per-channel dim 3, MLI's padding before / after for SAME and VALID, cfg.relu), the refusals for
what mli_krn_transpose_conv2d cannot compute, and `inspect` (supported, MACs)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from mlitool.errors import UnsupportedError
from mlitool.mli.lower.driver import lower
from mlitool.mli.lower.support import unsupported_ops
from mlitool.mli.target import MLI11
from mlitool.pipeline import read
from tests.support.tconv_models import PADDING, tconv_model, tconv_tensors
from tests.support.tflite_build import graph_model, options


def _layer(path, fmt="sa8"):
    g = read(path).main
    m = lower(g, format=fmt)
    assert [layer.kind for layer in m.layers] == ["transpose_conv2d"]
    return g, m, m.layers[0]


# (padding, input, output, kernel, stride) -> MLI (before, after), worked out by hand: TFLite
# pads as the forward convolution from the output size; after = (in-1)*s + k - before - out.
GEOMETRY = [
    ("SAME", 5, 10, 3, 2, 0, 1),  # total (5-1)*2+3-10 = 1: 0 before
    ("SAME", 5, 9, 3, 2, 1, 1),  # total 2: 1 before, 1 after
    ("VALID", 5, 11, 3, 2, 0, 0),  # all of (5-1)*2+3 = 11
    ("SAME", 4, 8, 4, 2, 1, 1),  # total (4-1)*2+4-8 = 2
    ("VALID", 3, 6, 2, 2, 0, 0),
    ("SAME", 5, 5, 3, 1, 1, 1),
]


@pytest.mark.parametrize("padding,size,out,k,s,before,after", GEOMETRY)
def test_cfg_padding_is_mli_s(padding, size, out, k, s, before, after, tmp_path):
    path = tconv_model(
        tmp_path / "t.tflite",
        padding=padding,
        in_hw=(size, 3),
        out_hw=(out, 6),
        k=(k, 2),
        stride=(s, 2),
    )
    _, _, layer = _layer(path)
    assert (layer.cfg["padding_top"], layer.cfg["padding_bottom"]) == (before, after)
    assert (layer.cfg["stride_height"], layer.cfg["stride_width"]) == (s, 2)
    assert layer.cfg["padding_left"] == 0 and layer.cfg["dilation_width"] == 1


def test_layer_kernels_weights_and_bias(tmp_path):
    path = tconv_model(tmp_path / "t.tflite", act="RELU6")
    g, m, layer = _layer(path)
    assert layer.kernel == "mli_krn_transpose_conv2d_hwcn_sa8_sa8_sa32"
    assert layer.cfg_type == "mli_conv2d_cfg" and layer.cfg["relu_type"] == 3  # MLI_RELU_6
    w, b = m.tensors[layer.weights], m.tensors[layer.bias]
    tfl_w = np.asarray(g.tensors[1].data)  # (O, KH, KW, I)
    assert w.layout == "HWCN" and w.dim == 3 and b.dim == 0
    np.testing.assert_array_equal(w.data, tfl_w.transpose(1, 2, 3, 0))
    np.testing.assert_array_equal(b.data, np.asarray(g.tensors[3].data))
    assert m.tensors[layer.inputs[0]].shape == (5, 6, 4)
    assert m.tensors[layer.outputs[0]].shape == (10, 12, 6)
    for fmt, suffix in (("fx16", "fx16"), ("fx8w16d", "fx16_fx8_fx8")):
        assert _layer(path, fmt)[2].kernel == f"mli_krn_transpose_conv2d_hwcn_{suffix}"


def test_16x8_lowers_to_fx16_and_refuses_sa8(tmp_path):
    path = tconv_model(tmp_path / "w.tflite", kind="int16x8")
    assert _layer(path, "fx16")[2].kernel == "mli_krn_transpose_conv2d_hwcn_fx16"
    with pytest.raises(UnsupportedError, match="would lose 8 bits in sa8"):
        lower(read(path).main, format="sa8")


REFUSALS = [
    (
        dict(padding="VALID", out_hw=(12, 14)),
        "output_shape asks for 12 along height, but the taps reach only 11 ((input 5 - 1) * "
        "stride 2 + kernel 3 - padding 0): MLI's transpose conv output is exactly that size "
        "(TFLite leaves the 1 extra position(s) at the bias)",
    ),
    (
        dict(k=(2, 2), stride=(3, 3), in_hw=(3, 3), out_hw=(9, 9)),
        "stride 3 along height is larger than the kernel (2): MLI's transpose conv needs stride "
        "<= kernel size (TFLite leaves the positions no tap reaches at the bias)",
    ),
    (
        dict(out_hw=(6, 12)),
        "output_shape 6 along height cuts 0 position(s) before and 5 after the 11 the taps reach "
        "(input 5, stride 2, kernel 3): MLI's transpose conv takes paddings smaller than the "
        "kernel only",
    ),
]


@pytest.mark.parametrize("kw,reason", REFUSALS)
def test_refusals_name_what_mli_cannot_do(kw, reason, tmp_path):
    g = read(tconv_model(tmp_path / "t.tflite", **kw)).main
    assert unsupported_ops(g) == [f"op 0 (TRANSPOSE_CONV): {reason}"]
    with pytest.raises(UnsupportedError, match="TRANSPOSE_CONV"):
        lower(g)


def _variable(tmp_path, slot):
    """The int8 model with input `slot` (0: output_shape, 1: weights) fed at run time."""
    tensors = tconv_tensors("int8", (10, 12), (5, 6), (3, 3), 4, 6, 0)
    tensors[slot].data = None
    opts = options("TransposeConvOptions", padding=PADDING["SAME"], strideW=2, strideH=2)
    path = tmp_path / f"v{slot}.tflite"
    path.write_bytes(
        graph_model(tensors, [("TRANSPOSE_CONV", [0, 1, 2, 3], [4], opts)], [slot, 2], [4])
    )
    return read(path).main


def test_runtime_shape_and_weights_are_refused(tmp_path):
    assert unsupported_ops(_variable(tmp_path, 0)) == [
        "op 0 (TRANSPOSE_CONV): output_shape is not constant (MLI's output tensor has a fixed "
        "shape)"
    ]
    assert unsupported_ops(_variable(tmp_path, 1)) == [
        "op 0 (TRANSPOSE_CONV): weights are not constant"
    ]


def test_mli1_has_no_transpose_conv(tmp_path):
    g = read(tconv_model(tmp_path / "t.tflite")).main
    assert unsupported_ops(g, MLI11) == [
        "op 0 (TRANSPOSE_CONV): transpose_conv2d has no MLI 1.1 kernel (MLI 2.x has one)"
    ]


def test_inspect_supports_it_and_counts_its_macs(tmp_path, capsys):
    from mlitool.cli.entry import main

    path = tconv_model(tmp_path / "t.tflite")
    with pytest.raises(SystemExit) as exc:
        main(["inspect", str(path), "--json"])
    assert exc.value.code == 0
    op = json.loads(capsys.readouterr().out)["ops"][0]
    assert op["supported"] is True and op["unsupported_reason"] is None
    # every input pixel (5*6) times every filter element (6*3*3*4)
    assert op["macs"] == 5 * 6 * 6 * 3 * 3 * 4


def _malformed(tmp_path, out_shape=None, w_in=4):
    tensors = tconv_tensors("int8", (10, 12), (5, 6), (3, 3), 4, 6, 0)
    if out_shape is not None:
        tensors[4].shape = out_shape
    if w_in != 4:
        tensors[1].shape = [6, 3, 3, w_in]
        tensors[1].data = np.zeros((6, 3, 3, w_in), np.int8)
    opts = options("TransposeConvOptions", padding=PADDING["SAME"], strideW=2, strideH=2)
    path = tmp_path / f"bad_{w_in}_{out_shape}.tflite"
    path.write_bytes(graph_model(tensors, [("TRANSPOSE_CONV", [0, 1, 2, 3], [4], opts)], [2], [4]))
    return path


def test_malformed_shapes_are_bad_input(tmp_path):
    from mlitool.errors import ModelFormatError
    from mlitool.tflite.reader import read_model
    from mlitool.tflite.validate import problems

    cases = [
        (
            _malformed(tmp_path, out_shape=[1, 9, 12, 6]),
            "output_shape [1, 10, 12, 6] is not the output's shape [1, 9, 12, 6]",
        ),
        (_malformed(tmp_path, w_in=3), "weights [6, 3, 3, 3] do not fit an input of 4 channels"),
    ]
    for path, text in cases:
        with pytest.raises(ModelFormatError, match=re.escape(text)):
            read(path)
        assert text in str(problems(read_model(path).main)[0])
