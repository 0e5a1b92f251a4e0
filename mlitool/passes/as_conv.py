"""Ops MLI runs as an ordinary conv2d: DEPTHWISE_CONV_2D over one input channel and
FULLY_CONNECTED over several rows become CONV_2D ops with their weights in OHWI."""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool import ir
from mlitool.passes.context import PassContext
from mlitool.passes.pad_fusion import EXPLICIT_PADDING

# Options a rewritten op carries (read by mac.py):
AS_CONV = "as_conv"  # why the model's op runs as conv2d, for the layer's notes
HWC_ROWS = (
    "hwc_rows"  # FC rows: the conv reads / writes the model's [rows, N] tensors as (rows, 1, N)
)


def fc_rows(graph: ir.Graph, op: ir.Op) -> int:
    """How many rows of N_in elements a FULLY_CONNECTED multiplies (TFLite flattens its input
    to [rows, N_in])."""
    w = graph.slot(op, "weights")
    return max(graph.slot(op, "input").size // max(int(w.shape[-1]), 1), 1)


def depthwise_as_conv(graph: ir.Graph, op: ir.Op) -> bool:
    """A DEPTHWISE_CONV_2D over one input channel with several outputs: an ordinary conv."""
    return op.type == "DEPTHWISE_CONV_2D" and (
        graph.slot(op, "input").shape[-1] == 1 and graph.slot(op, "weights").shape[-1] > 1
    )


def fc_as_conv(graph: ir.Graph, op: ir.Op) -> bool:
    """A FULLY_CONNECTED over several rows (mli_krn_fully_connected takes one)."""
    return op.type == "FULLY_CONNECTED" and fc_rows(graph, op) > 1


def depthwise_one_channel_as_conv(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """DEPTHWISE_CONV_2D over one input channel (weights (1, Kh, Kw, Cout)) becomes a CONV_2D
    with weights (Cout, Kh, Kw, 1), per-axis quantization moved from axis 3 to 0; same options.

    Why: with one input channel every output channel is a convolution of that channel, which
    conv2d computes (MLI's depthwise kernel wants as many outputs as inputs, and group
    conv2d is MLI 2.x only)."""

    def rewrite(op: ir.Op, wt: ir.Tensor) -> tuple[ir.Op, ir.Tensor]:
        quant = wt.quant
        if quant is not None and quant.axis is not None:  # (1, Kh, Kw, Cout) -> (Cout, Kh, Kw, 1)
            quant = dataclasses.replace(quant, axis=(3, 1, 2, 0).index(quant.axis))
        new_w = _weights(wt, np.asarray(wt.data).transpose(3, 1, 2, 0), quant)
        note = "depthwise convolution of a single input channel lowered as conv2d"
        return _conv(op, op.options, note), new_w

    return _rewrite(graph, depthwise_as_conv, rewrite)


def fc_rows_as_conv(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """FULLY_CONNECTED over several rows (weights (M, N)) becomes a 1x1 CONV_2D with weights
    (M, 1, 1, N), stride 1, no padding, the same fused activation, and `hwc_rows` = rows: its
    input and output stay the model's tensors, which lowering shows to the kernel as
    (rows, 1, N) HWC maps (views).

    Why: mli_krn_fully_connected multiplies one row; a 1x1 conv2d over rows x 1 pixels makes
    the same products and sums per row in one call."""

    def rewrite(op: ir.Op, wt: ir.Tensor) -> tuple[ir.Op, ir.Tensor]:
        rows, (m, n) = fc_rows(graph, op), wt.shape
        options = {
            "padding": "VALID",
            "stride_h": 1,
            "stride_w": 1,
            "dilation_h": 1,
            "dilation_w": 1,
            "fused_activation": op.options.get("fused_activation", "NONE"),
            EXPLICIT_PADDING: (0, 0, 0, 0),  # the [rows, N] input has no H, W to pad
            HWC_ROWS: rows,
        }
        note = (
            f"fully connected over {rows} rows lowered as a 1x1 conv2d over a "
            f"({rows}, 1, {n}) view (mli_krn_fully_connected takes one row)"
        )
        new_w = _weights(wt, np.asarray(wt.data).reshape(m, 1, 1, n), wt.quant)
        return _conv(op, options, note), new_w

    return _rewrite(graph, fc_as_conv, rewrite)


def _conv(op: ir.Op, options: dict, note: str) -> ir.Op:
    return dataclasses.replace(
        op,
        type="CONV_2D",
        options={**options, AS_CONV: note},
        options_table="Conv2DOptions",
        origin=op.origin or op,
    )


def _weights(wt: ir.Tensor, data: np.ndarray, quant: ir.Quant | None) -> ir.Tensor:
    data = np.ascontiguousarray(data)
    return dataclasses.replace(wt, shape=data.shape, data=data, quant=quant, shape_signature=None)


def _rewrite(graph: ir.Graph, applies, rewrite) -> ir.Graph:
    """Every op `applies(graph, op)` selects, replaced by `rewrite(op, weights)`'s op reading its
    new weights tensor. The weights replace the model's at the same index (the MLI tensor names
    that index as its source) unless an op left as it is reads them too: then they are a new
    tensor."""
    chosen = {op.index for op in graph.ops if applies(graph, op)}
    if not chosen:
        return graph
    readers = graph.consumers()
    tensors, ops = list(graph.tensors), []
    for op in graph.ops:
        if op.index not in chosen:
            ops.append(op)
            continue
        w_idx = op.input("weights")
        new_op, new_w = rewrite(op, graph.tensors[w_idx])
        if any(r.index not in chosen for r in readers[w_idx]):
            new_w = dataclasses.replace(new_w, index=len(tensors))
            tensors.append(new_w)
            new_op = dataclasses.replace(
                new_op, inputs=tuple(new_w.index if i == w_idx else i for i in new_op.inputs)
            )
        else:
            tensors[w_idx] = new_w
        ops.append(new_op)
    return dataclasses.replace(graph, ops=ops, tensors=tensors)
