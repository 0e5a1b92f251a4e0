"""Built-in OpSpecs of the element-wise ops (ADD, SUB, MUL, MAXIMUM, MINIMUM) and the
activations and type conversions (RELU..., LOGISTIC, TANH, SOFTMAX, L2_NORMALIZATION, QUANTIZE,
DEQUANTIZE)."""

from __future__ import annotations

from mlitool.execute import float_ops as F
from mlitool.execute import tflite_ops as T
from mlitool.mli.lower import activations as act
from mlitool.mli.lower import checks as C
from mlitool.opspec import CONVERT, WIDEN, OpSpec, register
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

# Activations: the output has the input's shape. Those computed element by element take a
# leading dimension other than 1 as rows (`leading_dims`), not those along an axis.
_ACT = dict(quantized=True, shapes=V.same_shape)
_PER_ELEMENT = dict(_ACT, leading_dims=True)
for _name, _float, _tflite in (
    ("RELU", F.relu, T.relu),
    ("RELU6", F.relu6, T.relu6),
    ("RELU_N1_TO_1", F.relu_n1_to_1, T.relu_n1_to_1),
):
    register(
        OpSpec(
            _name,
            ("input",),
            **_PER_ELEMENT,
            kind="relu",
            lower=act.lower_relu,
            run=(_float, _tflite),
        )
    )
register(
    OpSpec(
        "LEAKY_RELU",
        ("input",),
        **_PER_ELEMENT,
        options="LeakyReluOptions",
        kind="leaky_relu",
        lower=act.lower_leaky_relu,
        run=(F.leaky_relu, T.leaky_relu),
    )
)
register(
    OpSpec(
        "PRELU",
        ("input", "alpha"),
        **_ACT,
        kind="prelu",
        checks=(C.kernel_needs_mli2, C.prelu_slope_one_axis),
        lower=act.lower_prelu,
        run=(F.prelu, T.prelu),
    )
)
for _name, _kind, _float, _tflite in (
    ("LOGISTIC", "sigm", F.logistic, T.logistic),
    ("TANH", "tanh", F.tanh, T.tanh),
):
    register(
        OpSpec(
            _name,
            ("input",),
            **_PER_ELEMENT,
            types=WIDEN,
            kind=_kind,
            lower=act.lower_lut,
            run=(_float, _tflite),
        )
    )
register(
    OpSpec(
        "SOFTMAX",
        ("input",),
        **_ACT,
        types=WIDEN,
        options="SoftmaxOptions",
        kind="softmax",
        checks=(C.softmax_beta_one, C.softmax_one_axis_on_mli1),
        lower=act.lower_lut,
        run=(F.softmax, T.softmax),
    )
)
register(
    OpSpec(
        "L2_NORMALIZATION",
        ("input",),
        **_ACT,
        options="L2NormOptions",
        kind="l2_normalize",
        checks=(C.kernel_needs_mli2,),
        lower=act.lower_lut,
        run=(F.l2_normalization, T.l2_normalization),
    )
)
for _name, _tflite in (("QUANTIZE", T.quantize), ("DEQUANTIZE", T.dequantize)):
    register(
        OpSpec(
            _name,
            ("input",),
            **_PER_ELEMENT,
            types=CONVERT,
            options=_name.capitalize() + "Options",
            kind="convert",
            checks=(C.float_needs_mli2,),
            lower=act.lower_quantize,
            run=(F.identity, _tflite),
        )
    )
