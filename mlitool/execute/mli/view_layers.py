"""`mli` mode: view layers (no kernel call) and copy layers (`mli_mov_tensor_sync`).

A view layer's inputs and outputs all live in one root buffer. The walker runs it as the memory
does: every input's values are written into the root through the input's view (offset,
mem_stride, shape — `mlitool.mli.subtensor.view_data`), then every output reads its elements
back through its own view. So a SPLIT reads slices of its input, a CONCATENATION whose producers
wrote their slices in place assembles the output, a RESHAPE reinterprets the same elements; an
output element no input wrote means the lowering built an inconsistent view (AssertionError).

Public: `run_view(layer, model, values)` -> {output name: batched array}; `LAYER_RUNNERS`.
"""

from __future__ import annotations

import numpy as np

from mlitool.execute.mli.kernels.intops import Arith
from mlitool.mli.types import MliLayer, MliModel, MliTensor
from mlitool.mli.views import flat_index, mov_source_box


def _root(model: MliModel, layer: MliLayer) -> MliTensor:
    roots = set()
    for name in layer.inputs + layer.outputs:
        t = model.tensor(name)
        root = model.tensor(t.buffer) if t.buffer is not None else t
        if root.buffer is not None:
            raise AssertionError(
                f"tensor '{name}' views '{t.buffer}', itself a view: views "
                "must name their root buffer"
            )
        roots.add(root.name)
    if len(roots) != 1:
        raise AssertionError(
            f"view layer {layer.index} ({layer.op_type}) spans buffers "
            f"{sorted(roots)}; a view layer lives in one buffer"
        )
    return model.tensor(roots.pop())


def _value(model: MliModel, values: dict, name: str, n: int) -> np.ndarray:
    if name in values:
        return values[name]
    t = model.tensor(name)
    if t.data is None:
        raise AssertionError(f"tensor '{name}' has no value yet")
    return np.broadcast_to(t.data, (n,) + t.shape)


def run_view(layer: MliLayer, model: MliModel, values: dict) -> dict[str, np.ndarray]:
    """Outputs of a view layer from its inputs, through the root buffer they share."""
    root = _root(model, layer)
    size = root.nbytes // root.el_type.dtype.itemsize
    first = next((values[n] for n in layer.inputs if n in values), None)
    n = first.shape[0] if first is not None else 1
    ins = [_value(model, values, name, n) for name in layer.inputs]
    flat = np.zeros((n, size), dtype=ins[0].dtype)
    written = np.zeros(size, dtype=bool)
    for name, x in zip(layer.inputs, ins):
        idx = flat_index(model.tensor(name), size).reshape(-1)
        flat[:, idx] = x.reshape(n, -1)
        written[idx] = True
    out = {}
    for name in layer.outputs:
        t = model.tensor(name)
        idx = flat_index(t, size).reshape(-1)
        if not written[idx].all():
            raise AssertionError(
                f"view '{name}' of layer {layer.index} ({layer.op_type}) reads "
                f"elements of '{root.name}' that none of its inputs holds"
            )
        out[name] = flat[:, idx].reshape((n,) + t.shape)
    return out


def run_copy(layer: MliLayer, model: MliModel, xs: list, arith: Arith) -> np.ndarray:
    """`mli_mov_tensor_sync` with offset / size / sub_sample_step (no padding, permutation or
    destination offset: the destination is a whole tensor, possibly a view)."""
    out = model.tensor(layer.outputs[0])
    x = xs[0]
    if model.tensor(layer.inputs[0]).data is not None:  # a constant: a batch of one
        x = np.asarray(x)[None]
    box = mov_source_box(layer.cfg, x.ndim - 1)
    return np.ascontiguousarray(x[(slice(None),) + box]).reshape((x.shape[0],) + out.shape)


LAYER_RUNNERS = {"copy": run_copy}
