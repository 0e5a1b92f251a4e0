"""OpSpecs of the element-wise binary ops MLI has kernels for: ADD, SUB, MUL, MAXIMUM, MINIMUM
(two operands of one type, broadcast). Float mode `float_mode.py`, TFLite's integer arithmetic
`tflite_mode.py`, lowering onto `mli_krn_eltwise_*` (`lower.py`; operands MLI refuses fall
back to the `binary` family's C)."""

from __future__ import annotations

from mlitool.mli.lower import checks as C
from mlitool.ops.elementwise import float_mode as F
from mlitool.ops.elementwise import tflite_mode as T
from mlitool.ops.elementwise.lower import lower_eltwise
from mlitool.ops.integer import lower as IL
from mlitool.ops.integer.dispatch import checks_or, int32_or
from mlitool.ops.integer.reference import binary_kernel
from mlitool.ops.spec import OpSpec, register
from mlitool.tflite import validate_ops as V

_ELTWISE = dict(
    leading_dims=True,
    all_data=True,
    quantized=True,
    shapes=V.eltwise_shapes,
    int32=True,  # int32 operands: the `integer` family's fallback C
    checks=checks_or(
        (
            C.one_operand_variable,
            C.operands_broadcast,
            C.broadcast_needs_mli2,
            C.broadcast_against_activation,
            C.output_broadcast_shape,
        ),
        IL.CHECKS,
    ),
    lower=int32_or(lower_eltwise, IL.lower_binary32),
)
for _name, _options, _kind, _float, _tflite in (
    ("ADD", "AddOptions", "eltwise_add", F.add, T.add),
    ("SUB", "SubOptions", "eltwise_sub", F.sub, T.sub),
    ("MUL", "MulOptions", "eltwise_mul", F.mul, T.mul),
    ("MAXIMUM", "MaximumMinimumOptions", "eltwise_max", F.maximum, T.maximum),
    ("MINIMUM", "MaximumMinimumOptions", "eltwise_min", F.minimum, T.minimum),
):
    register(
        OpSpec(
            _name,
            ("input", "input2"),
            options=_options,
            kind=_kind,
            **_ELTWISE,
            run=(int32_or(_float, binary_kernel(_name)), int32_or(_tflite, binary_kernel(_name))),
        )
    )
