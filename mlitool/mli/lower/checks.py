"""The support checks of each op: named checks whose docstring is the refusal.

A check takes a `Subject` (graph, op, MLI version, layout) and returns None when the op passes,
else the fields its docstring's first paragraph is formatted with: that text is the message.
An op's OpSpec lists its checks in order (mlitool/optable/); support.py runs the common checks
then those, and reports the first refusal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.geometry import transpose_conv_padding
from mlitool.mli.lower.facts import (
    ARGMAX_MAX_ZERO_POINT,
    argmax_rows,
    axis_list,
    const_values,
    fc_rows,
    layer_kind,
    slice_boxes,
    transpose_moves_units_only,
)
from mlitool.mli.target import Target


@dataclass(frozen=True)
class Subject:
    graph: ir.Graph
    op: ir.Op
    target: Target
    layout: str

    def input(self, slot: int | str) -> ir.Tensor:
        """The tensor in input slot `slot` (an index, or a name of the op's OpSpec)."""
        return self.graph.tensors[
            self.op.input(slot) if isinstance(slot, str) else self.op.inputs[slot]
        ]

    @property
    def output(self) -> ir.Tensor:
        return self.graph.tensors[self.op.outputs[0]]


Check = Callable[[Subject], "dict | None"]
TensorCheck = Callable[[Subject, ir.Tensor], "dict | None"]
_OK = None


def message(check: Callable, **fields) -> str:
    """The refusal text of `check`: its docstring's first paragraph, formatted with `fields`."""
    text = check.__doc__.split("\n\n")[0]
    return " ".join(text.split()).format(**fields)


# --- MLI 1.x -------------------------------------------------------------------------------


def kernel_needs_mli2(s: Subject):
    """{kind} has no MLI {version} kernel (MLI 2.x has one)"""
    kind = layer_kind(s.graph, s.op)
    if not s.target.offers(kind) and kind in (
        "group_conv2d",
        "prelu",
        "l2_normalize",
        "argmax",
        "transpose_conv2d",
    ):
        return {"kind": kind, "version": s.target.version}
    return _OK


def dilation_needs_mli2(s: Subject):
    """dilation needs MLI 2.x"""
    o = s.op.options
    dilated = o.get("dilation_h", 1) != 1 or o.get("dilation_w", 1) != 1
    return {} if not s.target.has_dilation and dilated else _OK


def float_needs_mli2(s: Subject):
    """MLI {version} has no float tensors (QUANTIZE/DEQUANTIZE of float data)"""
    tensors = [s.graph.tensors[i] for i in s.op.inputs[:1] + s.op.outputs]
    if not s.target.float_tensors and any(t.dtype == "float32" for t in tensors):
        return {"version": s.target.version}
    return _OK


# --- MAC layers ----------------------------------------------------------------------------


def weights_constant(s: Subject):
    """weights are not constant"""
    return {} if s.input("weights").data is None else _OK


def input_nhwc(s: Subject):
    """input is not 4-D NHWC"""
    return {} if len(s.input("input").shape) != 4 else _OK


def tconv_output_shape_constant(s: Subject):
    """output_shape is not constant (MLI's output tensor has a fixed shape)"""
    return {} if s.input("output_shape").data is None else _OK


def tconv_input_nhwc(s: Subject):
    """input is not 4-D NHWC"""
    return {} if len(s.input("input").shape) != 4 else _OK


def _tconv_axes(s: Subject):
    """(axis name, input size, output size, kernel, stride, pad before, pad after) per axis."""
    x, w, o = s.input("input").shape, s.input("weights").shape, s.op.options
    padding = o.get("padding", "SAME")
    for axis, name, stride in (
        (1, "height", o.get("stride_h", 1)),
        (2, "width", o.get("stride_w", 1)),
    ):
        before, after = transpose_conv_padding(
            padding, x[axis], s.output.shape[axis], w[axis], stride
        )
        yield name, x[axis], s.output.shape[axis], w[axis], stride, before, after


def tconv_stride_within_kernel(s: Subject):
    """stride {stride} along {axis} is larger than the kernel ({kernel}): MLI's transpose conv
    needs stride <= kernel size (TFLite leaves the positions no tap reaches at the bias)"""
    for axis, _, _, kernel, stride, _, _ in _tconv_axes(s):
        if stride > kernel:
            return {"axis": axis, "stride": stride, "kernel": kernel}
    return _OK


def tconv_output_reached(s: Subject):
    """output_shape asks for {out} along {axis}, but the taps reach only {reach} ((input
    {size} - 1) * stride {stride} + kernel {kernel} - padding {before}): MLI's transpose conv
    output is exactly that size (TFLite leaves the {extra} extra position(s) at the bias)"""
    for axis, size, out, kernel, stride, before, after in _tconv_axes(s):
        if after < 0:
            return {
                "axis": axis,
                "out": out,
                "reach": out + after,
                "size": size,
                "stride": stride,
                "kernel": kernel,
                "before": before,
                "extra": -after,
            }
    return _OK


def tconv_padding_within_kernel(s: Subject):
    """output_shape {out} along {axis} cuts {before} position(s) before and {after} after the
    {full} the taps reach (input {size}, stride {stride}, kernel {kernel}): MLI's transpose
    conv takes paddings smaller than the kernel only"""
    for axis, size, out, kernel, stride, before, after in _tconv_axes(s):
        if before >= kernel or after >= kernel:
            return {
                "axis": axis,
                "out": out,
                "before": before,
                "after": after,
                "full": (size - 1) * stride + kernel,
                "size": size,
                "stride": stride,
                "kernel": kernel,
            }
    return _OK


def fc_weights_matrix(s: Subject):
    """weights are not a constant 2-D matrix"""
    w = s.input("weights")
    return {} if w.data is None or len(w.shape) != 2 else _OK


def fc_input_rows(s: Subject):
    """input size is not a multiple of N_in = {n_in}"""
    n_in = s.input("weights").shape[1]
    return {"n_in": n_in} if s.input("input").size % n_in else _OK


def fc_rows_need_hwc(s: Subject):
    """several input rows: lowered as a 1x1 conv2d over an HWC view, which --layout chw cannot
    express; use --layout hwc"""
    return {} if fc_rows(s.graph, s.op) > 1 and s.layout == "chw" else _OK


# --- element-wise, activations, pooling ----------------------------------------------------


def _broadcast(s: Subject) -> tuple | None:
    """The broadcast shape of an element-wise op's operands when one must be expanded (None:
    equal shapes or a scalar, which MLI takes as they are)."""
    a, b = s.input("input"), s.input("input2")
    if a.shape == b.shape or a.size == 1 or b.size == 1:
        return None
    return tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))


