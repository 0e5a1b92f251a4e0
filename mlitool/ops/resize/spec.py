"""OpSpecs of RESIZE_BILINEAR (the `resize_bilinear` fallback C, `c_kernel.py`) and the depth /
space / batch rearrangements SPACE_TO_DEPTH, DEPTH_TO_SPACE (MLI permutes), SPACE_TO_BATCH_ND,
BATCH_TO_SPACE_ND (index gathers): one kernel per op for both executor modes
(`reference.py`), lowerings in `lower.py`."""

from __future__ import annotations

from mlitool.ops.common.computed_shapes import computed_shapes
from mlitool.ops.common.register import fallback_op
from mlitool.ops.gather import lower as GL
from mlitool.ops.resize import lower as RL
from mlitool.ops.resize import reference as R
from mlitool.ops.resize.space_batch import blocked
from mlitool.ops.spec import OpSpec, register

# One kernel serves both modes and gives validation the output shape.
fallback_op(
    "RESIZE_BILINEAR",
    ("input", "size"),
    options="ResizeBilinearOptions",
    params=("size",),
    shapes=computed_shapes,
    checks=GL.CHECKS,
    lower=RL.lower_resize_bilinear,
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
            checks=GL.CHECKS,
            lower=RL.lower_depth_space,
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
        checks=GL.CHECKS,
        lower=RL.lower_batch_space,
        run=(_run,) * 2,
        leading_dims=blocked,  # the block offsets of one sample: rows
    )
