"""Built-in OpSpecs of ops MLI has no kernel for: lowered onto mlitool's fallback C
(`mlitool.fallback`, `mlitool.mli.lower.fallback`) and run by the executors with TFLite's
arithmetic (`mlitool.execute.unary`...). `fallback_op` registers every such op."""

from __future__ import annotations

from collections.abc import Callable

from mlitool.execute import unary as U
from mlitool.mli.lower import fallback as FB
from mlitool.mli.lower import fallback_movement as FM
from mlitool.opspec import OpSpec, register
from mlitool.optable.kernel_shapes import computed_shapes
from mlitool.tflite import validate_ops as V


def fallback_op(name: str, slots: tuple[str, ...], *, quantized: bool = True, **facts) -> OpSpec:
    """Register `name`, lowered onto fallback C (layer kind "fallback"). The C computes on
    quantized integers, so integer activations must carry quantization (`quantized`) unless
    the op only moves elements; `facts`: its other OpSpec fields."""
    return register(OpSpec(name, slots, quantized=quantized, kind="fallback", **facts))


def gather_op(
    name: str,
    slots: tuple[str, ...],
    options: str,
    kernel: Callable,
    params: tuple[str, ...] = (),
    checks: tuple[Callable, ...] = FM.CHECKS,
) -> OpSpec:
    """Register `name`, whose output is its input's elements picked along each axis by index
    tables (`gather4`, any element type): one `kernel` runs in both executor modes and gives
    validation the output shape."""
    return fallback_op(
        name,
        slots,
        quantized=False,
        options=options,
        params=params,
        shapes=computed_shapes,
        checks=checks,
        lower=FM.lower_index_gather,
        run=(kernel,) * 2,
    )


def unary_op(u: U.Unary) -> OpSpec:
    """Register the element-wise unary op `u`: int8 through a 256-entry table of TFLite's
    results."""
    return fallback_op(
        u.name,
        ("input",),
        options=u.options,
        shapes=V.same_shape,
        checks=FB.UNARY_CHECKS,
        lower=FB.lower_unary_lut(u),
        run=(U.float_kernel(u), U.tflite_kernel(u)),
    )


unary_op(U.ELU)
