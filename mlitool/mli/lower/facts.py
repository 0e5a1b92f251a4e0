"""What lowering reads off the IR graph: constant operands, the layer kind an op becomes (its
OpSpec's, refined by shapes), argmax rows and slice boxes. Used by the support check
and the per-op lowering alike."""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.mli import views as V
from mlitool.mli.lower.params import real
from mlitool.ops import spec as opspec
from mlitool.passes.as_conv import depthwise_as_conv, fc_as_conv, fc_rows

# The per-row zero points that turn argmax offsets into indices are int16.
ARGMAX_MAX_ZERO_POINT = 32767


def const_values(graph: ir.Graph, i: int) -> np.ndarray | None:
    t = graph.tensor(i)
    return None if t is None or t.data is None else np.asarray(t.data)


def axis_list(graph: ir.Graph, op: ir.Op, slot: int = 1) -> list[int] | None:
    v = const_values(graph, op.inputs[slot]) if len(op.inputs) > slot else None
    if v is None:
        return None
    return [int(a) for a in np.atleast_1d(v)]


def layer_kind(graph: ir.Graph, op: ir.Op) -> str:
    """The MLI layer kind a TFLite op becomes (before inserted layers); of a model's op, that of
    what the graph passes make of it."""
    if depthwise_as_conv(graph, op) or fc_as_conv(graph, op):
        return "conv2d"
    if op.type == "CONV_2D" and grouped_conv(graph, op):
        return "group_conv2d"
    if op.type == "DEPTHWISE_CONV_2D":
        w = graph.slot(op, "weights")
        return (
            "depthwise_conv2d"
            if w.shape[-1] == graph.slot(op, "input").shape[-1]
            else "group_conv2d"
        )
    if op.type == "MEAN" and not mean_is_pool(graph, op):
        return "fallback"
    return opspec.spec(op.type).kind


def grouped_conv(graph: ir.Graph, op: ir.Op) -> bool:
    """A CONV_2D whose filter depth is less than its input's (Keras `groups`): each group of
    filters reads its own slice of the input channels (MLI's group_conv2d)."""
    x, w = graph.slot(op, "input"), graph.slot(op, "weights")
    return len(x.shape) == 4 and len(w.shape) == 4 and w.shape[3] != x.shape[3]


def mean_is_pool(graph: ir.Graph, op: ir.Op) -> bool:
    """MEAN over H and W of a 4-D tensor: average pooling over the whole map (other axes run
    as fallback C)."""
    axes = axis_list(graph, op)
    shape = graph.tensors[op.inputs[0]].shape
    return axes is not None and len(shape) == 4 and sorted(a % 4 for a in axes) == [1, 2]


def rows_not_batch(graph: ir.Graph, op: ir.Op, t: ir.Tensor) -> bool:
    """A [rows, N] input or [rows, M] output of a multi-row FULLY_CONNECTED (units between
    allowed: PyTorch's time-major [T, 1, N]): the first dimension is rows of the matrix
    product, not a batch."""
    return (
        op.type == "FULLY_CONNECTED"
        and len(t.shape) >= 2
        and all(d == 1 for d in t.shape[1:-1])
        and fc_rows(graph, op) > 1
        and t.size % fc_rows(graph, op) == 0
        and t.shape[0] == fc_rows(graph, op)
    )


def argmax_rows(graph: ir.Graph, op: ir.Op) -> tuple[int | None, int]:
    """(rows, axis size) of an ARG_MAX seen as [rows, size] with the axis innermost, or
    (None, size) when dimensions after the axis are not all 1."""
    shape = graph.tensors[op.inputs[0]].shape
    axis = axis_list(graph, op)[0] % len(shape)
    if any(d != 1 for d in shape[axis + 1 :]):
        return None, int(shape[axis])
    return graph.tensors[op.inputs[0]].size // max(int(shape[axis]), 1), int(shape[axis])


