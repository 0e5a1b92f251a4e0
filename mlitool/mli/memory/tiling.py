"""Tiling a layer by output rows, for the fast-memory plan (`mlitool.mli.memory.placement`).

A convolution, depthwise convolution or pooling layer over HWC activations computes output row
`o` from input rows `o*stride - padding_top + k*dilation` (k < kernel height), zero padding where
those fall outside the input. So output rows [o0, o1) need only input rows
[o0*stride - padding_top, (o1 - 1)*stride - padding_top + effective kernel height), clipped to the
input, and the rows cut off by the clip are the tile's own padding: only the edge tiles keep
padding_top / padding_bottom, the others read real rows (the halo) instead. One call per tile
on those rows gives the same output bits as one call on the whole input: every output element
sees the same taps, in the same order. Element-wise layers over operands of one shape are the
same with a one-row kernel: each tile reads the rows it writes. So are the per-element
activations (relu, leaky_relu, prelu with a slope along the channels, the LUT kernels sigm and
tanh, mli_hlp_convert_tensor and the fallback table look-up): every output element is a function
of its input element alone, whatever the rows around it. Which kinds tile how is their entry's
`row_tiling` / `channel_tiling` in the kinds table (`mlitool.mli.kinds`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlitool.mli.kinds import ELEMENTWISE, PER_ELEMENT, WINDOW, kind_of
from mlitool.mli.types import MliLayer, MliModel, row_major_strides


def _row_tiling(layer: MliLayer) -> str | None:
    """The layer's class of tiling by rows (its kinds table entry's), None if it has none."""
    entry = kind_of(layer)
    return entry.row_tiling if entry is not None else None


def _per_element(layer: MliLayer) -> bool:
    return _row_tiling(layer) == PER_ELEMENT


def _elementwise(layer: MliLayer) -> bool:
    return _row_tiling(layer) == ELEMENTWISE


def _one_row_kernel(layer: MliLayer) -> bool:
    return _row_tiling(layer) in (ELEMENTWISE, PER_ELEMENT)


@dataclass(frozen=True)
class Tile:
    out_row: int
    out_rows: int
    in_row: int
    in_rows: int
    pad_top: int
    pad_bottom: int


def _dense(model: MliModel, name: str) -> bool:
    t = model.tensors[name]
    return t.rank == 3 and tuple(t.mem_stride) == row_major_strides(t.shape)


def untileable_reason(model: MliModel, layer: MliLayer) -> str | None:
    """Why the layer cannot be tiled by output rows, or None if it can."""
    if _row_tiling(layer) not in (WINDOW, ELEMENTWISE, PER_ELEMENT):
        return f"{layer.kind} layers are not tiled"
    if layer.calls is not None:
        return "it runs as one call per slice"
    names = layer.inputs + layer.outputs
    out = model.tensors[layer.outputs[0]]
    if len(layer.outputs) != 1 or not all(_dense(model, n) for n in names):
        return "its operands are not dense HWC tensors"
    if _elementwise(layer) and any(
        model.tensors[n].shape != out.shape or model.tensors[n].role.is_constant
        for n in layer.inputs
    ):
        return "its operands are not activations of one shape"
    if not _elementwise(layer) and len(layer.inputs) != 1:
        return "it has more than one input"
    if _per_element(layer) and model.tensors[layer.inputs[0]].shape != out.shape:
        return "its input and output differ in shape"
    if layer.kind == "prelu" and layer.cfg.get("axis") == 0:
        return "its slope varies along the rows"
    if model.tensors[layer.outputs[0]].shape[0] < 2:
        return "its output has a single row"
    return None


def _kernel_rows(model: MliModel, layer: MliLayer) -> int:
    """Input rows one output row reads (the effective kernel height)."""
    cfg = layer.cfg
    if _one_row_kernel(layer):
        return 1
    if layer.kind in ("avepool", "maxpool"):
        return int(cfg["kernel_height"])
    kh = model.tensors[layer.weights].shape[0]  # HWCN / HW1N
    return (kh - 1) * int(cfg.get("dilation_height", 1) or 1) + 1


def row_tiles(model: MliModel, layer: MliLayer, n: int) -> tuple[Tile, ...]:
    """The layer's output rows in `n` tiles as even as can be (sizes differ by at most one)."""
    rows_in = model.tensors[layer.inputs[0]].shape[0]
    rows_out = model.tensors[layer.outputs[0]].shape[0]
    stride, pad = int(layer.cfg.get("stride_height", 1)), int(layer.cfg.get("padding_top", 0))
    bounds = np.arange(n + 1) * rows_out // n
    o0, o1 = bounds[:-1], bounds[1:]
    start = o0 * stride - pad  # first input row, in unpadded coordinates
    end = (o1 - 1) * stride - pad + _kernel_rows(model, layer)  # one past the last
    i0, i1 = np.maximum(start, 0), np.minimum(end, rows_in)
    cols = zip(o0, o1 - o0, i0, i1 - i0, i0 - start, end - i1)
    return tuple(Tile(*map(int, c)) for c in cols)


def row_bytes(model: MliModel, name: str) -> int:
    """Bytes of one row of a dense HWC tensor."""
    t = model.tensors[name]
    return t.shape[1] * t.shape[2] * t.el_type.dtype.itemsize


# Tiling by output channels / neurons: each output channel is one dot product of its own weight
# column (HWCN's N, FC's second dimension), bias and per-axis parameters, so a call on a slice
# of them writes exactly those channels' bits; the output is a strided view of the slice
# (the kinds with `channel_tiling`: conv2d, fully_connected).


def channel_untileable_reason(model: MliModel, layer: MliLayer) -> str | None:
    """Why the layer cannot be tiled by output channels, or None if it can."""
    entry = kind_of(layer)
    if entry is None or not entry.channel_tiling:
        return f"{layer.kind} layers are not tiled by channels"
    if layer.calls is not None or len(layer.outputs) != 1 or not layer.weights:
        return "it runs as one call per slice"
    names = [layer.outputs[0], layer.weights] + ([layer.bias] if layer.bias else [])
    for n in names:
        t = model.tensors[n]
        if tuple(t.mem_stride) != row_major_strides(t.shape):
            return "its output or weights are not dense"
    if model.tensors[layer.outputs[0]].shape[-1] < 2:
        return "it has a single output channel"
    return None


def channel_tiles(model: MliModel, layer: MliLayer, n: int) -> tuple[tuple[int, int], ...]:
    """(first channel, channels) of `n` slices as even as can be."""
    bounds = np.arange(n + 1) * model.tensors[layer.outputs[0]].shape[-1] // n
    return tuple((int(a), int(b - a)) for a, b in zip(bounds[:-1], bounds[1:]))


def channel_bytes(model: MliModel, name: str) -> int:
    """Bytes of one output channel's slice of a weight or bias tensor (its last dimension)."""
    t = model.tensors[name]
    return t.size // t.shape[-1] * t.el_type.dtype.itemsize
