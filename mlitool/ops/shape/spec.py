"""OpSpecs of the shape-arithmetic ops: SHAPE, ZEROS_LIKE, PACK, UNPACK, REDUCE_PROD, CAST, FILL,
RANGE, BROADCAST_ARGS (STRIDED_SLICE is a slice, in `movement`; GATHER and TILE are index gathers, in `gather`).

Keras exports with a dynamic batch compute every Flatten / Reshape target with them on int32
tensors; constant folding (`mlitool.passes.constant_fold`) evaluates those with these kernels,
so they leave the graph before the support check. One kernel serves both modes
(`reference.py`): they move or count elements; PACK and UNPACK on activations become MLI
concatenation and views.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from mlitool import ir
from mlitool.ops.common.computed_shapes import computed_shapes
from mlitool.ops.common.fallback_checks import fallback_needs_mli2
from mlitool.ops.integer import lower as IL
from mlitool.ops.integer.dispatch import cast_through_int32, checks_or, int32_or
from mlitool.ops.integer.reference import cast_kernel
from mlitool.ops.movement import checks as MC
from mlitool.ops.movement import lower as movement
from mlitool.ops.shape import reference as S
from mlitool.ops.shape import zeros_like as ZL
from mlitool.ops.shape.cast import cast_from_bool, lower_cast
from mlitool.ops.shape.lower import lower_pack
from mlitool.ops.spec import CONVERT, VARIADIC, OpSpec, register
from mlitool.tflite.validate_ops import Problem


def _shape_op(name: str, slots: tuple[str, ...], options: str, kernel: Callable, **facts) -> None:
    """Register `name`: one `kernel` for both modes, which also gives validation the output
    shape; `facts`: its other OpSpec fields."""
    facts.setdefault("shapes", computed_shapes)
    register(OpSpec(name, slots, options=options, run=(kernel,) * 2, **facts))


def unpack_shapes(g: ir.Graph, op: ir.Op) -> Iterator[Problem]:
    """As TFLite's Prepare: `num` outputs, the input's size along `axis`; then their shapes."""
    x = g.slot(op, "input")
    rank, axis, num = len(x.shape), int(op.options.get("axis", 0)), int(op.options.get("num", 0))
    if not -rank <= axis < rank:
        yield Problem(f"axis {axis} is outside the rank {rank} of the input", op, x)
        return
    if num != len(op.outputs) or x.shape[axis % rank] != num:
        yield Problem(
            f"num {num} with {len(op.outputs)} outputs of an input of size "
            f"{x.shape[axis % rank]} along axis {axis}",
            op,
            x,
        )
        return
    yield from computed_shapes(g, op)


_shape_op("SHAPE", ("input",), "ShapeOptions", S.shape, types=CONVERT, shape_only=True)
# Zeros of its input's shape and type: folded into a constant wherever that shape is static,
# else (a graph output, a run-time shape) the `fill_value` fallback C (`zeros_like.py`).
_shape_op(
    "ZEROS_LIKE",
    ("input",),
    "ZerosLikeOptions",
    S.zeros_like,
    shape_only=True,
    kind="fallback",
    int32=True,
    leading_dims=True,  # element-wise
    checks=(fallback_needs_mli2, ZL.zeros_of_known_type),
    lower=ZL.lower_zeros_like,
)
_shape_op(
    "PACK",
    ("input",),
    "PackOptions",
    S.pack,
    variadic=True,
    options_required=True,
    all_data=True,
    kind="concat",
    leading_dims=True,  # an unrolled RNN's time steps stacked in front: rows, not a batch
    int32=True,
    lower=lower_pack,
)
_shape_op(
    "UNPACK",
    ("input",),
    "UnpackOptions",
    S.unpack,
    outputs=(1, VARIADIC),
    options_required=True,
    shapes=unpack_shapes,
    kind="view",
    leading_dims=True,
    int32=True,
    checks=(MC.slice_keeps_batch,),
    lower=movement.lower_slice,
    reads_views=True,
)
_shape_op("REDUCE_PROD", ("input", "axis"), "ReducerOptions", S.reduce_prod, params=("axis",))
# Of a bool tensor onto fallback C (`cast.py`), through int32 onto `cast32`; constant folding
# evaluates the others.
_shape_op(
    "CAST",
    ("input",),
    "CastOptions",
    cast_kernel(S.cast),
    types=CONVERT,
    kind="fallback",
    bools=True,
    int32=True,  # but bool -> float32 / int8: the `integer` family's `cast32`
    leading_dims=True,  # element-wise
    checks=checks_or((fallback_needs_mli2, cast_from_bool), IL.CHECKS, cast_through_int32),
    lower=int32_or(lower_cast, IL.lower_cast32, cast_through_int32),
)
_shape_op("FILL", ("dims", "value"), "FillOptions", S.fill, types=CONVERT, params=("dims",))
_RANGE = ("start", "limit", "delta")
_shape_op("RANGE", _RANGE, "RangeOptions", S.range_op, types=CONVERT, params=_RANGE)
# The shape BROADCAST_TO reads, computed from two shapes: folded where both are known (a SHAPE of
# a static tensor, a constant), as the shapes are at conversion.
_shape_op("BROADCAST_ARGS", ("s0", "s1"), None, S.broadcast_args, types=CONVERT)
