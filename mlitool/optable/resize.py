"""Built-in OpSpecs of RESIZE_BILINEAR and the depth / space / batch rearrangements
(SPACE_TO_DEPTH, DEPTH_TO_SPACE, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND): executors in
`execute/resize.py`, lowerings (fallback C or MLI compositions) in
`mli/lower/fallback_movement.py`."""

from __future__ import annotations

from mlitool.execute import resize as R
from mlitool.mli.lower import fallback_movement as FM
from mlitool.opspec import OpSpec, register
from mlitool.optable.fallback import fallback_op
from mlitool.optable.kernel_shapes import computed_shapes

# One kernel serves both modes and gives validation the output shape.
fallback_op(
    "RESIZE_BILINEAR",
    ("input", "size"),
    options="ResizeBilinearOptions",
    params=("size",),
    shapes=computed_shapes,
    checks=FM.CHECKS,
    lower=FM.lower_resize_bilinear,
    run=(R.resize_bilinear,) * 2,
)
# Lowered as MLI permutes, not fallback C.
for _name, _opts, _run in (
    ("SPACE_TO_DEPTH", "SpaceToDepthOptions", R.space_to_depth),
    ("DEPTH_TO_SPACE", "DepthToSpaceOptions", R.depth_to_space),
):
    register(
        OpSpec(
            _name,
            ("input",),
            options=_opts,
            options_required=True,
            quantized=True,
            shapes=computed_shapes,
            kind="permute",
            checks=FM.CHECKS,
            lower=FM.lower_depth_space,
            run=(_run,) * 2,
        )
    )
for _name, _opts, _edges, _run in (
    ("SPACE_TO_BATCH_ND", "SpaceToBatchNDOptions", "paddings", R.space_to_batch_nd),
    ("BATCH_TO_SPACE_ND", "BatchToSpaceNDOptions", "crops", R.batch_to_space_nd),
):
    fallback_op(
        _name,
        ("input", "block_shape", _edges),
        options=_opts,
        params=("block_shape", _edges),
        shapes=computed_shapes,
        checks=FM.CHECKS,
        lower=FM.lower_batch_space,
        run=(_run,) * 2,
    )
