"""OpSpecs of AVERAGE_POOL_2D and MAX_POOL_2D: MLI's pooling kernels (`lower.py`), float mode
`float_mode.py`, TFLite's integer arithmetic `tflite_mode.py`."""

from __future__ import annotations

from mlitool.ops.common.register import fallback_op
from mlitool.ops.pool import float_mode as F
from mlitool.ops.pool import l2_pool as L2
from mlitool.ops.pool import tflite_mode as T
from mlitool.ops.pool.lower import lower_pool
from mlitool.ops.spec import OpSpec, register
from mlitool.tflite import validate_weighted as V

_POOL = dict(
    options="Pool2DOptions",
    options_required=True,
    quantized=True,
    shapes=V.window_shapes,
    lower=lower_pool,
)
register(
    OpSpec(
        "AVERAGE_POOL_2D",
        ("input",),
        **_POOL,
        kind="avepool",
        run=(F.average_pool_2d, T.average_pool_2d),
    )
)
register(
    OpSpec("MAX_POOL_2D", ("input",), **_POOL, kind="maxpool", run=(F.max_pool_2d, T.max_pool_2d))
)
# float32 only in TFLite (Micro); a quantized float model on the l2pool8 fallback C.
fallback_op(
    "L2_POOL_2D",
    ("input",),
    options="Pool2DOptions",
    options_required=True,
    shapes=V.window_shapes,
    checks=L2.CHECKS,
    lower=L2.lower_l2_pool,
    run=(L2.float_l2_pool_2d, L2.tflite_l2_pool_2d),
)
