"""The per-op checks of the graph validation pass (validate.py runs them): arity, options,
shapes, element types and rescales of one op, each a named function yielding `Problem`s. Which
apply to an op is its OpSpec's (slots, options table, types, shape check)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from mlitool import ir, opspec
from mlitool import lstm_slots as lstm
from mlitool.opspec import CONVERT, VARIADIC, WIDEN


@dataclass(frozen=True)
class Problem:
    text: str
    op: ir.Op | None = None
    tensor: ir.Tensor | None = None
    unsupported: bool = False  # valid for TFLite (shapes known at run time only)
    # Only the stored output shape is wrong: the shape the op computes (TFLite recomputes it).
    computed: tuple[int, ...] | None = None

    def __str__(self) -> str:
        where = [self.op.label] if self.op is not None else []
        if self.tensor is not None:
            where.append(f"tensor {self.tensor.index} {self.tensor.name!r}")
        return f"{', '.join(where)}: {self.text}" if where else self.text


_QUANTIZED_TYPES = {"int8", "uint8", "int16"}
_BIAS_TYPES = {"int8": ("int32",), "uint8": ("int32",), "int16": ("int32", "int64")}

OpCheck = Callable[[ir.Graph, ir.Op], Iterator[Problem]]


def arity(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    lo, hi, required, out_lo, out_hi = opspec.spec(op.type).arity
    if not lo <= len(op.inputs) <= hi:
        yield Problem(f"has {len(op.inputs)} inputs, expected {_span(lo, hi)}", op)
    elif any(i < 0 for i in op.inputs[:required]):
        yield Problem(f"omits a required input (the first {required} are required)", op)
    if not out_lo <= len(op.outputs) <= out_hi:
        yield Problem(f"has {len(op.outputs)} outputs, expected {_span(out_lo, out_hi)}", op)


def options_table(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    spec = opspec.spec(op.type)
    want = spec.options
    if op.options_table is None:
        if spec.options_required:
            yield Problem(f"has no options table (expected {want})", op)
    elif want is None or op.options_table != want:
        yield Problem(f"has options of type {op.options_table}, expected {want or 'none'}", op)


def window_options(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    keys = ("stride_h", "stride_w", "dilation_h", "dilation_w", "filter_h", "filter_w")
    for key in keys:
        if key in op.options and int(op.options[key]) < 1:
            # TFLite checks strides and dilations, not pooling filters (it runs those)
            yield Problem(
                f"option {key} is {op.options[key]}, must be >= 1",
                op,
                unsupported=key.startswith("filter"),
            )
            return
    if op.options.get("padding", "VALID") not in ("SAME", "VALID"):
        yield Problem(f"padding {op.options['padding']!r} is not SAME or VALID", op)


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


def eltwise_shapes(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    a, b, out = g.slot(op, "input"), g.slot(op, "input2"), g.tensors[op.outputs[0]]
    try:
        want = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        yield Problem(f"cannot broadcast {list(a.shape)} with {list(b.shape)}", op, b)
        return
    if tuple(out.shape) != want:
        yield Problem(
            f"has shape {list(out.shape)}, but the op computes {list(want)}", op, out, computed=want
        )


def same_shape(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    x, out = g.slot(op, "input"), g.tensors[op.outputs[0]]
    if tuple(out.shape) != tuple(x.shape):
        yield Problem(
            f"has shape {list(out.shape)}, but the input's is {list(x.shape)}",
            op,
            out,
            computed=tuple(x.shape),
        )
        return
    if opspec.spec(op.type).has_slot("alpha"):
        alpha = g.slot(op, "alpha")
        try:
            np.broadcast_shapes(x.shape, alpha.shape)
        except ValueError:
            yield Problem(
                f"alpha {list(alpha.shape)} does not broadcast to {list(x.shape)}", op, alpha
            )


def same_size(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    x, out = g.slot(op, "input"), g.tensors[op.outputs[0]]
    if out.size != x.size:
        yield Problem(f"has {out.size} elements, the input {x.size}", op, out)


def concat_shapes(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    """As TFLite's Prepare: the axis within input 0's rank, every input as input 0 but along the
    axis; the output's shape is computed from them."""
    out = g.tensors[op.outputs[0]]
    parts = [g.tensors[i] for i in op.inputs]
    first = parts[0]
    rank = len(first.shape)
    axis = int(op.options.get("axis", 0))
    if not -rank <= axis < rank:
        yield Problem(f"axis {axis} is outside the rank {rank} of input 0", op, first)
        return
    axis %= rank
    for t in parts:
        if len(t.shape) != rank or any(
            d != e for k, (d, e) in enumerate(zip(t.shape, first.shape)) if k != axis
        ):
            yield Problem(
                f"shape {list(t.shape)} does not fit {list(first.shape)} (input 0) "
                f"along axis {axis}",
                op,
                t,
            )
            return
    want = first.shape[:axis] + (sum(t.shape[axis] for t in parts),) + first.shape[axis + 1 :]
    if tuple(out.shape) != want:
        yield Problem(
            f"has shape {list(out.shape)}, but the op computes {list(want)}", op, out, computed=want
        )


