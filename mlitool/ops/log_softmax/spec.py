"""OpSpec of LOG_SOFTMAX (MLI has no kernel for it): lowered onto the `log_softmax8` fallback C
(`lower.py`, `c_kernel.py`), run by the executors with TFLite's arithmetic (`reference.py`)."""

from __future__ import annotations

from mlitool.ops.common.register import fallback_op
from mlitool.ops.log_softmax import lower as LF
from mlitool.ops.log_softmax import reference as LX
from mlitool.tflite import validate_ops as V

fallback_op(
    "LOG_SOFTMAX",
    ("input",),
    options="LogSoftmaxOptions",
    shapes=V.same_shape,
    checks=LF.CHECKS,
    lower=LF.lower_log_softmax,
    run=(LX.float_kernel, LX.tflite_kernel),
)
