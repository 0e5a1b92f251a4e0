"""OpSpecs of the bool ops LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT and REDUCE_ALL: no MLI kernel,
lowered onto fallback C over bool bytes (`lower.py`, `c_kernel.py`), one kernel for both
executor modes (`reference.py`)."""

from __future__ import annotations

from mlitool.ops.common.fallback_checks import fallback_needs_mli2
from mlitool.ops.common.register import fallback_op
from mlitool.ops.logical import lower as L
from mlitool.ops.logical import reference as X
from mlitool.ops.reduce.lower import axes_constant
from mlitool.tflite import validate_ops as V

for _name, _slots, _options in (
    ("LOGICAL_AND", ("input", "input2"), "LogicalAndOptions"),
    ("LOGICAL_OR", ("input", "input2"), "LogicalOrOptions"),
    ("LOGICAL_NOT", ("input",), "LogicalNotOptions"),
):
    fallback_op(
        _name,
        _slots,
        quantized=False,
        options=_options,
        shapes=V.eltwise_shapes if len(_slots) == 2 else V.same_shape,
        bools=True,
        leading_dims=True,  # element-wise
        checks=(fallback_needs_mli2,),
        lower=L.lower_logical,
        run=(X.logical,) * 2,
    )
fallback_op(
    "REDUCE_ALL",
    ("input", "axis"),
    quantized=False,
    options="ReducerOptions",
    params=("axis",),
    bools=True,
    shapes=V.reduce_shapes,
    checks=(fallback_needs_mli2, axes_constant),
    lower=L.lower_reduce_all,
    run=(X.reduce_all,) * 2,
)
