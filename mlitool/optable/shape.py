"""Built-in OpSpecs of the shape-arithmetic and index ops: SHAPE, PACK, UNPACK, GATHER,
REDUCE_PROD, CAST, FILL, RANGE, TILE, RESIZE_NEAREST_NEIGHBOR (STRIDED_SLICE is a slice, in
`movement`).

Keras exports with a dynamic batch compute every Flatten / Reshape target with them on int32
tensors; constant folding (`mlitool.tflite.constant_fold`) evaluates those with these kernels,
so they leave the graph before the support check. They have no MLI kernel (`lower`): those left
on activations (TILE, RESIZE_NEAREST_NEIGHBOR, GATHER...) run in the executors only. One kernel
serves both modes (`execute/shape_ops.py`): they move or count elements.
"""

from __future__ import annotations

from mlitool.execute import shape_ops as S
from mlitool.mli.lower import checks as C
from mlitool.mli.lower import fallback_movement as FM
from mlitool.mli.lower import movement
from mlitool.opspec import CONVERT, VARIADIC, OpSpec, register
from mlitool.optable.kernel_shapes import computed_shapes

_SHAPE_OP = dict(shapes=computed_shapes)
register(
    OpSpec(
        "SHAPE", ("input",), options="ShapeOptions", types=CONVERT, **_SHAPE_OP, run=(S.shape,) * 2
    )
)
register(
    OpSpec(
        "PACK",
        ("input",),
        variadic=True,
        options="PackOptions",
        options_required=True,
        all_data=True,
        **_SHAPE_OP,
        kind="concat",
        leading_dims=True,  # an unrolled RNN's time steps stacked in front: rows, not a batch
        lower=FM.lower_pack,
        run=(S.pack,) * 2,
    )
)
register(
    OpSpec(
        "UNPACK",
        ("input",),
        outputs=(1, VARIADIC),
        options="UnpackOptions",
        options_required=True,
        **_SHAPE_OP,
        kind="view",
        leading_dims=True,
        checks=(C.slice_keeps_batch,),
        lower=movement.lower_slice,
        reads_views=True,
        run=(S.unpack,) * 2,
    )
)
register(
    OpSpec(
        "GATHER",
        ("input", "positions"),
        options="GatherOptions",
        **_SHAPE_OP,
        kind="fallback",
        checks=(*FM.CHECKS, FM.gather_constant),
        lower=FM.lower_index_gather,
        run=(S.gather,) * 2,
    )
)
register(
    OpSpec(
        "REDUCE_PROD",
        ("input", "axis"),
        options="ReducerOptions",
        params=("axis",),
        **_SHAPE_OP,
        run=(S.reduce_prod,) * 2,
    )
)
register(
    OpSpec("CAST", ("input",), options="CastOptions", types=CONVERT, **_SHAPE_OP, run=(S.cast,) * 2)
)
register(
    OpSpec(
        "FILL",
        ("dims", "value"),
        options="FillOptions",
        types=CONVERT,
        params=("dims",),
        **_SHAPE_OP,
        run=(S.fill,) * 2,
    )
)
register(
    OpSpec(
        "RANGE",
        ("start", "limit", "delta"),
        options="RangeOptions",
        types=CONVERT,
        params=("start", "limit", "delta"),
        **_SHAPE_OP,
        run=(S.range_op,) * 2,
    )
)
register(
    OpSpec(
        "TILE",
        ("input", "multiples"),
        options="TileOptions",
        params=("multiples",),
        **_SHAPE_OP,
        kind="fallback",
        checks=FM.CHECKS,
        lower=FM.lower_index_gather,
        run=(S.tile,) * 2,
    )
)
register(
    OpSpec(
        "RESIZE_NEAREST_NEIGHBOR",
        ("input", "size"),
        options="ResizeNearestNeighborOptions",
        params=("size",),
        **_SHAPE_OP,
        kind="fallback",
        checks=FM.CHECKS,
        lower=FM.lower_index_gather,
        run=(S.resize_nearest_neighbor,) * 2,
    )
)
