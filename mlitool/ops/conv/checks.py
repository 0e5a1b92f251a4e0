"""Support checks of the MAC ops (each docstring is the refusal): constant weights, NHWC inputs,
TRANSPOSE_CONV's geometry, FULLY_CONNECTED's rows, dilation on MLI 1.x."""

from __future__ import annotations

from mlitool.geometry import transpose_conv_padding
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.lower.facts import (
    fc_rows,
)

# --- MLI 1.x -------------------------------------------------------------------------------


def dilation_needs_mli2(s: Subject):
    """dilation needs MLI 2.x"""
    o = s.op.options
    dilated = o.get("dilation_h", 1) != 1 or o.get("dilation_w", 1) != 1
    return {} if not s.target.has_dilation and dilated else _OK


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


# --- data movement -------------------------------------------------------------------------
