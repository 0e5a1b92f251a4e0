"""OpSpecs of the data-movement ops: CONCATENATION, PAD(V2), RESHAPE, SQUEEZE, EXPAND_DIMS,
TRANSPOSE, ARG_MAX/ARG_MIN and the slices (SLICE, STRIDED_SLICE, SPLIT, SPLIT_V; a STRIDED_SLICE
with a negative stride onto gather4, `reversed_slice.py`). Kernels of
both modes `layout.py` (float `float_mode.py`, TFLite's `tflite_mode.py` where the modes
differ), lowering onto MLI views, permutes, concatenation and padding (`lower.py`,
`concat.py`), support checks `checks.py`."""

from __future__ import annotations

from mlitool.mli.lower import checks as C
from mlitool.mli.lower import facts
from mlitool.ops.common.computed_shapes import computed_shapes, computed_shapes_of
from mlitool.ops.common.fallback_checks import fallback_needs_mli2
from mlitool.ops.movement import arg_min as AM
from mlitool.ops.movement import checks as MC
from mlitool.ops.movement import concat
from mlitool.ops.movement import float_mode as F
from mlitool.ops.movement import layout as LO
from mlitool.ops.movement import lower as movement
from mlitool.ops.movement import reversed_slice as RS
from mlitool.ops.movement import tflite_mode as T
from mlitool.ops.spec import CONVERT, VARIADIC, OpSpec, register
from mlitool.tflite import validate_ops as V

# Data movement: one arithmetic-free kernel for both execution modes.
register(
    OpSpec(
        "CONCATENATION",
        ("input",),
        variadic=True,
        options="ConcatenationOptions",
        all_data=True,
        quantized=True,
        shapes=V.concat_shapes,
        kind="concat",
        leading_dims=facts.concat_into_rows,
        reads_views=True,
        int32=True,  # of int32 tensors: SA32 copies
        bools=True,  # of bool tensors: bytes, SA8 of scale 1
        checks=(MC.concat_keeps_batch,),
        lower=concat.lower_concatenation,
        run=(F.concatenation, T.concatenation),
    )
)
_PAD = dict(
    quantized=True,
    kind="padding",
    int32=True,  # int32 data: SA32, padded with 0
    lower=movement.lower_pad,
    run=(F.pad, T.pad),
)
register(
    OpSpec(
        "PAD",
        ("input", "paddings"),
        options="PadOptions",
        shapes=computed_shapes_of("paddings"),
        **_PAD,
        checks=(MC.pad_spatial, MC.pad_channels_need_mli2),
    )
)
_padv2_shapes = computed_shapes_of("paddings")


def padv2_types(g, op):
    """The pad value of the input's type (TFLite's Prepare: the 16x8 converter writes a float32
    value beside int16 data, a file LiteRT and TFLite Micro refuse), then the shapes."""
    x, value = g.slot(op, "input"), g.slot(op, "constant_values")
    if value is not None and value.dtype != x.dtype:
        yield V.Problem(f"has type {value.dtype}, the op's input {x.dtype}", op, value)
        return
    yield from _padv2_shapes(g, op)


register(
    OpSpec(
        "PADV2",
        ("input", "paddings", "constant_values"),
        optional=1,
        options="PadV2Options",
        shapes=padv2_types,
        **_PAD,
        checks=(
            MC.pad_spatial,
            MC.pad_channels_need_mli2,
            MC.pad_value_constant,
        ),
    )
)
# Views: the same elements in another shape (a leading dimension other than 1 is rows).
_VIEW = dict(
    shapes=V.same_size,
    kind="view",
    leading_dims=True,
    int32=True,  # a view of an int32 tensor (SA32) is one too
    bools=True,  # and of a bool tensor (SA8 of scale 1)
    lower=movement.lower_reshape,
    run=(LO.reshape,) * 2,
)
register(
    OpSpec(
        "RESHAPE",
        ("input", "shape"),
        optional=1,
        options="ReshapeOptions",
        **_VIEW,
    )
)
register(OpSpec("SQUEEZE", ("input",), options="SqueezeOptions", **_VIEW))
register(
    OpSpec("EXPAND_DIMS", ("input", "axis"), options="ExpandDimsOptions", params=("axis",), **_VIEW)
)
register(
    OpSpec(
        "TRANSPOSE",
        ("input", "perm"),
        options="TransposeOptions",
        shapes=computed_shapes_of("perm"),
        kind="permute",
        leading_dims=facts.transpose_leading_dims,
        checks=(MC.transpose_keeps_batch,),
        lower=movement.lower_transpose,
        run=(LO.transpose,) * 2,
    )
)
# Indices out (any integer type); MLI has a kernel for ARG_MAX only.
_ARG_MAX = dict(
    kind="argmax",
    checks=(
        C.kernel_needs_mli2,
        MC.argmax_axis_constant,
        MC.argmax_last_axis,
        MC.argmax_row_starts_fit,
    ),
    lower=movement.lower_arg_max,
)
# ARG_MIN: argmax of the int8 complement (a lut8 table first, `arg_min.py`).
_ARG_MIN = {
    **_ARG_MAX,
    "checks": (*_ARG_MAX["checks"], fallback_needs_mli2, AM.arg_min_input_int8),
    "lower": AM.lower_arg_min,
}
for _name, _options, _kernel, _mli in (
    ("ARG_MAX", "ArgMaxOptions", LO.arg_max, _ARG_MAX),
    ("ARG_MIN", "ArgMinOptions", LO.arg_min, _ARG_MIN),
):
    register(
        OpSpec(
            _name,
            ("input", "axis"),
            options=_options,
            types=CONVERT,
            index_outputs=True,
            shapes=computed_shapes_of("axis"),
            run=(_kernel,) * 2,
            **_mli,
        )
    )

# Slices: views of their input where MLI can address them (else mli_mov copies).
_SLICE = dict(
    kind="view",
    int32=True,  # slices of int32 tensors (SA32): views, mli_mov copies, gather4
    bools=True,  # slices of bool tensors: bytes, SA8 of scale 1
    leading_dims=True,  # picks elements: a leading dimension other than 1 is rows (a time-major
    # RNN's steps); slice_keeps_batch decides
    checks=(MC.slice_expressible, MC.slice_keeps_batch),
    lower=movement.lower_slice,
    reads_views=True,
)
register(
    OpSpec(
        "SLICE",
        ("input", "begin", "size"),
        options="SliceOptions",
        shapes=computed_shapes_of("begin", "size"),
        **_SLICE,
        run=(LO.slice_op,) * 2,
    )
)
register(
    OpSpec(
        "STRIDED_SLICE",
        ("input", "begin", "end", "strides"),
        options="StridedSliceOptions",
        params=("begin", "end", "strides"),
        shapes=computed_shapes,
        **{
            **_SLICE,
            "checks": (*map(RS.forward_only, _SLICE["checks"]), *RS.REVERSED_CHECKS),
            "lower": RS.lower_strided_slice,
        },
        run=(LO.strided_slice,) * 2,
    )
)
register(
    OpSpec(
        "SPLIT",
        ("axis", "input"),
        outputs=(1, VARIADIC),
        options="SplitOptions",
        shapes=computed_shapes_of("axis"),
        **_SLICE,
        run=(LO.split,) * 2,
    )
)
register(
    OpSpec(
        "SPLIT_V",
        ("input", "size_splits", "axis"),
        outputs=(1, VARIADIC),
        options="SplitVOptions",
        shapes=computed_shapes_of("size_splits", "axis"),
        **_SLICE,
        run=(LO.split_v,) * 2,
    )
)
