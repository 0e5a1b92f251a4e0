"""`fallback_op`: registers an op MLI has no kernel for, lowered onto mlitool's fallback C
(layer kind "fallback", `mlitool.mli.fallback`) and run by the executors with TFLite's
arithmetic. Every family with such ops registers them through it."""

from __future__ import annotations

from mlitool.ops.spec import OpSpec, register


def fallback_op(name: str, slots: tuple[str, ...], *, quantized: bool = True, **facts) -> OpSpec:
    """Register `name`, lowered onto fallback C (layer kind "fallback"). The C computes on
    quantized integers, so integer activations must carry quantization (`quantized`) unless
    the op only moves elements; `facts`: its other OpSpec fields."""
    return register(OpSpec(name, slots, quantized=quantized, kind="fallback", **facts))
