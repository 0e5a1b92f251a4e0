"""ARG_MAX / ARG_MIN of a dequantized int8 tensor, run on the int8 tensor itself.

TF's int8 quantizer leaves `tf.argmax` of an int8 model's activation in float: DEQUANTIZE ->
ARG_MAX (float32 in, an index out). The float tensor has no int8 parameters, so lowering would ask
for calibration. DEQUANTIZE maps the int8 values -128..127 to strictly increasing float32 values
(scale > 0: (q - zp) * scale, one rounding of distinct products of a normal scale stays
distinct), so the position of the largest (smallest) value, and which of equal values comes
first, are the same on the int8 tensor: `read_int8_for_order` makes ARG_MAX / ARG_MIN read it.
Equal on every input. The DEQUANTIZE goes when no other op reads it.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool import ir
from mlitool.passes.context import PassContext
from mlitool.passes.islands import _per_tensor_int8
from mlitool.passes.upsampling import REWRITTEN_FROM

ORDER_ONLY = ("ARG_MAX", "ARG_MIN")
_SMALLEST_SCALE = 1e-30  # far above float32's subnormals: 255 distinct products


def read_int8_for_order(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """`graph` with each ARG_MAX / ARG_MIN of a DEQUANTIZE of a per-tensor int8 tensor reading
    that tensor (`ctx.rewritten`); the same graph when there is none."""
    producers, consumers, outputs = graph.producers(), graph.consumers(), set(graph.outputs)
    changed: dict[int, ir.Op] = {}
    for op in graph.ops:
        deq = producers.get(op.inputs[0]) if op.type in ORDER_ONLY else None
        if deq is None or deq.type != "DEQUANTIZE":
            continue
        x = graph.tensors[deq.inputs[0]]
        if tuple(x.shape) != tuple(graph.tensors[deq.outputs[0]].shape):
            continue  # a malformed DEQUANTIZE: validation names it
        if not _per_tensor_int8(x) or not float(x.quant.scale[0]) > _SMALLEST_SCALE:
            continue
        if not np.isfinite(float(x.quant.scale[0])):
            continue
        changed[op.index] = dataclasses.replace(
            op,
            inputs=(x.index, *op.inputs[1:]),
            options={**op.options, REWRITTEN_FROM: (op.label, deq.label)},
        )
        ctx.rewritten[op.label] = [op.label, deq.label]
    if not changed:
        return graph
    ops = [changed.get(op.index, op) for op in graph.ops]
    # a DEQUANTIZE the rewritten ops read, that nothing reads any more (nor the graph), goes
    read = {i for op in ops for i in op.inputs} | outputs
    freed = {
        op.index
        for op in graph.ops
        if op.type == "DEQUANTIZE"
        and op.outputs[0] not in read
        and any(c.index in changed for c in consumers.get(op.outputs[0], []))
    }
    return dataclasses.replace(graph, ops=[op for op in ops if op.index not in freed])