def activation_types(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    """The data inputs and the outputs share one element type (but for type conversions), and
    integer activations of arithmetic ops carry quantization."""
    spec = opspec.spec(op.type)
    x = g.tensors[op.inputs[spec.data_slot]]
    data = [x] + [g.tensors[i] for i in op.inputs[1:] if spec.all_data]
    outs = [g.tensors[i] for i in op.outputs]
    if spec.types != CONVERT:
        for t in data[1:] + outs:
            # TFLite (Micro) SOFTMAX and LOGISTIC also map int8 inputs to int16 outputs.
            widened = spec.types == WIDEN and (x.dtype, t.dtype) == ("int8", "int16")
            if t.dtype != x.dtype and not widened:
                yield Problem(f"has type {t.dtype}, the op's input {x.dtype}", op, t)
                return
    if spec.quantized:
        for t in data + outs:
            if t.dtype in _QUANTIZED_TYPES and t.quant is None:
                yield Problem(f"is {t.dtype} without quantization parameters", op, t)
                return


def rescale_range(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    """The real factor between quantized inputs and outputs (times the weight scale for MAC
    ops) is one TFLite's fixed-point multipliers hold: below 2^30 (TFLite runs larger ones with
    the multiplier saturated at about 2^30, which mlitool does not reproduce: unsupported; tiny
    factors, as in pruned channels, only round to zero)."""
    outs = [g.tensors[i] for i in op.outputs if _quantized(g.tensors[i])]
    ins = [g.tensors[i] for i in op.inputs if i >= 0 and _quantized(g.tensors[i])]
    spec = opspec.spec(op.type)
    if not outs or not ins or spec.index_outputs:
        return
    if spec.mac:
        if len(ins) < 2 or ins[0].index != op.inputs[0] or ins[1].index != op.inputs[1]:
            return
        factors = [ins[0].quant.scale[0] * ins[1].quant.scale]
    else:
        factors = [t.quant.scale for t in ins]
    for out in outs:
        for f in factors:
            with np.errstate(all="ignore"):  # bad scales are reported on their own
                ratio = f / out.quant.scale[0]
            bad = ratio[~(ratio < 2.0**30)]
            if bad.size:
                yield Problem(
                    f"rescale factor {float(bad[0]):.6g} from its inputs is 2^30 or "
                    "more, where TFLite's fixed-point multipliers saturate",
                    op,
                    out,
                    unsupported=True,
                )
                return


def _quantized(t: ir.Tensor) -> bool:
    return t.quant is not None and t.dtype in _QUANTIZED_TYPES


def _span(lo: int, hi: int) -> str:
    if lo == hi:
        return str(lo)
    return f"at least {lo}" if hi >= VARIADIC else f"{lo} to {hi}"
