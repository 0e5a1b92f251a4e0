"""Dilated convolutions exported through the batch axis, as one CONV_2D with dilation.

For a dynamic batch the TFLite converter writes a dilated Conv1D / Conv2D (Keras `dilation_rate`)
as SPACE_TO_BATCH_ND (block b, paddings p) -> [EXPAND_DIMS] -> CONV_2D (VALID, stride 1,
dilation 1) -> [RESHAPE or SQUEEZE] -> BATCH_TO_SPACE_ND (block b, crops c): the conv runs on the
b phases of the input stacked along the batch (batch b inside, which MLI cannot run and which the
batch fixed to 1 at import even makes malformed). `fuse_space_to_batch_conv` replaces each such
chain (CONV_2D or DEPTHWISE_CONV_2D) by the conv alone with dilation b, on the chain's input, where that is exactly equal:

  phase r of S2B holds x'[r + b*i] (x' = x padded by p), so the conv of phase r at i sums
  w[m] * x'[r + b*(i + m)] and B2S puts it at j = r + b*i: the dilated conv of x' at j. With
  c == p on both sides of every axis, cropping by c undoes the padding: out[j] is the dilated
  VALID conv of x itself at j (every index read lies in x), and has its length. With c <= p
  (Keras' `padding="same"`: p pads to TFLite's SAME padding and to a multiple of b, c crops the
  excess), cropping leaves the padding p - c: out is the dilated VALID conv of x padded by
  p - c, which is the conv with SAME padding where p - c is SAME's, else a PAD by p - c (S2B
  fills with the zero point, as PAD does; `pad_fusion` takes it into the conv's padding) that
  replaces the S2B.

DEPTHWISE_CONV_2D folds alike (each channel is its own conv over the same phases).

Each output is the same sum of the same integer products with the same per-channel requantization,
so the result is bit for bit what TFLite computes. The conv keeps its index; the
EXPAND_DIMS / RESHAPE around it stay (views), writing new tensors of the right shapes; S2B and B2S are listed as
replaced (`REWRITTEN_FROM`, `inspect`). A model-stage pass (`runner.PASSES`) after constant
folding, like the upsampling rewrite, so every stage sees the one graph.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool import ir
from mlitool.geometry import tflite_padding
from mlitool.passes.context import PassContext
from mlitool.passes.upsampling import REWRITTEN_FROM, _same_type

CONVS = ("CONV_2D", "DEPTHWISE_CONV_2D")


def fuse_space_to_batch_conv(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """`graph` with each S2B -> conv -> B2S chain replaced by one dilated CONV_2D
    (`ctx.rewritten`: label of the conv -> labels of the ops it replaces)."""
    consumers = graph.consumers()
    tensors, new_ops, rewrites = list(graph.tensors), {}, {}
    for op in graph.ops:
        if op.type != "SPACE_TO_BATCH_ND":
            continue
        found = _chain(graph, op, consumers)
        if found is None:
            continue
        chain, block = found
        rewrites.update(_rewrite(graph, chain, block, tensors, new_ops))
    if not rewrites:
        return graph
    ctx.rewritten.update(rewrites)
    ops = [new_ops.get(op.index, op) for op in graph.ops]
    return dataclasses.replace(graph, tensors=tensors, ops=[o for o in ops if o])


def _const(graph: ir.Graph, op: ir.Op, slot: int) -> np.ndarray | None:
    t = graph.tensor(op.inputs[slot]) if len(op.inputs) > slot else None
    return None if t is None or t.data is None else np.asarray(t.data).astype(np.int64)


def _chain(graph: ir.Graph, s2b: ir.Op, consumers) -> tuple[list[ir.Op], list[int]] | None:
    """([S2B, EXPAND_DIMS?, CONV_2D, RESHAPE/SQUEEZE?, B2S], block per spatial axis) when
    `s2b` starts a chain that is exactly a dilated VALID conv of its input, else None."""
    x = graph.tensors[s2b.inputs[0]]
    block, pads = _const(graph, s2b, 1), _const(graph, s2b, 2)
    if len(x.shape) not in (3, 4) or block is None or pads is None:
        return None
    if block.size != len(x.shape) - 2 or pads.shape != (block.size, 2) or min(block) < 1:
        return None
    steps = [CONVS, ("BATCH_TO_SPACE_ND",)]
    if len(x.shape) == 3:  # a 1-D conv runs as 2-D between two views
        steps = [("EXPAND_DIMS",), steps[0], ("RESHAPE", "SQUEEZE"), steps[1]]
    chain = [s2b]
    for kinds in steps:
        out = chain[-1].outputs[0]
        readers = consumers.get(out, [])
        if out in graph.outputs or len(readers) != 1 or readers[0].inputs[0] != out:
            return None
        if readers[0].type not in kinds:
            return None
        chain.append(readers[0])
    b2s = chain[-1]
    crops = _const(graph, b2s, 2)
    if not np.array_equal(_const(graph, b2s, 1), block) or crops is None:
        return None
    if crops.shape != pads.shape or np.any(crops < 0) or np.any(crops > pads):
        return None
    conv = next(op for op in chain if op.type in CONVS)
    o = conv.options
    if o.get("padding") != "VALID" or (o.get("stride_h"), o.get("stride_w")) != (1, 1):
        return None
    if (o.get("dilation_h"), o.get("dilation_w")) != (1, 1):
        return None
    # the moves copy bytes: before the conv in x's type, after it in the conv output's
    k = chain.index(conv)
    c = graph.tensors[conv.outputs[0]]
    same = [_same_type(x, graph.tensors[m.outputs[0]]) for m in chain[:k]]
    same += [_same_type(c, graph.tensors[m.outputs[0]]) for m in chain[k + 1 :]]
    if not all(same):
        return None
    return chain, [int(v) for v in block]


def _rewrite(graph, chain, block, tensors, new_ops) -> dict[str, list[str]]:
    """Put the chain's replacement into `tensors` / `new_ops`; {conv label: replaced labels}.
    No change (empty) when the shapes do not work out."""
    s2b, b2s = chain[0], chain[-1]
    conv = next(op for op in chain if op.type in CONVS)
    x, y = graph.tensors[s2b.inputs[0]], graph.tensors[b2s.outputs[0]]
    # what the crops leave of the padding, (before, after) per axis of the 4-D conv input
    left = [tuple(int(v) for v in r) for r in _const(graph, s2b, 2) - _const(graph, b2s, 2)]
    if len(x.shape) == 3:
        axis = int(_const(graph, chain[1], 1).reshape(-1)[0]) % 4
        if axis not in (1, 2):
            return {}
        spatial = list(x.shape)
        spatial.insert(axis, 1)
        blocks = [1, 1]
        blocks[2 - axis] = block[0]  # the time axis is the one not inserted
        left.insert(axis - 1, (0, 0))
    else:
        spatial, blocks, axis = list(x.shape), block, None
    w = graph.tensors[conv.inputs[1]]
    kernel = [int(w.shape[1 + a]) for a in range(2)]
    size = [spatial[1 + a] + sum(left[a]) - blocks[a] * (kernel[a] - 1) for a in range(2)]
    conv_out = (1, *size, graph.tensors[conv.outputs[0]].shape[-1])
    view_of = tuple(np.delete(conv_out, axis)) if len(x.shape) == 3 else conv_out
    if min(size) < 1 or view_of != tuple(y.shape):
        return {}
    labels = [conv.label, s2b.label, b2s.label]  # first: the op kept (as `inspect` reads it)
    options = {**conv.options, "dilation_h": blocks[0], "dilation_w": blocks[1]}
    options[REWRITTEN_FROM] = tuple(labels)
    same = [tflite_padding("SAME", spatial[1 + a], kernel[a], 1, blocks[a])[1:] for a in range(2)]
    padded = None  # the PAD that replaces the S2B, where the padding left is not SAME's
    if any(map(any, left)):
        if [tuple(p) for p in same] == left:
            options["padding"] = "SAME"
        else:
            padded = _pad_op(graph, s2b, x, left, axis, tensors)
            new_ops[s2b.index] = padded
            x = tensors[padded.outputs[0]]
            spatial = [1, *(spatial[1 + a] + sum(left[a]) for a in range(2)), spatial[3]]
    if len(x.shape) == 3:
        # The views' tensors hold other elements than the file's (batch b inside): new tensors,
        # so nothing compares them with LiteRT's tensors of the same index.
        expand, view = chain[1], chain[3]
        e = _new_tensor(tensors, graph.tensors[expand.outputs[0]], tuple(spatial))
        c = _new_tensor(tensors, graph.tensors[conv.outputs[0]], conv_out)
        new_ops[expand.index] = dataclasses.replace(
            expand, inputs=(x.index, *expand.inputs[1:]), outputs=(e,)
        )
        new_ops[conv.index] = dataclasses.replace(
            conv, inputs=(e, *conv.inputs[1:]), outputs=(c,), options=options
        )
        new_ops[view.index] = _view_to(view, c, y, tensors)
    else:
        new_ops[conv.index] = dataclasses.replace(
            conv, inputs=(x.index, *conv.inputs[1:]), outputs=(y.index,), options=options
        )
    if padded is None:
        new_ops[s2b.index] = None
    new_ops[b2s.index] = None
    return {new_ops[conv.index].label: labels}


def _pad_op(graph, s2b, x, left, axis, tensors) -> ir.Op:
    """A PAD of `x` by the padding `left` ((before, after) per axis of the 4-D conv input; of
    a 3-D `x` the inserted `axis` is dropped), in place of the S2B (its index; inspect shows
    the S2B it was made from)."""
    pads = [(0, 0), *left, (0, 0)]
    if axis is not None:
        del pads[axis]
    shape = tuple(d + lo + hi for d, (lo, hi) in zip(x.shape, pads))
    out = _new_tensor(tensors, x, shape)
    tensors[out] = dataclasses.replace(tensors[out], name=f"{x.name}/padded")
    value = ir.Tensor(
        len(tensors), f"{x.name}/paddings", (len(pads), 2), "int32", np.array(pads, np.int32)
    )
    tensors.append(value)
    return ir.Op(
        s2b.index,
        "PAD",
        (x.index, value.index),
        (out,),
        {},
        options_table="PadOptions",
        origin=s2b.origin or s2b,
    )


def _new_tensor(tensors: list[ir.Tensor], like: ir.Tensor, shape: tuple[int, ...]) -> int:
    t = dataclasses.replace(
        like, index=len(tensors), name=f"{like.name}/dilated", shape=shape, shape_signature=None
    )
    tensors.append(t)
    return t.index


def _view_to(view: ir.Op, src: int, y: ir.Tensor, tensors: list[ir.Tensor]) -> ir.Op:
    """The RESHAPE / SQUEEZE after the conv, writing `y` (a RESHAPE gets a new shape constant:
    the file's reads the batch-b shape)."""
    if view.type == "SQUEEZE":
        return dataclasses.replace(view, inputs=(src,), outputs=(y.index,))
    shape = ir.Tensor(
        len(tensors), f"{y.name}/shape", (len(y.shape),), "int32", np.array(y.shape, np.int32)
    )
    tensors.append(shape)
    inputs = (src, shape.index) if len(view.inputs) > 1 else (src,)
    options = (
        {**view.options, "new_shape": tuple(y.shape)}
        if "new_shape" in view.options
        else view.options
    )
    return dataclasses.replace(view, inputs=inputs, outputs=(y.index,), options=options)
