"""The passes that make a conv2d of other ops (mlitool/passes/as_conv.py), each on a small
hand-built graph, and lowering's layers that keep naming the model's op."""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.mli.lower.driver import lower
from mlitool.mli.target import MLI2
from mlitool.passes.as_conv import (
    AS_CONV,
    HWC_ROWS,
    depthwise_one_channel_as_conv,
    fc_rows_as_conv,
)
from mlitool.passes.context import PassContext
from mlitool.passes.pad_fusion import EXPLICIT_PADDING


def q(scale, zp=0, axis=None):
    scale = np.atleast_1d(np.asarray(scale, float))
    return ir.Quant(scale, np.full(scale.shape, zp, np.int64), axis)


def dw_graph(cin: int = 1, share: bool = False) -> ir.Graph:
    """x [1,4,4,cin] -> 3x3 DEPTHWISE_CONV_2D with 4 outputs (weights per-axis on axis 3); with
    `share`, a depthwise over 4 channels reads the same weights."""
    w = (np.arange(36).reshape(1, 3, 3, 4) - 18).astype(np.int8)
    tensors = [
        ir.Tensor(0, "x", (1, 4, 4, cin), "int8", quant=q(0.1, 3)),
        ir.Tensor(1, "w", (1, 3, 3, 4), "int8", data=w, quant=q([0.01, 0.02, 0.03, 0.04], 0, 3)),
        ir.Tensor(
            2,
            "b",
            (4,),
            "int32",
            data=np.arange(4, dtype=np.int32),
            quant=q([1e-3, 2e-3, 3e-3, 4e-3], 0, 0),
        ),
        ir.Tensor(3, "y", (1, 2, 2, 4), "int8", quant=q(0.2, -1)),
        ir.Tensor(4, "x4", (1, 4, 4, 4), "int8", quant=q(0.1, 3)),
        ir.Tensor(5, "y4", (1, 2, 2, 4), "int8", quant=q(0.2, -1)),
    ]
    opts = {"padding": "VALID", "stride_h": 1, "stride_w": 1, "fused_activation": "RELU6"}
    ops = [ir.Op(0, "DEPTHWISE_CONV_2D", (0, 1, 2), (3,), {**opts, "depth_multiplier": 4 // cin})]
    if share:
        ops.append(ir.Op(1, "DEPTHWISE_CONV_2D", (4, 1, 2), (5,), {**opts, "depth_multiplier": 1}))
    return ir.Graph("g", tensors, ops, [0, 4] if share else [0], [3, 5] if share else [3])


def test_depthwise_over_one_channel_becomes_conv():
    g = dw_graph()
    out = depthwise_one_channel_as_conv(g, PassContext(MLI2))
    (conv,) = out.ops
    assert (conv.index, conv.type, conv.inputs, conv.outputs) == (0, "CONV_2D", (0, 1, 2), (3,))
    assert conv.origin is g.ops[0] and conv.label == "op 0 (DEPTHWISE_CONV_2D)"
    assert conv.options == {
        **g.ops[0].options,
        AS_CONV: "depthwise convolution of a single input channel lowered as conv2d",
    }
    w = out.tensors[1]  # the model's index: the MLI weights name it as their source
    assert (w.name, w.shape, w.quant.axis) == ("w", (4, 3, 3, 1), 0)
    assert w.quant.scale.tolist() == [0.01, 0.02, 0.03, 0.04]
    # output channel 2 holds the model's w[0, :, :, 2] = (3 i + j) * 4 + 2 - 18
    assert w.data[2, :, :, 0].tolist() == [[-16, -12, -8], [-4, 0, 4], [8, 12, 16]]
    # the caller's graph is not changed
    assert g.ops[0].type == "DEPTHWISE_CONV_2D" and g.tensors[1].shape == (1, 3, 3, 4)


def test_depthwise_over_channels_stays():
    g = dw_graph(cin=4)
    assert depthwise_one_channel_as_conv(g, PassContext(MLI2)) is g


def test_weights_a_kept_op_reads_become_a_new_tensor():
    g = dw_graph(share=True)
    out = depthwise_one_channel_as_conv(g, PassContext(MLI2))
    conv, kept = out.ops
    assert (conv.type, conv.inputs, kept.type, kept.inputs) == (
        "CONV_2D",
        (0, 6, 2),
        "DEPTHWISE_CONV_2D",
        (4, 1, 2),
    )
    assert out.tensors[6].index == 6 and out.tensors[6].shape == (4, 3, 3, 1)
    assert out.tensors[1] is g.tensors[1]


def fc_graph(in_shape=(3, 5), dtype="int8") -> ir.Graph:
    """x in_shape -> FULLY_CONNECTED (2, 5) with a fused RELU -> y [rows, 2]."""
    rows = int(np.prod(in_shape)) // 5
    quantized = dtype == "int8"
    w = (np.arange(10).reshape(2, 5) - 5).astype(dtype if quantized else np.float32)
    bias = np.array([100, -100], np.int32 if quantized else np.float32)
    tensors = [
        ir.Tensor(0, "x", in_shape, dtype, quant=q(0.1, 3) if quantized else None),
        ir.Tensor(
            1, "w", (2, 5), dtype, data=w, quant=q([0.01, 0.02], 0, 0) if quantized else None
        ),
        ir.Tensor(
            2,
            "b",
            (2,),
            bias.dtype.name,
            data=bias,
            quant=q([1e-3, 2e-3], 0, 0) if quantized else None,
        ),
        ir.Tensor(3, "y", (rows, 2), dtype, quant=q(0.2, -1) if quantized else None),
    ]
    fc = ir.Op(0, "FULLY_CONNECTED", (0, 1, 2), (3,), {"fused_activation": "RELU"})
    return ir.Graph("g", tensors, [fc], [0], [3])


def test_fc_rows_become_a_pointwise_conv():
    g = fc_graph()
    out = fc_rows_as_conv(g, PassContext(MLI2))
    (conv,) = out.ops
    assert (conv.index, conv.type, conv.inputs, conv.outputs) == (0, "CONV_2D", (0, 1, 2), (3,))
    assert conv.origin is g.ops[0] and conv.model_type == "FULLY_CONNECTED"
    assert conv.options == {
        "padding": "VALID",
        "stride_h": 1,
        "stride_w": 1,
        "dilation_h": 1,
        "dilation_w": 1,
        "fused_activation": "RELU",
        EXPLICIT_PADDING: (0, 0, 0, 0),
        HWC_ROWS: 3,
        AS_CONV: "fully connected over 3 rows lowered as a 1x1 conv2d over a (3, 1, 5) view "
        "(mli_krn_fully_connected takes one row)",
    }
    w = out.tensors[1]
    assert (w.shape, w.quant.axis) == ((2, 1, 1, 5), 0)
    assert w.data[1, 0, 0].tolist() == [0, 1, 2, 3, 4]
    assert g.ops[0].type == "FULLY_CONNECTED" and g.tensors[1].shape == (2, 5)


def test_fc_over_one_row_stays():
    g = fc_graph((1, 5))
    assert fc_rows_as_conv(g, PassContext(MLI2)) is g


def test_layers_name_the_models_op_and_its_overrides_apply():
    """The conv2d layer of a rewritten FULLY_CONNECTED is the model's op 0 FULLY_CONNECTED, and
    an override naming that op type sets its format."""
    mli = lower(fc_graph(), format="sa8", overrides={"op:FULLY_CONNECTED": "fx16"})
    assert [(la.index, la.op_type, la.kind) for la in mli.layers] == [
        (0, "FULLY_CONNECTED", "view"),
        (0, "FULLY_CONNECTED", "conv2d"),
        (0, "FULLY_CONNECTED", "view"),
    ]
    assert mli.layers[1].kernel == "mli_krn_conv2d_hwcn_fx16"
    dw = lower(dw_graph(), format="sa8").layers
    assert [(la.index, la.op_type, la.kind, la.notes) for la in dw] == [
        (
            0,
            "DEPTHWISE_CONV_2D",
            "conv2d",
            ["depthwise convolution of a single input channel lowered as conv2d"],
        )
    ]


def test_float_fc_rows_keep_per_tensor_weights():
    """Float weights of a fully connected are quantized per tensor, as a conv2d too: max |w| 5
    over 127."""
    mli = lower(fc_graph(dtype="float32"), format="sa8", ranges={0: (-1.0, 1.0), 3: (0.0, 4.0)})
    w = mli.tensor(mli.layers[1].weights)
    assert (w.shape, w.dim, len(w.scale)) == ((1, 1, 5, 2), -1, 1)
    assert w.data[0, 0, :, 1].tolist() == [0, 25, 51, 76, 102]  # round(k * 127 / 5)
