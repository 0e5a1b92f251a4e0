"""OpSpecs of the element-wise unary functions MLI has no kernel for (ELU, HARD_SWISH, GELU,
EXP, LOG, RSQRT, SQRT, ABS, NEG, SQUARE) and POW: their float functions and TFLite's int8
arithmetic (`functions.py`, `square.py`, `power.py`), lowered onto the 256-entry table of that
arithmetic (the `lut8` fallback C, `c_kernel.py`). An int8 model's float island of one of them
(DEQUANTIZE -> op -> QUANTIZE) carries the table the three compute (`table.ISLAND_TABLE`).
CAST is not here: the converter emits it between int8 and float32 (or int32), never as an
int8 -> int8 op a table could hold."""

from __future__ import annotations

import numpy as np

from mlitool.ops.common.register import fallback_op
from mlitool.ops.integer import lower as IL
from mlitool.ops.integer.dispatch import checks_or, int32_or, on_int32
from mlitool.ops.integer.reference import binary_kernel
from mlitool.ops.spec import OpSpec
from mlitool.ops.unary import float_math as M
from mlitool.ops.unary import functions as O
from mlitool.ops.unary import lower as L
from mlitool.ops.unary import lower_pow as LP
from mlitool.ops.unary import power as P
from mlitool.ops.unary import table as U
from mlitool.tflite import validate_ops as V


def unary_op(u: U.Unary) -> OpSpec:
    """Register the element-wise unary op `u`: int8 through a 256-entry table of TFLite's
    results."""
    return fallback_op(
        u.name,
        ("input",),
        options=u.options,
        shapes=V.same_shape,
        checks=L.UNARY16_CHECKS if u.int16 else L.UNARY_CHECKS,
        lower=L.lower_unary_lut(u),
        run=(U.float_kernel(u), U.tflite_kernel(u)),
    )


unary_op(U.ELU)
unary_op(U.Unary("HARD_SWISH", O.hard_swish, O.hard_swish_int8, options="HardSwishOptions"))
unary_op(U.Unary("GELU", O.gelu, real_of=O.gelu_of, options="GeluOptions"))
unary_op(U.Unary("EXP", O.exp, options="ExpOptions"))
unary_op(U.Unary("LOG", O.log, O.log_int8))
unary_op(U.Unary("RSQRT", O.rsqrt, O.rsqrt_int8))
unary_op(U.Unary("SQRT", O.sqrt, O.sqrt_int8))
unary_op(U.Unary("ABS", np.abs, O.abs_int8, options="AbsOptions", int16=O.abs_int16))
unary_op(U.Unary("NEG", np.negative, O.neg_int8, options="NegOptions"))
# GroupNormalization, tf.square; in an int8 model a float island, folded into its table.
unary_op(O.SQUARE)
# A constant exponent of one value: the table of x ** e.
fallback_op(
    "POW",
    ("input", "input2"),
    options="PowOptions",
    shapes=V.eltwise_shapes,
    checks=LP.CHECKS,
    lower=LP.lower_pow,
    run=(P.float_pow, P.tflite_pow),
)
# TFLite's float32-only math (TFLite Micro: float32 only); in an int8 model float islands.
for _u in (M.CEIL, M.FLOOR, M.ROUND, M.SIN, M.COS):
    unary_op(_u)
# By a constant divisor of one value: the table of the function of the first input; on int32
# operands, any divisor: the `integer` family's fallback C.
for _name in M.BY_CONSTANT:
    fallback_op(
        _name,
        ("input", "input2"),
        shapes=V.eltwise_shapes,
        int32=True,
        leading_dims=on_int32,  # int32: element-wise, a leading dimension is rows
        checks=checks_or(LP.DIVISOR_CHECKS, IL.CHECKS),
        lower=int32_or(LP.lower_by_constant, IL.lower_binary32),
        run=(int32_or(M.by_constant_kernel(_name), binary_kernel(_name)),) * 2,
    )
