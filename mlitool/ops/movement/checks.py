"""Support checks of the data-movement ops (each docstring is the refusal): ARG_MAX's axis, the
transposes, concatenations, slices and paddings MLI can express."""

from __future__ import annotations

import numpy as np

from mlitool.errors import UnsupportedError
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.lower.facts import (
    ARGMAX_MAX_ZERO_POINT,
    argmax_rows,
    axis_list,
    concat_into_rows,
    const_values,
    slice_boxes,
    transpose_into_rows,
    transpose_moves_units_only,
)

# --- MLI 1.x -------------------------------------------------------------------------------


# --- MAC layers ----------------------------------------------------------------------------


# --- element-wise, activations, pooling ----------------------------------------------------


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
    if s.layout == "hwc" and transpose_into_rows(s.graph, s.op):
        return _OK  # batch 1 into rows, which the MLI output keeps
    return {} if perm is None or (len(s.input("input").shape) >= 2 and perm[0] != 0) else _OK


def concat_keeps_batch(s: Subject):
    """concatenation along the batch dimension"""
    if s.layout == "hwc" and concat_into_rows(s.graph, s.op):
        return _OK  # into rows, which the MLI output keeps
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