def one_operand_variable(s: Subject):
    """both operands are constant"""
    return {} if s.input("input").data is not None and s.input("input2").data is not None else _OK


def operands_broadcast(s: Subject):
    """shapes {a} and {b} do not broadcast"""
    try:
        _broadcast(s)
    except ValueError:
        return {"a": list(s.input("input").shape), "b": list(s.input("input2").shape)}
    return _OK


def _broadcast_activation(s: Subject) -> ir.Tensor | None:
    """The activation operand that broadcasts to the output's shape (a constant one is
    materialized at the output's shape instead)."""
    full = _broadcast(s)
    return next(
        (
            t
            for t in (s.input("input"), s.input("input2"))
            if full is not None and t.data is None and tuple(t.shape) != full
        ),
        None,
    )


def broadcast_needs_mli2(s: Subject):
    """activation {name!r} {shape} broadcasts to {full}: MLI's element-wise kernels take equal
    shapes or a scalar, so mlitool calls the kernel once per slice, through views whose data
    pointers the runtime moves; that is done for MLI 2.x only (convert with --mli 2.0)"""
    t = _broadcast_activation(s)
    if t is None or s.target.strided_views:
        return _OK
    return {"name": t.name, "shape": list(t.shape), "full": list(_broadcast(s))}


def broadcast_against_activation(s: Subject):
    """activation {name!r} {shape} broadcasts against the constant {const!r}: the kernel is
    called once per slice of both operands, and the runtime moves views of activations only

    A constant that broadcasts is materialized at the output's shape; an activation that
    broadcasts is taken slice by slice (`mlitool.mli.lower.broadcast`); against a constant, on
    MLI 2.x with int8 or float activations, the op runs as fallback C (`eltwise_fallback`)."""
    t = _broadcast_activation(s)
    other = s.input("input2") if t is s.input("input") else s.input("input")
    if t is None or other.data is None or other.size == 1 or eltwise_fallback(s):
        return _OK
    return {"name": t.name, "shape": list(t.shape), "const": other.name}


def eltwise_fallback(s: Subject) -> bool:
    """mlitool's fallback C (binary8) takes any broadcast: MLI 2.x, int8 or float activations."""
    acts = [s.graph.tensors[i] for i in (*s.op.inputs[:2], *s.op.outputs)]
    ok = all(t.dtype in ("int8", "float32") for t in acts if t.data is None)
    return ok and s.target.offers("fallback")


def output_broadcast_shape(s: Subject):
    """output shape {out} is not the broadcast shape {full}"""
    full = _broadcast(s)
    if full is not None and tuple(s.output.shape) != full:
        return {"out": list(s.output.shape), "full": list(full)}
    return _OK


def softmax_beta_one(s: Subject):
    """softmax beta {beta} != 1"""
    beta = s.op.options.get("beta", 1.0)
    return {"beta": s.op.options.get("beta")} if float(beta) != 1.0 else _OK


