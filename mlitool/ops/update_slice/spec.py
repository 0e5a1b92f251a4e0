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

fallback_op(
    "DYNAMIC_UPDATE_SLICE",
    ("operand", "update", "start_indices"),
    quantized=False,  # it copies raw values
    int32=True,  # an int32 operand: its 4-byte SA32 elements copied
    params=("start_indices",),  # not an activation check's: constants or int32 (start_int32)
    shapes=computed_shapes,
    checks=(*GL.CHECKS, UL.start_int32, UL.island_copies),
    lower=UL.lower_dynamic_update_slice,
    run=(R.float_dynamic_update_slice, R.tflite_dynamic_update_slice),
)
