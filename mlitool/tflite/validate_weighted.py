"""The shape checks of the ops with weights or a window (an OpSpec's `shapes`, run by the
graph validation pass): convolutions and pools, FULLY_CONNECTED, TRANSPOSE_CONV and the LSTM, and
the bias they share. The checks of one op's arity, options, types and rescales, and the shape
checks of the other ops, are in validate_ops.py."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from mlitool import ir
from mlitool import lstm_slots as lstm
from mlitool.ops import spec as opspec
from mlitool.tflite.validate_ops import Problem

_BIAS_TYPES = {"int8": ("int32",), "uint8": ("int32",), "int16": ("int32", "int64")}


def window_shapes(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    """conv / depthwise / pooling: ranks, channels, weights, bias and the output's size."""
    from mlitool.geometry import tflite_padding

    x, out = g.slot(op, "input"), g.tensors[op.outputs[0]]
    w = g.slot(op, "weights") if opspec.spec(op.type).has_slot("weights") else None
    for t in (x, out) + ((w,) if w is not None else ()):
        if len(t.shape) != 4:
            yield Problem(f"has shape {list(t.shape)}, expected rank 4", op, t)
            return
    o = op.options
    if w is None:
        kh, kw, channels = o.get("filter_h", 1), o.get("filter_w", 1), x.shape[3]
    elif op.type == "CONV_2D":
        kh, kw, channels = w.shape[1], w.shape[2], w.shape[0]
        if w.shape[3] < 1 or x.shape[3] % w.shape[3]:
            yield Problem(
                f"weights have {w.shape[3]} input channels, the input {x.shape[3]}", op, w
            )
            return
    else:
        kh, kw, channels = w.shape[1], w.shape[2], w.shape[3]
        if w.shape[0] != 1 or x.shape[3] < 1 or channels % x.shape[3]:
            yield Problem(
                f"depthwise weights {list(w.shape)} do not fit an input of {x.shape[3]} channels",
                op,
                w,
            )
            return
        mult = o.get("depth_multiplier", 0)
        if mult and mult * x.shape[3] != channels:
            yield Problem(
                f"depth_multiplier {mult} × {x.shape[3]} input channels is not the "
                f"weights' {channels}",
                op,
                w,
            )
            return
    if min(kh, kw) < 1:
        yield Problem(f"window {kh}x{kw} is empty", op, w)
        return
    oh, _, _ = tflite_padding(
        o.get("padding", "VALID"), x.shape[1], kh, o.get("stride_h", 1), o.get("dilation_h", 1)
    )
    ow, _, _ = tflite_padding(
        o.get("padding", "VALID"), x.shape[2], kw, o.get("stride_w", 1), o.get("dilation_w", 1)
    )
    want = (x.shape[0], oh, ow, channels)
    if min(oh, ow) < 1 or tuple(out.shape) != want:
        yield Problem(
            f"has shape {list(out.shape)}, but the op computes {list(want)}",
            op,
            out,
            computed=want if min(oh, ow) >= 1 else None,
        )
    yield from _bias(g, op, channels)


