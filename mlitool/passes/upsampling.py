"""Nearest upsampling built of data movement, as one RESIZE_NEAREST_NEIGHBOR.

The TFLite converter writes Keras 3's nearest `UpSampling2D` as EXPAND_DIMS (a unit axis after H
or W) -> TILE (repeat it) -> RESHAPE (merge it), once per axis (older exports: RESHAPE to rank 5
-> TILE -> RESHAPE). `fuse_tiled_upsampling` finds chains of EXPAND_DIMS / RESHAPE / TILE from a
4-D tensor [N, H, W, C] to [N, a*H, b*W, C] that move every element exactly where
RESIZE_NEAREST_NEIGHBOR (align_corners and half_pixel_centers False) puts it, and replaces each
by that one op (the H and W chains together when one follows the other). It decides by where
the chain moves elements, not by op names: the chain is run on the elements' own positions and
compared with the positions TFLite's resize computes (`shape_ops.nearest_sources`, its float32
arithmetic), so the rewrite is exact, and every dtype and quantization is kept (both copy bytes).

Why in the model stage (`runner.PASSES`, after constant folding): every stage then sees the one op
(validation, the support check, lowering, inspect, the executors), so no consumer meets the TILE
the chain contained, which has no lowering of its own; the lowering-stage passes
run after the support check, which would refuse that TILE first. It runs after constant folding
because the RESHAPE targets of a dynamic-batch export are only known then. The new op keeps the
index of the chain's first op (as `inspect` shows it and config overrides name it) and lists the
ops it replaces in its options (`REWRITTEN_FROM`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool import ir
from mlitool.geometry import nearest_sources
from mlitool.passes.context import PassContext

REWRITTEN_FROM = "rewritten_from"  # option of the new op: labels of the ops it replaces
_MOVES = ("EXPAND_DIMS", "RESHAPE", "TILE")


def fuse_tiled_upsampling(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """`graph` with each nearest-upsampling chain replaced by one RESIZE_NEAREST_NEIGHBOR
    (`ctx.rewritten`: label of the new op -> labels of the ops it replaces); the same graph
    when there is none."""
    consumers = graph.consumers()
    tensors, replaced, rewrites = list(graph.tensors), {}, {}
    for op in graph.ops:
        if op.index in replaced:
            continue
        chain = _chain(graph, op, consumers)
        if not chain:
            continue
        x, y = graph.tensors[op.inputs[0]], graph.tensors[chain[-1].outputs[0]]
        size = ir.Tensor(
            len(tensors), f"{y.name}/size", (2,), "int32", np.array(y.shape[1:3], np.int32)
        )
        tensors.append(size)
        labels = [c.label for c in chain]
        resize = ir.Op(
            op.index,
            "RESIZE_NEAREST_NEIGHBOR",
            (x.index, size.index),
            (y.index,),
            {"align_corners": False, "half_pixel_centers": False, REWRITTEN_FROM: tuple(labels)},
            options_table="ResizeNearestNeighborOptions",
        )
        replaced.update({c.index: None for c in chain})
        replaced[op.index] = resize
        rewrites[resize.label] = labels
    if not rewrites:
        return graph
    ctx.rewritten.update(rewrites)
    ops = [replaced.get(op.index, op) for op in graph.ops]
    return dataclasses.replace(graph, tensors=tensors, ops=[op for op in ops if op])


_MOST_ELEMENTS = 1 << 24  # a nearest upsampling's input is an activation of an MCU model


def _chain(graph: ir.Graph, first: ir.Op, consumers) -> list[ir.Op]:
    """The longest chain of movement ops from `first` that is a nearest upsampling of its
    4-D input (empty when none is). Every op but the last must be its output's only reader,
    and its output no graph output: the chain's inner tensors disappear."""
    x = graph.tensor(first.inputs[0]) if first.inputs else None
    if x is None or x.is_constant or len(x.shape) != 4 or not 0 < x.size <= _MOST_ELEMENTS:
        return []
    start = np.arange(x.size, dtype=np.int32).reshape(x.shape)  # each element's position
    where, chain, best, op, src = start, [], [], first, x.index
    # an op met twice is a cycle (a file whose op reads a later op's output): no chain
    while (
        op.type in _MOVES
        and op.inputs
        and op.inputs[0] == src
        and len(op.outputs) == 1
        and op not in chain
    ):
        y = graph.tensors[op.outputs[0]]
        where = _moved(graph, op, where, y)
        if where is None or not _same_type(x, y):
            break
        chain.append(op)
        if any(c.type == "TILE" for c in chain) and _is_nearest(start, where):
            best = list(chain)
        readers = consumers.get(y.index, [])
        if y.index in graph.outputs or len(readers) != 1:
            break
        op, src = readers[0], y.index
    return best


def _moved(graph: ir.Graph, op: ir.Op, where: np.ndarray, y: ir.Tensor):
    """`where` moved as `op` moves elements into `y`'s shape; None when not known statically."""
    if y.shape_signature is not None and -1 in y.shape_signature:
        return None
    if op.type == "TILE":
        reps = graph.tensor(op.inputs[1]) if len(op.inputs) > 1 else None
        if reps is None or reps.data is None or reps.size != where.ndim:
            return None
        reps = [int(r) for r in np.asarray(reps.data).reshape(-1)]
        if min(reps) < 1:
            return None
        where = np.tile(where, reps)
        return where if where.shape == tuple(y.shape) else None
    return where.reshape(y.shape) if y.size == where.size else None


def _same_type(x: ir.Tensor, y: ir.Tensor) -> bool:
    """Same dtype and quantization: the chain copies bytes, so must the resize."""
    if x.dtype != y.dtype or (x.quant is None) != (y.quant is None):
        return False
    if x.quant is None:
        return True
    a, b = x.quant, y.quant
    return (
        a.axis == b.axis
        and np.array_equal(a.scale, b.scale)
        and np.array_equal(a.zero_point, b.zero_point)
    )


def _is_nearest(start: np.ndarray, where: np.ndarray) -> bool:
    """`where` (positions in `start`, a 4-D tensor) is what RESIZE_NEAREST_NEIGHBOR makes of
    `start` by an integer factor along H and W (not both 1), in TFLite's source indices."""
    n, h, w, c = start.shape
    if where.ndim != 4 or where.shape[0] != n or where.shape[3] != c:
        return False
    oh, ow = where.shape[1:3]
    if oh % h or ow % w or (oh, ow) == (h, w):
        return False
    rows, cols = nearest_sources(oh, h, False, False), nearest_sources(ow, w, False, False)
    return np.array_equal(where, start[:, rows][:, :, cols])
