"""OpSpec of `ir.ISLAND_OP`, the op `mlitool.passes.float_expressions` makes of an int8 model's
float island of several element-wise ops: run with TFLite's float32 arithmetic (`arith.py`,
`kernels.py`), lowered onto `lut8` (one input) or the `float_island<N>` fallback C."""

from __future__ import annotations

from mlitool.ir import ISLAND_OP
from mlitool.ops.common.register import fallback_op
from mlitool.ops.island import kernels as K
from mlitool.ops.spec import CONVERT

fallback_op(
    ISLAND_OP,
    ("input",),
    variadic=True,
    fused_activation=False,
    types=CONVERT,  # int8 inputs and float32 constant terms in; int8 out, or bool (a comparison)
    bools=True,
    checks=K.CHECKS,
    lower=K.lower_island,
    run=(K.float_island, K.tflite_island),
)