def fc_shapes(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    x, w, out = g.slot(op, "input"), g.slot(op, "weights"), g.tensors[op.outputs[0]]
    keep_dims = bool(op.options.get("keep_num_dims", False))
    if len(w.shape) != 2 or w.shape[1] < 1 or (keep_dims and x.shape[-1:] != w.shape[1:]):
        yield Problem(
            f"weights {list(w.shape)} do not fit an input of shape {list(x.shape)}", op, w
        )
        return
    if x.size % w.shape[1]:  # TFLite runs floor(size / columns) rows of the input
        yield Problem(
            f"weights {list(w.shape)} do not fit an input of shape {list(x.shape)} "
            f"(TFLite reads {x.size // w.shape[1] * w.shape[1]} of its {x.size} "
            "elements; mlitool takes whole rows)",
            op,
            w,
            unsupported=True,
        )
        return
    rows = x.size // w.shape[1]
    if not out.shape or out.shape[-1] != w.shape[0] or out.size != rows * w.shape[0]:
        want = x.shape[:-1] + (w.shape[0],) if keep_dims else (rows, w.shape[0])
        yield Problem(
            f"has shape {list(out.shape)}, but the op computes {rows} row(s) of {w.shape[0]}",
            op,
            out,
            computed=want,
        )
    yield from _bias(g, op, w.shape[0])


def transpose_conv_shapes(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    """TRANSPOSE_CONV: output_shape, weights (O, KH, KW, I), input [N, H, W, I], bias [O]."""
    shape_t, w, x = (g.slot(op, k) for k in ("output_shape", "weights", "input"))
    out = g.tensors[op.outputs[0]]
    for t in (w, x, out):
        if len(t.shape) != 4:
            yield Problem(f"has shape {list(t.shape)}, expected rank 4", op, t)
            return
    if min(w.shape[1:3]) < 1 or w.shape[3] != x.shape[3]:
        yield Problem(
            f"weights {list(w.shape)} do not fit an input of {x.shape[3]} channels", op, w
        )
        return
    if shape_t.data is not None and [int(v) for v in np.asarray(shape_t.data).reshape(-1)] != list(
        out.shape
    ):
        yield Problem(
            f"output_shape {np.asarray(shape_t.data).reshape(-1).tolist()} is not "
            f"the output's shape {list(out.shape)}",
            op,
            out,
        )
        return
    if out.shape[0] != x.shape[0] or out.shape[3] != w.shape[0]:
        yield Problem(
            f"has shape {list(out.shape)}, but the op computes batch {x.shape[0]} "
            f"and {w.shape[0]} channels",
            op,
            out,
        )
        return
    for axis, k in (("h", 1), ("w", 2)):
        stride = int(op.options.get(f"stride_{axis}", 1))
        if stride > out.shape[k] + w.shape[k]:  # TFLite runs it; the executors span every tap
            yield Problem(
                f"option stride_{axis} is {stride}, beyond the output and the kernel "
                f"({out.shape[k]} + {w.shape[k]})",
                op,
                unsupported=True,
            )
            return
    yield from _bias(g, op, w.shape[0])


def lstm_shapes(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    """UNIDIRECTIONAL_SEQUENCE_LSTM: the required inputs present, the input gate's three all or
    none, input [B, T, N] (time-major [T, B, N]), gate weights [M, N] and [M, P], biases [M],
    states of B·P and B·M elements, output [B, T, P] (P = M without projection)."""

    def t(slot: int) -> ir.Tensor | None:
        return (
            g.tensors[op.inputs[slot]] if slot < len(op.inputs) and op.inputs[slot] >= 0 else None
        )

    missing = [k for k in lstm.REQUIRED if t(k) is None]
    if missing:
        yield Problem(f"omits required input(s) {missing}", op)
        return
    if len({t(k) is None for k in lstm.INPUT_GATE}) > 1:
        yield Problem(
            "has only some of the input gate's tensors (inputs "
            f"{', '.join(map(str, lstm.INPUT_GATE))})",
            op,
        )
        return
    x, out = t(0), g.tensors[op.outputs[0]]
    if len(x.shape) != 3:
        yield Problem(f"has shape {list(x.shape)}, expected rank 3", op, x)
        return
    time_major = bool(op.options.get("time_major", False))
    steps, batch, features = x.shape if time_major else (x.shape[1], x.shape[0], x.shape[2])
    w = t(lstm.INPUT_WEIGHTS[3])  # the output gate's: never omitted
    if len(w.shape) != 2:
        yield Problem(
            f"input {lstm.INPUT_WEIGHTS[3]} has shape {list(w.shape)}, expected rank 2", op, w
        )
        return
    cells = w.shape[0]
    proj = t(lstm.PROJECTION[0])
    outputs = proj.shape[0] if proj is not None and len(proj.shape) == 2 else cells
    want = {k: (cells, features) for k in lstm.INPUT_WEIGHTS}
    want.update({k: (cells, outputs) for k in lstm.RECURRENT_WEIGHTS})
    want.update({k: (cells,) for k in lstm.PEEPHOLE + lstm.BIASES})
    if proj is not None:
        want[lstm.PROJECTION[0]] = (outputs, cells)
    for k, shape in sorted(want.items()):
        if t(k) is not None and tuple(t(k).shape) != shape:
            yield Problem(
                f"input {k} has shape {list(t(k).shape)}, expected {list(shape)}", op, t(k)
            )
            return
    for k, size in ((lstm.OUTPUT_STATE, batch * outputs), (lstm.CELL_STATE, batch * cells)):
        if t(k).size != size:
            yield Problem(f"state input {k} has {t(k).size} elements, expected {size}", op, t(k))
            return
    want_out = (steps, batch, outputs) if time_major else (batch, steps, outputs)
    if tuple(out.shape) != want_out:
        yield Problem(
            f"has shape {list(out.shape)}, but the op computes {list(want_out)}",
            op,
            out,
            computed=want_out,
        )


def _bias(g: ir.Graph, op: ir.Op, channels: int) -> Iterator[Problem]:
    b = g.slot(op, "bias") if opspec.spec(op.type).has_slot("bias") else None  # not pooling
    if b is not None:
        want = _BIAS_TYPES.get(g.slot(op, "input").dtype, ("float32",))
        if b.size != channels:
            yield Problem(f"bias of shape {list(b.shape)}, expected [{channels}]", op, b)
        elif b.dtype not in want:
            yield Problem(f"bias of type {b.dtype}, expected {' or '.join(want)}", op, b)
        elif len(b.shape) != 1:  # TFLite counts only the bias's elements
            yield Problem(
                f"bias of shape {list(b.shape)}: mlitool takes a bias of shape [{channels}]",
                op,
                b,
                unsupported=True,
            )
