"""OpSpecs of the activations: RELU, RELU6, RELU_N1_TO_1, LEAKY_RELU, PRELU, LOGISTIC, TANH,
SOFTMAX, L2_NORMALIZATION. Float mode `float_mode.py`, TFLite's integer arithmetic
`tflite_mode.py` (int16 `sigmoid16.py`, `softmax16.py`), lowering onto MLI's activation
kernels `lower.py`, support checks `checks.py`."""

from __future__ import annotations

from mlitool.mli.lower import checks as C
from mlitool.mli.lower import checks_values as CV
from mlitool.ops.activation import checks as AC
from mlitool.ops.activation import float_mode as F
from mlitool.ops.activation import lower as act
from mlitool.ops.activation import tflite_mode as T
from mlitool.ops.spec import SAME, WIDEN, OpSpec, register
from mlitool.tflite import validate_ops as V


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
    checks=(C.kernel_needs_mli2, AC.prelu_general_slope_int8),
)
# Along an axis; the kernels write fixed output parameters (`lower_lut`), as LOGISTIC's do.
_ALONG_AXIS = dict(per_element=False, lower=act.lower_lut)
_activation(
    "SOFTMAX",
    kind="softmax",
    **_ALONG_AXIS,
    types=WIDEN,
    options="SoftmaxOptions",
    checks=(AC.softmax_beta_one, AC.softmax_one_axis_on_mli1),
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
