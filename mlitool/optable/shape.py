"""Built-in OpSpecs of the shape-arithmetic and index ops: SHAPE, PACK, UNPACK, GATHER,
REDUCE_PROD, CAST, FILL, RANGE, TILE, RESIZE_NEAREST_NEIGHBOR (STRIDED_SLICE is a slice, in
`movement`).

Keras exports with a dynamic batch compute every Flatten / Reshape target with them on int32
tensors; constant folding (`mlitool.passes.constant_fold`) evaluates those with these kernels,
so they leave the graph before the support check. They have no MLI kernel (`lower`): those left
on activations (TILE, RESIZE_NEAREST_NEIGHBOR, GATHER...) run in the executors only. One kernel
serves both modes (`execute/shape_ops.py`): they move or count elements.
"""

from __future__ import annotations

from collections.abc import Callable

from mlitool.execute import shape_ops as S
from mlitool.mli.lower import checks as C
from mlitool.mli.lower import fallback_movement as FM
from mlitool.mli.lower import movement
from mlitool.opspec import CONVERT, VARIADIC, OpSpec, register
from mlitool.optable.fallback import gather_op
from mlitool.optable.kernel_shapes import computed_shapes


def _shape_op(name: str, slots: tuple[str, ...], options: str, kernel: Callable, **facts) -> None:
    """Register `name`: one `kernel` for both modes, which also gives validation the output
    shape; `facts`: its other OpSpec fields."""
    register(
        OpSpec(name, slots, options=options, shapes=computed_shapes, run=(kernel,) * 2, **facts)
    )


_shape_op("SHAPE", ("input",), "ShapeOptions", S.shape, types=CONVERT)
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
    lower=FM.lower_pack,
)
_shape_op(
    "UNPACK",
    ("input",),
    "UnpackOptions",
    S.unpack,
    outputs=(1, VARIADIC),
    options_required=True,
    kind="view",
    leading_dims=True,
    checks=(C.slice_keeps_batch,),
    lower=movement.lower_slice,
    reads_views=True,
)
gather_op(
    "GATHER",
    ("input", "positions"),
    "GatherOptions",
    S.gather,
    checks=(*FM.CHECKS, FM.gather_constant),
)
_shape_op("REDUCE_PROD", ("input", "axis"), "ReducerOptions", S.reduce_prod, params=("axis",))
_shape_op("CAST", ("input",), "CastOptions", S.cast, types=CONVERT)
_shape_op("FILL", ("dims", "value"), "FillOptions", S.fill, types=CONVERT, params=("dims",))
_RANGE = ("start", "limit", "delta")
_shape_op("RANGE", _RANGE, "RangeOptions", S.range_op, types=CONVERT, params=_RANGE)
gather_op("TILE", ("input", "multiples"), "TileOptions", S.tile, params=("multiples",))
gather_op(
    "RESIZE_NEAREST_NEIGHBOR",
    ("input", "size"),
    "ResizeNearestNeighborOptions",
    S.resize_nearest_neighbor,
    params=("size",),
)
