"""The `mli` execution mode: run the MliModel that `convert` emits, layer by layer.

The walker only routes arrays: every number comes from the MliModel (the same objects the C
emitter writes) and every computation from the kernel modules in `mlitool.execute.mli`.
Arrays carry a leading sample dimension; values are the integer containers of each tensor's
element type, in the tensor's MLI shape.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from mlitool.errors import UnsupportedError
from mlitool.execute import mli_views
from mlitool.execute.intops import Arith
from mlitool.mli.types import MliLayer, MliModel

Runner = Callable[[MliLayer, MliModel, list, Arith], np.ndarray]


def _runners() -> dict[str, Runner]:
    from mlitool.execute.mli import activations, convert, eltwise, mac, movement, pool

    table: dict[str, Runner] = {}
    for module in (mac, pool, eltwise, activations, movement, convert):
        table.update(module.LAYER_RUNNERS)
    table.update(view=_view, concat=_concat, padding=_padding)
    table.update(mli_views.LAYER_RUNNERS)
    return table


def _view(layer: MliLayer, model: MliModel, xs: list, arith: Arith) -> np.ndarray:
    """RESHAPE / SQUEEZE: no kernel call, the output aliases the input's memory."""
    out = model.tensor(layer.outputs[0])
    return xs[0].reshape((xs[0].shape[0],) + out.shape)


def _concat(layer: MliLayer, model: MliModel, xs: list, arith: Arith) -> np.ndarray:
    """mli_mov_concat-style copy: inputs already carry the output's parameters."""
    axis = int(layer.cfg["axis"])
    return np.concatenate(xs, axis=axis + 1)


def _padding(layer: MliLayer, model: MliModel, xs: list, arith: Arith) -> np.ndarray:
    """Constant padding with the encoding of real zero (the zero point, or 0 for FX)."""
    out = model.tensor(layer.outputs[0])
    inp = model.tensor(layer.inputs[0])
    pads = [(0, 0)] + [tuple(p) for p in layer.cfg["paddings"]]
    fill = int(out.zero_point[0]) if out.el_type.is_sa else 0
    del inp
    return np.pad(xs[0], pads, mode="constant", constant_values=fill)


def run_layer(layer: MliLayer, model: MliModel, xs: list, arith: Arith,
              runners: dict[str, Runner] | None = None) -> np.ndarray:
    runners = runners or _runners()
    runner = runners.get(layer.kind)
    if runner is None:
        raise UnsupportedError(f"the mli executor has no kernel for layer {layer.index} "
                               f"({layer.op_type} as {layer.kind})", model.source)
    out = runner(layer, model, xs, arith)
    expected = (xs[0].shape[0],) + model.tensor(layer.outputs[0]).shape
    if out.shape != expected:
        raise AssertionError(f"layer {layer.index} ({layer.kind}) produced {out.shape}, "
                             f"its output tensor says {expected}")
    return out


def run_model(model: MliModel, inputs: dict[str, np.ndarray], arith: Arith,
              keep: bool = False) -> dict[str, np.ndarray]:
    """Run every layer in order. `inputs` maps MLI input tensor names to batched arrays in the
    tensors' element types. Returns the model outputs (or every tensor when `keep`)."""
    if model.target != "2.0":
        raise UnsupportedError(f"the mli executor reproduces MLI 2.x arithmetic; target "
                               f"{model.target} cannot be executed (convert for --mli 2.0 to verify)",
                               model.source)
    runners = _runners()
    values: dict[str, np.ndarray] = dict(inputs)
    for layer in model.layers:
        if layer.kind == "view":              # no call: outputs are views of the inputs' buffer
            values.update(mli_views.run_view(layer, model, values))
            continue
        xs = [values[name] for name in layer.inputs]
        values[layer.outputs[0]] = run_layer(layer, model, xs, arith, runners)
    if keep:
        return values
    return {name: values[name] for name in model.outputs}
