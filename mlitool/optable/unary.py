"""Element-wise unary ops MLI has no kernel for, besides ELU (`mlitool.optable.fallback`): their
float functions and TFLite's int8 arithmetic (`mlitool.execute.unary_ops`), lowered onto the
256-entry table of that arithmetic (`lut8`). CAST is not here: the converter emits it between
int8 and float32 (or int32), never as an int8 -> int8 op a table could hold."""

from __future__ import annotations

import numpy as np

from mlitool.execute import unary_ops as O
from mlitool.execute.unary import Unary
from mlitool.optable.fallback import unary_op

unary_op(Unary("HARD_SWISH", O.hard_swish, O.hard_swish_int8, options="HardSwishOptions"))
unary_op(Unary("GELU", O.gelu, real_of=O.gelu_of, options="GeluOptions"))
unary_op(Unary("EXP", O.exp, options="ExpOptions"))
unary_op(Unary("LOG", O.log, O.log_int8))
unary_op(Unary("RSQRT", O.rsqrt, O.rsqrt_int8))
unary_op(Unary("SQRT", O.sqrt, O.sqrt_int8))
unary_op(Unary("ABS", np.abs, O.abs_int8, options="AbsOptions"))
unary_op(Unary("NEG", np.negative, O.neg_int8, options="NegOptions"))
