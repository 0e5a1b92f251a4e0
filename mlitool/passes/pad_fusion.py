"""PAD fusion: a PAD whose only reader is a convolution becomes that convolution's padding."""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool import ir
from mlitool.geometry import tflite_padding
from mlitool.passes.context import PassContext

# Options a fused convolution carries (read by mac.py):
EXPLICIT_PADDING = "explicit_padding"  # (top, bottom, left, right): replaces TFLite's padding
FUSED_PAD = "fused_pad"  # the label of the PAD op taken in, for the layer's note


def fuse_pad_into_conv(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """PAD / PADV2 -> CONV_2D / DEPTHWISE_CONV_2D becomes the convolution alone, reading the PAD's
    input, with the total padding (the PAD's plus the convolution's own SAME padding) in its
    `explicit_padding` option; the PAD op is dropped.

    Why: MLI convolutions pad with real zero, which is what PAD fills, so the padded copy (and
    its RAM) is not needed. Only where the target's convolutions take such padding
    (`fuses_pad_into_conv`), the PAD's output is read by that convolution alone (not a model
    output), pads H and W only, fills real zero, and each side stays smaller than the kernel's
    extent (MLI's limit)."""
    if not ctx.target.fuses_pad_into_conv:
        return graph
    consumers = graph.consumers()
    fused: dict[int, ir.Op] = {}  # conv index -> the rewritten conv
    dropped: set[int] = set()  # PAD indices
    for op in graph.ops:
        if op.type not in ("PAD", "PADV2"):
            continue
        conv, total = _fusion(graph, op, consumers)
        if conv is None:
            continue
        dropped.add(op.index)
        fused[conv.index] = dataclasses.replace(
            conv,
            inputs=(op.input("input"), *conv.inputs[1:]),
            options={**conv.options, EXPLICIT_PADDING: tuple(total), FUSED_PAD: op.label},
        )
    if not fused:
        return graph
    ops = [fused.get(op.index, op) for op in graph.ops if op.index not in dropped]
    return dataclasses.replace(graph, ops=ops)


def _fill_is_zero(graph: ir.Graph, pad: ir.Op) -> bool:
    """The PAD fills real zero: PAD always; PADV2 with no value, a float value, or the int
    value that is its input's zero point."""
    if pad.type != "PADV2" or pad.input("constant_values") < 0:
        return True
    value = np.asarray(graph.slot(pad, "constant_values").data).reshape(-1)[0]
    if value.dtype.kind not in "iu":
        return True
    quant = graph.slot(pad, "input").quant
    return quant is not None and int(value) == int(quant.zero_point[0])


def _fusion(graph: ir.Graph, pad: ir.Op, consumers) -> tuple[ir.Op | None, list[int]]:
    """(conv, [top, bottom, left, right]) when `pad` can be taken into its reader, else
    (None, [])."""
    out = pad.outputs[0]
    readers = consumers.get(out, [])
    pads = np.asarray(graph.slot(pad, "paddings").data, dtype=np.int64)
    if out in graph.outputs or len(readers) != 1 or len(pads) != 4 or pads[3].any():
        return None, []
    conv = readers[0]
    if (
        conv.type not in ("CONV_2D", "DEPTHWISE_CONV_2D")
        or conv.input("input") != out
        or out in conv.inputs[1:]
        or not _fill_is_zero(graph, pad)
    ):
        return None, []
    o, wt = conv.options, graph.slot(conv, "weights")
    padded = graph.tensors[out].shape
    total: list[int] = []
    for axis, (k, s, d) in (
        (1, (wt.shape[1], o.get("stride_h", 1), o.get("dilation_h", 1))),
        (2, (wt.shape[2], o.get("stride_w", 1), o.get("dilation_w", 1))),
    ):
        _, before, after = tflite_padding(o.get("padding", "VALID"), padded[axis], k, s, d)
        pair = [int(pads[axis, 0]) + before, int(pads[axis, 1]) + after]
        if max(pair) >= (k - 1) * d + 1:  # MLI: padding smaller than the kernel's extent
            return None, []
        total += pair
    return conv, total
