"""The `mli` execution mode: run the MliModel that `convert` emits, layer by layer.

The walker only routes arrays: every number comes from the MliModel (the same objects the C
emitter writes) and every computation from the kernel modules in `mlitool.execute.mli.kernels`.
Activation arrays carry a leading sample dimension; values are the integer containers of each
tensor's element type (float32 for FP32 tensors), in the tensor's MLI shape. Constant operands
(Role.PARAM tensors in a layer's `inputs`, e.g. the constant of an ADD) are passed as their
`.data` without the sample axis; the kernels broadcast them over the batch.

Only MLI 2.x is executed: the arithmetic reproduced here is that of MLI 2.0.2 (checked against
the golden vectors); MLI 1.x has no reference build to check a reproduction against.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterable

import numpy as np

from mlitool.errors import InputDataError, UnsupportedError
from mlitool.execute.mli import view_layers as mli_view_layers
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.mli.kinds import kind_of
from mlitool.mli.types import MliLayer, MliModel, MliTensor, row_major_strides

Runner = Callable[[MliLayer, MliModel, list, Arith], np.ndarray]

_RUNNERS: dict[str, Runner] = {}


def runner_of(layer: MliLayer) -> Runner | None:
    """The runner of a layer: its kinds table entry's (`mlitool.mli.kinds`; a fallback layer's
    is its kernel's numpy twin), loaded once; None for a kind the executor cannot run."""
    key = layer.kernel if layer.kind == "fallback" else layer.kind
    if key not in _RUNNERS:
        entry = kind_of(layer)
        found = entry.runner() if entry is not None else None
        if found is None:
            return None
        _RUNNERS[key] = found
    return _RUNNERS[key]


def _concat(layer: MliLayer, model: MliModel, xs: list, arith: Arith) -> np.ndarray:
    """mli_mov_tensor_sync of each input into the output at cfg dst_offset: a plain copy (lowering
    gives every input the output's parameters, converting where they differ)."""
    out = model.tensor(layer.outputs[0])
    axis = int(layer.cfg["axis"])
    n = max(x.shape[0] for x in xs)
    res = np.empty((n,) + out.shape, dtype=out.el_type.dtype)
    offsets = layer.cfg.get("dst_offset")
    start = 0
    for i, x in enumerate(xs):
        at = int(offsets[i][axis]) if offsets else start
        size = x.shape[axis + 1]
        index = [slice(None)] * res.ndim
        index[axis + 1] = slice(at, at + size)
        res[tuple(index)] = x
        start = at + size
    return res


def _padding(layer: MliLayer, model: MliModel, xs: list, arith: Arith) -> np.ndarray:
    """mli_mov with padding (HWC, channels too): the border is filled with raw zeros (lowering only emits it
    where raw zero encodes real zero: FX, or SA with zero point 0)."""
    out = model.tensor(layer.outputs[0])
    c = layer.cfg
    if "padding_pre" in c:  # per MLI dimension (a rank-2 [T, C] tensor)
        pads = [(0, 0)] + [(int(a), int(b)) for a, b in zip(c["padding_pre"], c["padding_post"])]
        pads = pads[: xs[0].ndim]
    else:
        pads = [
            (0, 0),
            (int(c["padding_top"]), int(c["padding_bottom"])),
            (int(c["padding_left"]), int(c["padding_right"])),
            (int(c.get("padding_channels_before", 0)), int(c.get("padding_channels_after", 0))),
        ]
    res = np.pad(xs[0], pads, mode="constant", constant_values=0)
    return res.astype(out.el_type.dtype, copy=False)


# The runners of the data-movement kinds the table names this module for.
LAYER_RUNNERS: dict[str, Runner] = {"concat": _concat, "padding": _padding}


def check_mli_version(model: MliModel) -> None:
    if not model.target.executable:
        raise UnsupportedError(
            f"the mli executor reproduces MLI 2.0.2 arithmetic (checked against the real kernels); "
            f"MLI {model.mli_version} has no reference build to check a reproduction against, so this "
            "model cannot be executed: convert with --mli 2.0 to run or verify it",
            model.source,
        )


def layer_inputs(layer: MliLayer, model: MliModel, values: dict[str, np.ndarray]) -> list:
    """The arrays a layer reads: computed activations, or a constant's data (no sample axis)."""
    xs = []
    for name in layer.inputs:
        if name in values:
            xs.append(values[name])
            continue
        t = model.tensor(name)
        if t.data is None:
            raise InputDataError(
                f"layer {layer.index} ({layer.kind}) reads {name!r}, which no "
                "earlier layer wrote and no input provides",
                model.source,
            )
        xs.append(t.data)
    return xs


def _unit_dims_only(a: tuple, b: tuple) -> bool:
    """Shapes `a` and `b` differ in dimensions of 1 only (the same elements in the same order)."""
    return [d for d in a if d != 1] == [d for d in b if d != 1]


