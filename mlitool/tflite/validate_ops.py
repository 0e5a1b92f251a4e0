"""The per-op checks of the graph validation pass (validate.py runs them): arity, options,
shapes, element types and rescales of one op, each a named function yielding `Problem`s. Which
apply to an op is its OpSpec's (slots, options table, types, shape check). The shape checks of
the ops with weights or a window are in validate_weighted.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from mlitool import ir
from mlitool.ops import spec as opspec
from mlitool.ops.spec import CONVERT, VARIADIC, WIDEN


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
    """The output has the input's shape; an op with an `alpha` slot (PRELU): the broadcast of
    the input's and alpha's shapes, as TFLite's Prepare computes it."""
    x, out = g.slot(op, "input"), g.tensors[op.outputs[0]]
    want, why = tuple(x.shape), "the input's is"
    if opspec.spec(op.type).has_slot("alpha"):
        alpha = g.slot(op, "alpha")
        try:
            want = tuple(np.broadcast_shapes(x.shape, alpha.shape))
        except ValueError:
            yield Problem(
                f"alpha {list(alpha.shape)} does not broadcast to {list(x.shape)}", op, alpha
            )
            return
        why = "the op computes" if want != tuple(x.shape) else why
    if tuple(out.shape) != want:
        yield Problem(
            f"has shape {list(out.shape)}, but {why} {list(want)}", op, out, computed=want
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


def reduce_shapes(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    """As TFLite's reductions (MEAN, SUM, REDUCE_MAX, REDUCE_MIN): every axis within the input's
    rank; the output's shape is the input's without the reduced axes (kept as 1 with
    keep_dims). Skipped while the axes are not a constant (TFLite computes the shape at run
    time)."""
    x, axes_t, out = g.slot(op, "input"), g.slot(op, "axis"), g.tensors[op.outputs[0]]
    if axes_t is None or not axes_t.is_constant or axes_t.data.dtype.kind not in "iu":
        return
    rank = len(x.shape)
    axes = [int(a) for a in np.asarray(axes_t.data).reshape(-1)]
    bad = [a for a in axes if not -rank <= a < rank]
    if bad:
        yield Problem(f"axis {bad[0]} is outside the rank {rank} of the input", op, axes_t)
        return
    reduced = {a % rank for a in axes}
    keep = bool(op.options.get("keep_dims", False))
    want = tuple(
        1 if k in reduced else d for k, d in enumerate(x.shape) if keep or k not in reduced
    )
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
        # a MAC op's integer weights too: TFLite's kernels read their scales (per channel)
        weights = [g.slot(op, w) for w in spec.weights if spec.mac and spec.has_slot(w)]
        for t in data + outs + [w for w in weights if w is not None]:
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
    elif spec.kind == "eltwise_mul" and len(ins) == 2:  # x1 * x2: one factor, s1 * s2 / s_out
        factors = [np.float64(ins[0].quant.scale[0]) * ins[1].quant.scale]
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
