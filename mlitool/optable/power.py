"""OpSpec of POW: float32 (float and tflite mode as TFLite's kernel); lowered with a constant
exponent of one value through the 256-entry table of x ** e (`lut8`): an int8 model's float
island's table, or a calibrated float model's table of the real function."""

from __future__ import annotations

from mlitool.execute import power as P
from mlitool.mli.lower import fallback_pow as FP
from mlitool.optable.fallback import fallback_op
from mlitool.tflite import validate_ops as V

fallback_op(
    "POW",
    ("input", "input2"),
    options="PowOptions",
    shapes=V.eltwise_shapes,
    checks=FP.CHECKS,
    lower=FP.lower_pow,
    run=(P.float_pow, P.tflite_pow),
)
