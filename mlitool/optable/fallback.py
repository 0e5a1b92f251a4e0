"""Built-in OpSpecs of ops MLI has no kernel for: lowered onto mlitool's fallback C
(`mlitool.fallback`, `mlitool.mli.lower.fallback`) and run by the executors with TFLite's
arithmetic (`mlitool.execute.unary`...)."""

from __future__ import annotations

from mlitool.execute import unary as U
from mlitool.mli.lower import fallback as FB
from mlitool.opspec import OpSpec, register
from mlitool.tflite import validate_ops as V


def unary_spec(u: U.Unary) -> OpSpec:
    """An element-wise unary op: int8 through a 256-entry table of TFLite's results."""
    return OpSpec(
        u.name,
        ("input",),
        options=u.options,
        quantized=True,
        shapes=V.same_shape,
        kind="fallback",
        checks=FB.UNARY_CHECKS,
        lower=FB.lower_unary_lut(u),
        run=(U.float_kernel(u), U.tflite_kernel(u)),
    )


register(unary_spec(U.ELU))
