"""Model pass: a QDQ file's QUANTIZE -> DEQUANTIZE pairs read as the quantization of the float
tensors they wrap (`ir.Tensor.qdq`).

PyTorch's PT2E converted without a quantization config (and other "QDQ" exporters) writes a
float graph with a QUANTIZE -> DEQUANTIZE pair on every activation and weight: the int8 model the
exporter meant, run by LiteRT as float with fake quantization. This pass changes no op and no
value (the executors run the file as LiteRT does); it only records each pair's parameters on the
float tensors it wraps, for lowering to take exactly (no calibration, no range re-derived):

- an activation X -> QUANTIZE -> Xq -> DEQUANTIZE -> X': X and X' take Xq's quantization;
- a weight, a float constant -> QUANTIZE -> DEQUANTIZE (-> TRANSPOSE / RESHAPE by constants, as
  litert-torch lays PyTorch's OIHW weights out), often per channel: the tensor the chain ends in
  (which constant folding, the next pass, makes a constant of the dequantized values) takes the
  pair's quantization, its axis carried through the chain;
- float activations between pairs that an int8 model gives its input's parameters (PAD,
  RESHAPE, TRANSPOSE, MAX_POOL_2D, ...: `SAME_PARAMS`) take them from a neighbour, forward and
  backward (the graph input before litert-torch's NCHW -> NHWC TRANSPOSE, a PAD before a
  convolution); a CONCATENATION's float inputs without a pair take its output's (the U-Net's
  TRANSPOSE_CONV and RESIZE_BILINEAR before its skip concatenations).

Lowering (`Builder.sa_params` / `value_range`, `conv.encoding.sa8_weights`) then uses these
parameters where a float tensor has them, and QUANTIZE / DEQUANTIZE between equal parameters
become views.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool import ir
from mlitool.passes.context import PassContext

# Ops whose int8 form keeps its input's parameters on its output (TFLite's kernels require it or
# the converter writes it so): a float activation without a pair takes its neighbour's.
SAME_PARAMS = frozenset(
    {
        "RESHAPE",
        "TRANSPOSE",
        "PAD",
        "PADV2",
        "SQUEEZE",
        "EXPAND_DIMS",
        "MAX_POOL_2D",
        "SLICE",
        "STRIDED_SLICE",
        "DEPTH_TO_SPACE",
        "SPACE_TO_DEPTH",
    }
)
_WEIGHT_CHAIN = ("TRANSPOSE", "RESHAPE")


def read_qdq_pairs(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """`graph` with `qdq` set on the float tensors its QUANTIZE -> DEQUANTIZE pairs wrap (the
    same graph when it has none)."""
    found: dict[int, ir.Quant] = {}
    consumers = graph.consumers()
    for op in graph.ops:
        if op.type != "QUANTIZE" or len(op.inputs) != 1 or len(op.outputs) != 1:
            continue
        x, xq = graph.tensor(op.inputs[0]), graph.tensors[op.outputs[0]]
        if x is None or x.dtype != "float32" or xq.dtype != "int8" or xq.quant is None:
            continue
        readers = consumers.get(xq.index, [])
        dqs = [c for c in readers if _is_dequantize(graph, c)]
        # a pair: the int8 tensor only dequantized again (fake quantization); an int8 model's
        # float input or island output has int8 readers and is left as it is
        if not dqs or len(dqs) != len(readers) or xq.index in graph.outputs:
            continue
        if x.data is not None:
            if len(dqs) == 1:
                _weight(graph, consumers, dqs[0].outputs[0], xq.quant, found)
            continue
        if xq.quant.per_axis:
            continue
        for i in [x.index] + [c.outputs[0] for c in dqs]:
            found.setdefault(i, xq.quant)
    if not found:
        return graph
    _spread(graph, consumers, found)
    tensors = list(graph.tensors)
    for i, q in found.items():
        tensors[i] = dataclasses.replace(tensors[i], qdq=q)
    return dataclasses.replace(graph, tensors=tensors)


def _is_dequantize(graph: ir.Graph, op: ir.Op) -> bool:
    return (
        op.type == "DEQUANTIZE"
        and len(op.outputs) == 1
        and graph.tensors[op.outputs[0]].dtype == "float32"
    )


def _weight(graph, consumers, idx: int, quant: ir.Quant, found: dict) -> None:
    """Follow a weight's DEQUANTIZE output `idx` through TRANSPOSE / RESHAPE by constants to the
    tensor an op reads as its weights, carrying the per-channel axis; record it there."""
    shape, axis = tuple(graph.tensors[idx].shape), quant.axis
    while True:
        readers = consumers.get(idx, [])
        if len(readers) != 1 or readers[0].type not in _WEIGHT_CHAIN or idx in graph.outputs:
            break
        op = readers[0]
        arg = graph.tensor(op.inputs[1]) if len(op.inputs) > 1 else None
        out = graph.tensors[op.outputs[0]]
        if op.inputs[0] != idx or (op.type == "TRANSPOSE" and (arg is None or arg.data is None)):
            return
        if axis is not None:
            if op.type == "TRANSPOSE":
                perm = [int(p) for p in np.asarray(arg.data).reshape(-1)]
                if axis not in perm:  # not a permutation: validation refuses the file
                    return
                axis = perm.index(axis)
            else:
                axis = _reshaped_axis(shape, tuple(out.shape), axis)
                if axis is None:
                    return
        idx, shape = out.index, tuple(out.shape)
    found.setdefault(idx, dataclasses.replace(quant, axis=axis))


def _reshaped_axis(old: tuple, new: tuple, axis: int) -> int | None:
    """The axis of `new` holding `old`'s axis `axis` whole (same size, same elements before it)."""
    before = int(np.prod(old[:axis], dtype=np.int64))
    for k, n in enumerate(new):
        if n == old[axis] and int(np.prod(new[:k], dtype=np.int64)) == before:
            return k
    return None


def _spread(graph: ir.Graph, consumers, found: dict[int, ir.Quant]) -> None:
    """Float activations without a pair take the parameters of an op in `SAME_PARAMS`'s input
    (its outputs) or output (its input), until nothing changes."""
    del consumers
    changed = True
    while changed:
        changed = False
        for op in graph.ops:
            if op.type not in SAME_PARAMS or not op.inputs or len(op.outputs) != 1:
                continue
            a, b = op.inputs[0], op.outputs[0]
            ta, tb = graph.tensor(a), graph.tensors[b]
            if ta is None or ta.data is not None or "float32" != ta.dtype or tb.dtype != "float32":
                continue
            for src, dst in ((a, b), (b, a)):
                if src in found and dst not in found:
                    found[dst] = found[src]
                    changed = True
        changed |= _concatenation_inputs(graph, found)


def _concatenation_inputs(graph: ir.Graph, found: dict[int, ir.Quant]) -> bool:
    """A CONCATENATION's float inputs without a pair take its output's (PT2E quantizes a
    concatenation's inputs with its output's observer and writes no pair on them: LiteRT's float
    concatenation and the output's pair then quantize each input element at the output's
    parameters, which an int8 concatenation does to inputs of those parameters); whether any
    changed."""
    changed = False
    for op in graph.ops:
        if op.type != "CONCATENATION" or op.outputs[0] not in found:
            continue
        for i in op.inputs:
            t = graph.tensor(i)
            if t is not None and t.data is None and t.dtype == "float32" and i not in found:
                found[i] = found[op.outputs[0]]
                changed = True
    return changed
