"""OpSpec of DYNAMIC_UPDATE_SLICE: the operand with an update written over it from start
indices TFLite clamps. One copy for both executor modes (`reference.py`, with an int8 model's
float island as TFLite runs it), the `update_slice` fallback C (`c_kernel.py`) with constant
start indices clamped at conversion, `update_slice_at` with run-time int32 ones clamped in C
(`lower.py`)."""

from __future__ import annotations

from mlitool.ops.common.computed_shapes import computed_shapes
from mlitool.ops.common.register import fallback_op
from mlitool.ops.gather import lower as GL
from mlitool.ops.update_slice import lower as UL
from mlitool.ops.update_slice import reference as R
from mlitool.tflite.validate_ops import Problem


def update_slice_shapes(g, op):
    """The output has the operand's shape (TFLite's Prepare), whatever the start indices (run-time
    ones included); constant ones: the kernel run once on zeros (`computed_shapes`)."""
    x, out = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    starts = g.tensors[op.inputs[2]]
    if starts.size != len(x.shape):
        yield Problem(
            f"has {starts.size} start indices for an operand of rank {len(x.shape)}", op, starts
        )
        return
    if tuple(out.shape) != tuple(x.shape):
        yield Problem(
            f"has shape {list(out.shape)}, but the operand's is {list(x.shape)}",
            op,
            out,
            computed=tuple(x.shape),
        )
        return
    yield from computed_shapes(g, op)


fallback_op(
    "DYNAMIC_UPDATE_SLICE",
    ("operand", "update", "start_indices"),
    quantized=False,  # it copies raw values
    int32=True,  # an int32 operand: its 4-byte SA32 elements copied
    params=("start_indices",),  # not an activation check's: constants or int32 (start_int32)
    shapes=update_slice_shapes,
    checks=(*GL.CHECKS, UL.start_int32, UL.island_copies),
    lower=UL.lower_dynamic_update_slice,
    run=(R.float_dynamic_update_slice, R.tflite_dynamic_update_slice),
)
