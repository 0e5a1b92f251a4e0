"""Max-pool padding: a PADV2 filling the lowest value before MAX_POOL_2D becomes the pool's padding.

PyTorch's `MaxPool2d(padding=p)` (and `ceil_mode=True`) pads with -inf: litert-torch writes a
PADV2 of -inf (an int8 file: of -128, the type's lowest value) followed by a VALID MAX_POOL_2D.
A value no input can undercut never wins a maximum, so as long as every window still covers
one real element (each side's padding below the kernel), the result is the pooling of the
unpadded input with that padding ignored: what MLI's max pooling does with its padding. The
PADV2 (its copy and its RAM, and a -inf no MLI format holds) is then not needed.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool import ir
from mlitool.geometry import tflite_padding
from mlitool.passes.context import PassContext
from mlitool.passes.pad_fusion import EXPLICIT_PADDING, FUSED_PAD


def fills_lowest(graph: ir.Graph, pad: ir.Op) -> bool:
    """A PADV2 whose one fill value is the lowest its data can hold: -inf for float, the
    type's minimum for integers."""
    if pad.type != "PADV2" or pad.input("constant_values") < 0:
        return False
    value = graph.slot(pad, "constant_values").data
    if value is None or np.size(value) != 1:
        return False
    v = np.asarray(value).reshape(-1)[0]
    if v.dtype.kind == "f":
        return bool(v == -np.inf)
    return v.dtype.kind in "iu" and int(v) == int(np.iinfo(v.dtype).min)


def max_pool_padding(graph: ir.Graph, pad: ir.Op, consumers=None) -> tuple[ir.Op, list] | None:
    """(the MAX_POOL_2D, [top, bottom, left, right]) when `pad` folds into it exactly, else
    None: the PADV2 fills the lowest value, pads H and W only, and is read by that pool alone;
    each side of the total padding (the PADV2's and the pool's own SAME padding) stays below
    the kernel, so every window covers a real element."""
    if not fills_lowest(graph, pad):
        return None
    consumers = graph.consumers() if consumers is None else consumers
    out = pad.outputs[0]
    readers = consumers.get(out, [])
    pads = graph.slot(pad, "paddings").data
    if out in graph.outputs or len(readers) != 1 or pads is None:
        return None
    pads = np.asarray(pads, dtype=np.int64)
    pool = readers[0]
    if pool.type != "MAX_POOL_2D" or pads.shape != (4, 2) or pads[[0, 3]].any() or (pads < 0).any():
        return None
    o, padded = pool.options, graph.tensors[out].shape
    total: list[int] = []
    for axis, k, s in ((1, o["filter_h"], o["stride_h"]), (2, o["filter_w"], o["stride_w"])):
        _, before, after = tflite_padding(o.get("padding", "VALID"), padded[axis], k, s)
        pair = [int(pads[axis, 0]) + before, int(pads[axis, 1]) + after]
        if max(pair) >= k:
            return None
        total += pair
    return pool, total


def fuse_lowest_pad_into_max_pool(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """PADV2 (lowest value) -> MAX_POOL_2D becomes the pool alone, reading the PADV2's input,
    with the total padding in its `explicit_padding` option (read by the pool family's `lower_pool`);
    the PADV2 is dropped. Every MLI version's pooling takes such padding."""
    consumers = graph.consumers()
    fused: dict[int, ir.Op] = {}
    dropped: set[int] = set()
    for op in graph.ops:
        found = max_pool_padding(graph, op, consumers) if op.type == "PADV2" else None
        if found is None:
            continue
        pool, total = found
        dropped.add(op.index)
        fused[pool.index] = dataclasses.replace(
            pool,
            inputs=(op.input("input"), *pool.inputs[1:]),
            options={**pool.options, EXPLICIT_PADDING: tuple(total), FUSED_PAD: op.label},
        )
    if not fused:
        return graph
    ops = [fused.get(op.index, op) for op in graph.ops if op.index not in dropped]
    return dataclasses.replace(graph, ops=ops)
