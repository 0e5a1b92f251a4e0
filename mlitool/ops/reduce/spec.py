"""OpSpecs of the reductions: MEAN (MLI's average pooling over H and W, the `reduce8` fallback C
over other axes) and SUM, REDUCE_MAX, REDUCE_MIN (MLI has no kernel: the `reduce8` / `reduce16`
fallback C, `c_kernel.py`), run by the executors with TFLite's arithmetic (`reference.py`); CUMSUM
(`cumsum.py`, the `cumsum8` fallback C `cumsum_c.py`)."""

from __future__ import annotations

from mlitool.ops.common.register import fallback_op
from mlitool.ops.reduce import cumsum as CS
from mlitool.ops.reduce import cumsum_c  # noqa: F401  registers the cumsum8 fallback C
from mlitool.ops.reduce import lower as RF
from mlitool.ops.reduce import reference as RX
from mlitool.ops.spec import OpSpec, register
from mlitool.tflite.validate_ops import reduce_shapes, same_shape

register(
    OpSpec(
        "MEAN",
        ("input", "axis"),
        options="ReducerOptions",
        quantized=True,
        kind="avepool",
        shapes=reduce_shapes,
        checks=RF.CHECKS,
        lower=RF.lower_mean,
        run=(RX.float_kernel("MEAN"), RX.tflite_kernel("MEAN")),
    )
)


def _reduction(name: str) -> None:
    fallback_op(
        name,
        ("input", "axis"),
        options="ReducerOptions",
        shapes=reduce_shapes,
        checks=RF.CHECKS,
        lower=RF.lower_reduce,
        run=(RX.float_kernel(name), RX.tflite_kernel(name)),
    )


_reduction("SUM")
_reduction("REDUCE_MAX")
_reduction("REDUCE_MIN")
# Running sums: TFLite's float32 kernel; a quantized model's on the cumsum8 fallback C.
fallback_op(
    "CUMSUM",
    ("input", "axis"),
    options="CumsumOptions",
    params=("axis",),
    shapes=same_shape,
    checks=CS.CHECKS,
    lower=CS.lower_cumsum,
    run=(CS.float_cumsum, CS.tflite_cumsum),
)
