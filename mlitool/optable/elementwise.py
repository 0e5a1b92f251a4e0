"""Built-in OpSpecs of the element-wise ops (ADD, SUB, MUL, MAXIMUM, MINIMUM) and the
activations and type conversions (RELU..., LOGISTIC, TANH, SOFTMAX, L2_NORMALIZATION, QUANTIZE,
DEQUANTIZE)."""

from __future__ import annotations

from mlitool.execute import float_ops as F
from mlitool.execute import tflite_ops as T
from mlitool.mli.lower import activations as act
from mlitool.mli.lower import checks as C
from mlitool.mli.lower import checks_values as CV
from mlitool.opspec import CONVERT, SAME, WIDEN, OpSpec, register
from mlitool.tflite import validate_ops as V

# Element-wise: two operands of one type, broadcast.
_ELTWISE = dict(
    leading_dims=True,
    all_data=True,
    quantized=True,
    shapes=V.eltwise_shapes,
    checks=(
        C.one_operand_variable,
        C.operands_broadcast,
        C.broadcast_needs_mli2,
        C.broadcast_against_activation,
        C.output_broadcast_shape,
    ),
    lower=act.lower_eltwise,
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
            run=(_float, _tflite),
        )
    )


def _activation(name, *, per_element=True, slots=("input",), **facts) -> None:
    """Register an activation: the output has the input's shape. Those computed element by
    element take a leading dimension other than 1 as rows (`leading_dims`), not those along an
    axis (`per_element=False`). `facts`: its other OpSpec fields."""
    register(
        OpSpec(name, slots, quantized=True, shapes=V.same_shape, leading_dims=per_element, **facts)
    )


# Element by element, without options: name, MLI layer kind, lowering, element types, kernels.
for _name, _kind, _lower, _types, _run in (
    ("RELU", "relu", act.lower_relu, SAME, (F.relu, T.relu)),
    ("RELU6", "relu", act.lower_relu, SAME, (F.relu6, T.relu6)),
    ("RELU_N1_TO_1", "relu", act.lower_relu, SAME, (F.relu_n1_to_1, T.relu_n1_to_1)),
    ("LOGISTIC", "sigm", act.lower_lut, WIDEN, (F.logistic, T.logistic)),
    ("TANH", "tanh", act.lower_lut, WIDEN, (F.tanh, T.tanh)),
):
    _activation(_name, kind=_kind, lower=_lower, run=_run, types=_types)
_activation(
    "LEAKY_RELU",
    kind="leaky_relu",
    lower=act.lower_leaky_relu,
    run=(F.leaky_relu, T.leaky_relu),
    options="LeakyReluOptions",
    checks=(CV.finite_alpha,),
)
_activation(
    "PRELU",
    kind="prelu",
    lower=act.lower_prelu,
    run=(F.prelu, T.prelu),
    per_element=False,
    slots=("input", "alpha"),
    checks=(C.kernel_needs_mli2, C.prelu_slope_one_axis),
)
# Along an axis; the kernels write fixed output parameters (`lower_lut`), as LOGISTIC's do.
_ALONG_AXIS = dict(per_element=False, lower=act.lower_lut)
_activation(
    "SOFTMAX",
    kind="softmax",
    **_ALONG_AXIS,
    types=WIDEN,
    options="SoftmaxOptions",
    checks=(C.softmax_beta_one, C.softmax_one_axis_on_mli1),
    run=(F.softmax, T.softmax),
)
_activation(
    "L2_NORMALIZATION",
    kind="l2_normalize",
    **_ALONG_AXIS,
    options="L2NormOptions",
    checks=(C.kernel_needs_mli2,),
    run=(F.l2_normalization, T.l2_normalization),
)
for _name, _tflite in (("QUANTIZE", T.quantize), ("DEQUANTIZE", T.dequantize)):
    _activation(
        _name,
        kind="convert",
        lower=act.lower_quantize,
        run=(F.identity, _tflite),
        types=CONVERT,
        options=_name.capitalize() + "Options",
        checks=(C.float_needs_mli2,),
    )
