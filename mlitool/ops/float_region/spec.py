"""OpSpec of `ir.REGION_OP`, the op `mlitool.passes.float_regions` makes of an int8 model's
float region: run by tflite and float mode through the region's own ops, lowered onto the
`float_region<N>` program and `float_region_out` fallback C."""

from __future__ import annotations

from mlitool.ir import REGION_OP
from mlitool.ops.common.register import fallback_op
from mlitool.ops.float_region import kernels as K
from mlitool.ops.spec import CONVERT, VARIADIC

fallback_op(
    REGION_OP,
    ("input",),
    variadic=True,
    outputs=(1, VARIADIC),
    fused_activation=False,
    leading_dims=True,  # the program reads its tensors as flat arrays
    keeps_float=True,
    types=CONVERT,  # int8 and carried float32 tensors, in and out  # float32 tensors between regions: bit patterns, no value ranges
    checks=K.CHECKS,
    lower=K.lower_region,
    run=(K.float_region, K.tflite_region),
)
