"""Built-in OpSpecs of the element-wise ops (ADD, SUB, MUL, MAXIMUM, MINIMUM) and the
activations and type conversions (RELU..., LOGISTIC, TANH, SOFTMAX, L2_NORMALIZATION, QUANTIZE,
DEQUANTIZE)."""

from __future__ import annotations

from mlitool.execute import float_ops as F
from mlitool.execute import tflite_ops as T
from mlitool.mli.lower import activations as act
from mlitool.mli.lower import checks as C
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


def _activation(name, kind, lower, run, *, per_element=True, slots=("input",), **facts) -> None:
    """Register an activation: the output has the input's shape. Those computed element by
    element take a leading dimension other than 1 as rows (`leading_dims`), not those along an
    axis (`per_element=False`). `facts`: its other OpSpec fields."""
    register(
        OpSpec(
            name,
            slots,
            kind=kind,
            lower=lower,
            run=run,
            quantized=True,
            shapes=V.same_shape,
            leading_dims=per_element,
            **facts,
        )
    )


# Element by element, without options: name, MLI layer kind, lowering, element types, kernels.
for _name, _kind, _lower, _types, _run in (
    ("RELU", "relu", act.lower_relu, SAME, (F.relu, T.relu)),
    ("RELU6", "relu", act.lower_relu, SAME, (F.relu6, T.relu6)),
    ("RELU_N1_TO_1", "relu", act.lower_relu, SAME, (F.relu_n1_to_1, T.relu_n1_to_1)),
    ("LOGISTIC", "sigm", act.lower_lut, WIDEN, (F.logistic, T.logistic)),
    ("TANH", "tanh", act.lower_lut, WIDEN, (F.tanh, T.tanh)),
):
    _activation(_name, _kind, _lower, _run, types=_types)
_activation(
    "LEAKY_RELU",
    "leaky_relu",
    act.lower_leaky_relu,
    (F.leaky_relu, T.leaky_relu),
    options="LeakyReluOptions",
)
_activation(
    "PRELU",
    "prelu",
    act.lower_prelu,
    (F.prelu, T.prelu),
    per_element=False,
    slots=("input", "alpha"),
    checks=(C.kernel_needs_mli2, C.prelu_slope_one_axis),
)
# Along an axis: name, MLI layer kind, element types, options table, support checks, kernels.
for _name, _kind, _types, _options, _checks, _run in (
    (
        "SOFTMAX",
        "softmax",
        WIDEN,
        "SoftmaxOptions",
        (C.softmax_beta_one, C.softmax_one_axis_on_mli1),
        (F.softmax, T.softmax),
    ),
    (
        "L2_NORMALIZATION",
        "l2_normalize",
        SAME,
        "L2NormOptions",
        (C.kernel_needs_mli2,),
        (F.l2_normalization, T.l2_normalization),
    ),
):
    _activation(
        _name,
        _kind,
        act.lower_lut,
        _run,
        per_element=False,
        types=_types,
        options=_options,
        checks=_checks,
    )
for _name, _tflite in (("QUANTIZE", T.quantize), ("DEQUANTIZE", T.dequantize)):
    _activation(
        _name,
        "convert",
        act.lower_quantize,
        (F.identity, _tflite),
        types=CONVERT,
        options=_name.capitalize() + "Options",
        checks=(C.float_needs_mli2,),
    )