def run_layer(layer: MliLayer, model: MliModel, xs: list, arith: Arith, n: int) -> np.ndarray:
    runner = runner_of(layer)
    if runner is None:
        raise UnsupportedError(
            f"the mli executor has no kernel for layer {layer.index} "
            f"({layer.op_type} as {layer.kind})",
            model.source,
        )
    out = np.asarray(runner(layer, model, xs, arith))
    expected = (n,) + model.tensor(layer.outputs[0]).shape
    if out.shape != expected:
        if out.shape[1:] == expected[1:] and out.shape[0] == 1:
            out = np.broadcast_to(out, expected)  # every operand was a constant
        elif layer.kind == "fallback" and _unit_dims_only(out.shape[1:], expected[1:]):
            # a fallback C writes the output's elements in order; numpy's broadcast kept an
            # operand's unit dimension (an MLI argmax's [1, 1] for TFLite's [1])
            out = out.reshape(expected)
        else:
            raise AssertionError(
                f"layer {layer.index} ({layer.kind}) produced {out.shape}, "
                f"its output tensor says {expected}"
            )
    return np.ascontiguousarray(out, dtype=model.tensor(layer.outputs[0]).el_type.dtype)


def run_slices(layer: MliLayer, model: MliModel, xs: list, arith: Arith, n: int) -> np.ndarray:
    """A layer called once per slice (`SliceCalls`), every call at once: each operand's slices
    are gathered (a repeated slice is gathered again), the kernel runs over calls x samples, and
    the results land in the output's slices. The calls are independent, so this is what the
    runtime's loop computes."""
    calls, out = layer.calls, model.tensor(layer.outputs[0])
    rest = [d for d in range(out.rank) if d not in calls.loops]
    index = np.indices(out.shape, np.int64).reshape(out.rank, -1)  # every output element

    def positions(t: MliTensor, view: MliTensor) -> np.ndarray:
        """(calls, slice elements): flat row-major positions of every call's slice in `t`,
        the calls in loop order and each slice's elements in the order of the other output
        dimensions (the view's row-major order)."""
        lead = (1,) * (out.rank - t.rank)
        shape = lead + t.shape
        strides = row_major_strides(shape)
        steps = [st if ext == full else 0 for st, ext, full in zip(strides, shape, out.shape)]
        flat = (np.asarray(steps, np.int64) @ index).reshape(out.shape)
        flat = flat.transpose(list(calls.loops) + rest).reshape(calls.count(out.shape), -1)
        return flat if view.size == flat.shape[1] else flat[:, :1]  # one element: the scalar

    views = [model.tensor(v) for v in calls.views]
    gathered = []
    for x, name, view in zip(xs, layer.inputs, views):
        t = model.tensor(name)
        where = positions(t, view)
        flat = np.asarray(x).reshape((-1, t.size))  # a constant is a batch of one
        gathered.append(
            np.broadcast_to(flat[:, where], (n,) + where.shape).reshape((-1,) + view.shape)
        )
    one_call = dataclasses.replace(
        layer, inputs=list(calls.views[:-1]), outputs=[calls.views[-1]], calls=None
    )
    res = run_layer(one_call, model, gathered, arith, len(gathered[0]))
    result = np.empty((n, out.size), dtype=out.el_type.dtype)
    where = positions(out, views[-1])
    result[:, where] = res.reshape((n,) + where.shape)
    return result.reshape((n,) + out.shape)


def run_layers(
    model: MliModel,
    layers: Iterable[MliLayer],
    values: dict[str, np.ndarray],
    arith: Arith,
    n: int,
    *,
    keep: bool = True,
    wanted: set[str] | None = None,
) -> dict[str, np.ndarray]:
    """Run `layers` in order over `values` (updated in place and returned). Without `keep`,
    arrays no later layer reads are dropped unless in `wanted`."""
    layers = list(layers)
    last_use: dict[str, int] = {}
    for pos, layer in enumerate(layers):
        for name in layer.inputs:
            last_use[name] = pos
    for pos, layer in enumerate(layers):
        if layer.kind == "view":  # no call: outputs are views of the inputs' buffer
            values.update(mli_view_layers.run_view(layer, model, values))
        else:
            xs = layer_inputs(layer, model, values)
            run = run_slices if layer.calls else run_layer
            values[layer.outputs[0]] = run(layer, model, xs, arith, n)
        if not keep:
            for name in set(layer.inputs):
                if last_use.get(name) == pos and name in values and name not in (wanted or ()):
                    del values[name]
    return values


def run_model(
    model: MliModel, inputs: dict[str, np.ndarray], arith: Arith, keep: bool = False
) -> dict[str, np.ndarray]:
    """Run every layer in order. `inputs` maps MLI input tensor names to batched arrays in the
    tensors' element types. Returns the model outputs (or every tensor when `keep`)."""
    check_mli_version(model)
    missing = [name for name in model.inputs if name not in inputs]
    if missing:
        raise InputDataError(f"no data for MLI input tensor(s) {', '.join(missing)}", model.source)
    sizes = {np.asarray(v).shape[0] for v in inputs.values()}
    if len(sizes) != 1:
        raise InputDataError(f"inputs have different sample counts: {sorted(sizes)}", model.source)
    n = sizes.pop()
    values: dict[str, np.ndarray] = {}
    for name, array in inputs.items():
        t = model.tensor(name)
        a = np.asarray(array)
        if a.shape[1:] != t.shape:
            raise InputDataError(
                f"MLI input {name!r}: expected (N,) + {t.shape}, got {a.shape}", model.source
            )
        values[name] = a.astype(t.el_type.dtype, copy=False)
    values = run_layers(model, model.layers, values, arith, n, keep=keep, wanted=set(model.outputs))
    if keep:
        return values
    return {name: values[name] for name in model.outputs}