def slice_boxes(graph: ir.Graph, op: ir.Op) -> tuple[int, list[V.Box]]:
    """(input tensor index, one `Box` per output) of a SPLIT / SPLIT_V / SLICE / STRIDED_SLICE /
    UNPACK.
    Raises UnsupportedError when a parameter is not constant or not expressible."""

    def ints(name: str) -> list[int]:
        slot = opspec.spec(op.type).slot(name)
        v = const_values(graph, op.inputs[slot]) if len(op.inputs) > slot else None
        if v is None:
            raise UnsupportedError(f"{op.type} input {slot} is not constant")
        return [int(a) for a in np.atleast_1d(v).reshape(-1)]

    if op.type == "SPLIT":
        x = op.input("input")
        shape = graph.tensors[x].shape
        axis = ints("axis")[0] % len(shape)
        n = len(op.outputs)
        if shape[axis] % n:
            raise UnsupportedError(f"SPLIT of dimension {shape[axis]} into {n} parts")
        return x, V.split_boxes(shape, axis, [shape[axis] // n] * n)
    x = op.input("input")
    shape = graph.tensors[x].shape
    if op.type == "UNPACK":  # pieces of 1 along the axis (the outputs drop it)
        axis = int(op.options.get("axis", 0)) % len(shape)
        return x, V.split_boxes(shape, axis, [1] * shape[axis])
    if op.type == "SPLIT_V":
        return x, V.split_boxes(shape, ints("axis")[0], ints("size_splits"))
    if op.type == "SLICE":
        return x, [V.slice_box(shape, ints("begin"), ints("size"))]
    return x, [V.strided_slice_box(shape, ints("begin"), ints("end"), ints("strides"), op.options)]


def transpose_moves_units_only(graph: ir.Graph, op: ir.Op) -> bool:
    """A TRANSPOSE whose constant permutation keeps the order of the axes longer than 1 moves no
    element: a reshape (an unrolled RNN's [1, T, N] -> [T, 1, N])."""
    perm = axis_list(graph, op)
    if perm is None:
        return False
    shape = graph.tensors[op.inputs[0]].shape
    moved = [a for a in perm if shape[a] != 1]
    return moved == sorted(moved)


def transpose_into_rows(graph: ir.Graph, op: ir.Op) -> bool:
    """A TRANSPOSE whose input or output leads with a dimension other than 1: PyTorch's
    time-major `x.permute(2, 0, 1)` ([1, C, T] -> [T, 1, C]), attention heads split off tokens
    ([17, 1, 3, 24] -> [3, 17, 1, 24]), PixelShuffle's rank-4 steps ([8, 2, 2, 64] ->
    [8, 2, 64, 2]). Such a dimension is rows (the MLI tensors keep every dimension), and the
    permute works on the full TFLite shapes, batch axis included, with the model's permutation."""
    perm = axis_list(graph, op)
    x, y = graph.tensors[op.inputs[0]].shape, graph.tensors[op.outputs[0]].shape
    return perm is not None and 2 <= len(x) <= 4 and (x[0] != 1 or y[0] != 1)


def concat_into_rows(graph: ir.Graph, op: ir.Op) -> bool:
    """A CONCATENATION along a leading axis into an output that leads with a dimension other
    than 1 (a time-major RNN's steps stacked: 32 x [1, 1, N] -> [32, 1, N]): that dimension is
    rows, which the MLI output keeps; batch-1 inputs are seen in their full shape."""
    y = graph.tensors[op.outputs[0]].shape
    axis = int(op.options.get("axis", 0)) % max(len(y), 1)
    return 2 <= len(y) <= 4 and axis == 0 and y[0] != 1


def transpose_leading_dims(graph: ir.Graph, op: ir.Op) -> bool:
    """TRANSPOSE's leading dimension is rows, not a batch: when it moves only unit axes (a
    reshape) or transposes a batch-1 tensor into rows."""
    return transpose_moves_units_only(graph, op) or transpose_into_rows(graph, op)


def all_zero(
    graph: ir.Graph, idx: int, ranges: dict, producers: dict[int, ir.Op], memo: dict[int, bool]
) -> bool:
    """TFLite tensor `idx` holds only zeros: a constant of zeros, a tensor calibrated to [0, 0],
    or the product (MUL) of one (a GRU's zero initial state times a gate). Any FX frac bits
    represent it exactly, whatever scale the model gives it. `memo`: answers so far (a chain of
    squares would otherwise be walked once per path)."""
    if idx not in memo:
        t, op = graph.tensors[idx], producers.get(idx)
        if t.data is not None:
            memo[idx] = t.size > 0 and t.dtype != "bool" and not np.any(real(t))
        elif tuple(ranges.get(idx, (None, None))) == (0, 0):
            memo[idx] = True
        else:
            memo[idx] = (
                op is not None
                and op.type == "MUL"
                and any(all_zero(graph, i, ranges, producers, memo) for i in op.inputs[:2])
            )
    return memo[idx]
