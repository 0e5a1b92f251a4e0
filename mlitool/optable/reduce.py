"""OpSpecs of the reductions MLI has no kernel for (SUM, REDUCE_MAX, REDUCE_MIN): lowered onto the
`reduce8` fallback C (`mlitool.mli.lower.fallback_reduce`), run by the executors with TFLite's
arithmetic (`mlitool.execute.reduce`). MEAN is in `mac` (average pooling over H and W, this
fallback over other axes)."""

from __future__ import annotations

from mlitool.execute import reduce as RX
from mlitool.mli.lower import fallback_reduce as RF
from mlitool.optable.fallback import fallback_op
from mlitool.tflite import validate_ops as V


def _reduction(name: str) -> None:
    fallback_op(
        name,
        ("input", "axis"),
        options="ReducerOptions",
        shapes=V.reduce_shapes,
        checks=RF.CHECKS,
        lower=RF.lower_reduce,
        run=(RX.float_kernel(name), RX.tflite_kernel(name)),
    )


_reduction("SUM")
_reduction("REDUCE_MAX")
_reduction("REDUCE_MIN")
