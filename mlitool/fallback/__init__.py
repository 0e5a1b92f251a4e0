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

import numpy as np

from mlitool.fallback.base import PREFIX, PRELUDE, FallbackKernel, helper_names
from mlitool.fallback.binary import BATCH_MATMUL8, BINARY8
from mlitool.fallback.compare import COMPARE8, SELECT8
from mlitool.fallback.fixedpoint_c import FIXEDPOINT
from mlitool.fallback.gather import GATHER4
from mlitool.fallback.log_softmax import LOG_SOFTMAX8
from mlitool.fallback.lut import LUT8
from mlitool.fallback.reduce import REDUCE8, REDUCE16
from mlitool.fallback.resize import RESIZE_BILINEAR
from mlitool.mli.types import MliLayer, MliModel

__all__ = [
    "KERNELS",
    "PREFIX",
    "PRELUDE",
    "FallbackKernel",
    "cfg_fields",
    "helper_names",
    "helpers",
    "kernel",
    "used",
]

# Every fallback kernel, by the name a layer's `kernel` holds.
KERNELS: dict[str, FallbackKernel] = {
    k.kernel: k
    for k in (
        LUT8,
        BINARY8,
        BATCH_MATMUL8,
        REDUCE8,
        REDUCE16,
        GATHER4,
        RESIZE_BILINEAR,
        LOG_SOFTMAX8,
        COMPARE8,
        SELECT8,
    )
}


def kernel(name: str) -> FallbackKernel:
    return KERNELS[name]


def cfg_fields(cfg_type: str) -> list[tuple[str, str, str, None]] | None:
    """The fields of a fallback config struct as `mlitool.mli.cfg_structs` lists them."""
    for k in KERNELS.values():
        if k.cfg_type == cfg_type:
            return [(f, "i32", f, None) for f in k.cfg]
    return None


def used(model: MliModel) -> list[FallbackKernel]:
    """The fallback kernels `model` calls, sorted by name."""
    names = sorted({la.kernel for la in model.layers if la.kind == "fallback"})
    return [KERNELS[n] for n in names]


def helpers(kernels: list[FallbackKernel]) -> str:
    """The C of the static helpers `kernels` share, defined once in NAME.c: the prelude, and the
    fixed-point helpers where one of them uses those."""
    return PRELUDE + (FIXEDPOINT if any(k.fixedpoint for k in kernels) else "")


def run_layer(layer: MliLayer, model: MliModel, xs: list, arith) -> np.ndarray:
    """The `mli` executor's runner of kind "fallback"."""
    return KERNELS[layer.kernel].run(layer, model, xs, arith)
