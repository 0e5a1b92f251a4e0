"""The one adapter from an `MliLayer` to a kernel call: the kernel modules' `LAYER_RUNNERS` are
`runner(kernel, ...)` (but for the element-wise and recurrent kernels, whose operands are routed
differently)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from mlitool.errors import ModelFormatError
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.mli.types import MliLayer, MliModel, MliTensor

Runner = Callable[[MliLayer, MliModel, list, Arith], np.ndarray]


def param(layer: MliLayer, model: MliModel, role: str, required: bool = True) -> MliTensor | None:
    """The constant tensor `layer.params[role]` (ModelFormatError when a required one is
    missing or has no data; None for a missing optional one)."""
    name = layer.params.get(role)
    if name is None:
        if required:
            raise ModelFormatError(
                f"layer {layer.index} ({layer.kind}) has no {role!r} tensor", model.source
            )
        return None
    t = model.tensors[name]
    if required and t.data is None:
        raise ModelFormatError(
            f"layer {layer.index} ({layer.kind}): {role} tensor {name!r} has no data", model.source
        )
    return t


def _operand(layer: MliLayer, model: MliModel, role: str) -> MliTensor | None:
    if role in ("weights", "bias"):
        return model.tensors[getattr(layer, role)]
    optional = role.endswith("?")
    return param(layer, model, role.rstrip("?"), required=not optional)


def runner(
    kernel: Callable,
    *operands: str,
    cfg: bool = True,
    keywords: Callable[[MliLayer], dict] | None = None,
) -> Runner:
    """A runner calling `kernel(x, input tensor, *operands, output tensor[, layer.cfg], arith
    [, **keywords(layer)])`. `operands` name constant tensors: "weights" and "bias" (the layer's
    fields) or a key of `layer.params` ("epsilon?": optional, None when absent)."""

    def run(layer: MliLayer, model: MliModel, inputs: list, arith: Arith) -> np.ndarray:
        t = model.tensors
        args = [
            inputs[0],
            t[layer.inputs[0]],
            *(_operand(layer, model, role) for role in operands),
            t[layer.outputs[0]],
        ]
        if cfg:
            args.append(layer.cfg)
        return kernel(*args, arith, **(keywords(layer) if keywords else {}))

    run.__doc__ = f"Run a layer through {kernel.__name__}."
    return run
