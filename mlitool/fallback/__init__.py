"""Fallback kernels: portable C for the ops MLI has no kernel for, and their numpy twins.

A fallback layer is an `MliLayer` of kind "fallback" whose `kernel` names one `FallbackKernel`
("mlitool_lut8", ...). The emitter writes that kernel's C (C99, no allocation, only for kernels
the model uses) into NAME.c under the model's prefix and `NAME_run` calls it like any MLI
kernel, with the same argument order (inputs, params, cfg, outputs) and the layer hook after
it. The `mli` executor runs `run`, the same integer arithmetic, from the same layer objects.

The arithmetic is TFLite's: lowering computes every number from the model's own quantization,
exactly as the tflite execution mode does (an int8 unary op becomes a 256-entry table computed
by the tflite-mode kernel itself), so C, executor and tflite mode agree by construction.
Fallback kernels read and write SA8 tensors; in FX formats lowering converts around them.
"""

from __future__ import annotations

from mlitool.fallback.base import PREFIX, PRELUDE, FallbackKernel, helper_names
from mlitool.fallback.binary import BATCH_MATMUL8, BINARY8
from mlitool.fallback.compare import COMPARE8, SELECT8
from mlitool.fallback.fixedpoint_c import FIXEDPOINT
from mlitool.fallback.gather import GATHER4
from mlitool.fallback.log_softmax import LOG_SOFTMAX8
from mlitool.fallback.lut import LUT8
from mlitool.fallback.reduce import REDUCE8, REDUCE16
from mlitool.fallback.resize import RESIZE_BILINEAR
from mlitool.mli.kinds import KINDS, PER_ELEMENT, register_fallback
from mlitool.mli.types import MliModel

__all__ = [
    "PREFIX",
    "PRELUDE",
    "FallbackKernel",
    "helper_names",
    "helpers",
    "kernel",
    "used",
]

# Every fallback kernel is an entry of the layer kinds table, under the name a layer's `kernel`
# holds (mlitool.mli.kinds.KINDS; `kinds.fallback_kernels()` lists them). The table look-up runs
# each output element from its input element alone: it tiles by rows as an activation does.
register_fallback(LUT8, row_tiling=PER_ELEMENT)
for _k in (
    BINARY8,
    BATCH_MATMUL8,
    REDUCE8,
    REDUCE16,
    GATHER4,
    RESIZE_BILINEAR,
    LOG_SOFTMAX8,
    COMPARE8,
    SELECT8,
):
    register_fallback(_k)


def kernel(name: str) -> FallbackKernel:
    """The fallback kernel a layer's `kernel` names (KeyError for none)."""
    entry = KINDS[name]
    if entry.fallback is None:
        raise KeyError(f"{name!r} is not a fallback kernel")
    return entry.fallback


def used(model: MliModel) -> list[FallbackKernel]:
    """The fallback kernels `model` calls, sorted by name."""
    names = sorted({la.kernel for la in model.layers if la.kind == "fallback"})
    return [kernel(n) for n in names]


def helpers(kernels: list[FallbackKernel]) -> str:
    """The C of the static helpers `kernels` share, defined once in NAME.c: the prelude, and the
    fixed-point helpers where one of them uses those."""
    return PRELUDE + (FIXEDPOINT if any(k.fixedpoint for k in kernels) else "")