def softmax_one_axis_on_mli1(s: Subject):
    """MLI {version} softmax works on the whole tensor, not along an axis"""
    if not s.target.softmax_axis and sum(d > 1 for d in s.input(0).shape) > 1:
        return {"version": s.target.version}
    return _OK


def prelu_slope_one_axis(s: Subject):
    """PReLU slope is not constant or varies along more than one axis"""
    alpha = s.input("alpha")
    return {} if alpha.data is None or sum(d > 1 for d in alpha.shape) > 1 else _OK


# --- data movement -------------------------------------------------------------------------


def argmax_axis_constant(s: Subject):
    """axis is not constant"""
    axes = axis_list(s.graph, s.op)
    return {} if axes is None or len(axes) != 1 else _OK


def argmax_last_axis(s: Subject):
    """ARG_MAX is lowered over the last non-unit axis only (the dimensions after the axis must
    be 1)"""
    return {} if argmax_rows(s.graph, s.op)[0] is None else _OK


def argmax_row_starts_fit(s: Subject):
    """ARG_MAX over {rows} rows of {size}: MLI reports offsets from the tensor start, and row
    starts up to {last} do not fit the int16 zero points that make them row-relative (at most
    {limit})"""
    rows, size = argmax_rows(s.graph, s.op)
    if (rows - 1) * size > ARGMAX_MAX_ZERO_POINT:
        return {
            "rows": rows,
            "size": size,
            "last": (rows - 1) * size,
            "limit": ARGMAX_MAX_ZERO_POINT,
        }
    return _OK


def transpose_keeps_batch(s: Subject):
    """permutation is not constant or moves the batch dimension"""
    perm = axis_list(s.graph, s.op)
    if perm is not None and transpose_moves_units_only(s.graph, s.op):
        return _OK  # a reshape
    return {} if perm is None or (len(s.input("input").shape) >= 2 and perm[0] != 0) else _OK


def concat_inputs_variable(s: Subject):
    """constant concatenation inputs"""
    return {} if any(s.graph.tensors[i].data is not None for i in s.op.inputs) else _OK


def concat_keeps_batch(s: Subject):
    """concatenation along the batch dimension"""
    rank = len(s.output.shape)
    return {} if rank >= 2 and int(s.op.options.get("axis", 0)) % rank == 0 else _OK


def slice_expressible(s: Subject):
    """{reason}

    The reason facts.slice_boxes / views.py give: a parameter that is not constant, a split
    that is not into whole parts, a strided slice MLI cannot express."""
    try:
        slice_boxes(s.graph, s.op)
    except UnsupportedError as exc:
        return {"reason": exc.message}
    return _OK


def slice_keeps_batch(s: Subject):
    """slicing along the batch dimension

    A leading dimension other than 1 of a view op is rows (support.batch_one), kept in the MLI
    shape: slicing along it is slicing rows."""
    shape = s.input("input").shape
    if len(shape) >= 2 and shape[0] != 1 and s.layout == "hwc" and len(shape) <= 4:
        return _OK
    _, boxes = slice_boxes(s.graph, s.op)
    return {} if any(b.begin[0] != 0 for b in boxes if len(b.begin) >= 2) else _OK


def pad_spatial(s: Subject):
    """PAD is lowered only for padding of H, W (and C on MLI 2.x) by 0..255 of a 4-D tensor,
    or (MLI 2.x) of T and C of a 3-D one"""
    pads, rank = const_values(s.graph, s.op.input("paddings")), len(s.input("input").shape)
    # [1, T, C] is the MLI tensor [T, C], which MLI 2.x's mli_mov pads in any dimension
    ranked = rank == 4 or (rank == 3 and s.target.padding_via_mov)
    if pads is None or not ranked or np.any(pads[0] != 0) or np.any((pads < 0) | (pads > 255)):
        return {}
    return _OK


def pad_channels_need_mli2(s: Subject):
    """padding the channel axis needs MLI 2.x (its mli_mov pads every dimension; MLI 1.x pads
    H and W only)"""
    pads = const_values(s.graph, s.op.input("paddings"))
    return {} if not s.target.padding_via_mov and np.any(pads[-1] != 0) else _OK


def _pad_value(s: Subject) -> np.ndarray | None:
    return const_values(s.graph, s.op.input("constant_values"))


def pad_value_constant(s: Subject):
    """PADV2 pad value is not one constant"""
    value = _pad_value(s)
    return {} if value is None or value.size != 1 else _OK


def float_pad_zero(s: Subject):
    """PADV2 of float data with a non-zero pad value (MLI pads with zeros)"""
    value = _pad_value(s)
    return {} if value.dtype.kind == "f" and float(value.reshape(-1)[0]) != 0.0 else _OK
