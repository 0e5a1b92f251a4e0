"""OpSpec of LOG_SOFTMAX (MLI has no kernel for it): lowered onto the `log_softmax8` fallback C
(`mlitool.mli.lower.fallback_log_softmax`), run by the executors with TFLite's arithmetic
(`mlitool.execute.log_softmax`)."""

from __future__ import annotations

from mlitool.execute import log_softmax as LX
from mlitool.mli.lower import fallback_log_softmax as LF
from mlitool.optable.fallback import fallback_op
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
