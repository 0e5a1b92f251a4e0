"""A bool tensor cast to float and quantized, as one SELECT_V2 of two int8 constants.

TF writes `tf.cast(x > 0, tf.float32)` in a full-integer model as GREATER -> CAST (bool to
float32) -> QUANTIZE (to int8): a float tensor between, which has no value range to quantize
it with. QUANTIZE(CAST(b)) is QUANTIZE(1.0) where b holds and QUANTIZE(0.0) where not: the
SELECT_V2 of the two int8 values TFLite's QUANTIZE computes (`affine_quantize`, the same
arithmetic), which copies them unchanged. Equal on every input. The SELECT_V2 keeps the CAST's
index (`origin`: the CAST) and writes the QUANTIZE's output; the QUANTIZE goes.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool import ir
from mlitool.execute.reference.params import affine_quantize
from mlitool.passes.context import PassContext
from mlitool.passes.upsampling import REWRITTEN_FROM


def cast_bool_as_select(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """`graph` with each bool -> float32 CAST read only by a QUANTIZE to int8 replaced by a
    SELECT_V2 of the two quantized values (`ctx.rewritten`: its label -> the ops replaced)."""
    consumers = graph.consumers()
    tensors, new_ops, dropped, rewrites = list(graph.tensors), {}, set(), {}
    for op in graph.ops:
        if op.type != "CAST" or graph.tensors[op.inputs[0]].dtype != "bool":
            continue
        mid = op.outputs[0]
        readers = consumers.get(mid, [])
        if graph.tensors[mid].dtype != "float32" or mid in graph.outputs or len(readers) != 1:
            continue
        q = readers[0]
        out = graph.tensors[q.outputs[0]]
        if q.type != "QUANTIZE" or out.dtype != "int8" or out.quant is None:
            continue
        if not np.all(np.isfinite(out.quant.scale)) or not np.all(out.quant.scale > 0):
            continue  # no QUANTIZE values to select (validation refuses the scale)
        values = affine_quantize(np.array([1.0, 0.0], np.float32), out)
        consts = []
        for name, v in zip(("true", "false"), values):
            t = ir.Tensor(
                len(tensors), f"{out.name}/{name}", (), "int8", np.array(v, np.int8), out.quant
            )
            tensors.append(t)
            consts.append(t.index)
        labels = (op.label, q.label)
        new_ops[op.index] = ir.Op(
            op.index,
            "SELECT_V2",
            (op.inputs[0], *consts),
            (out.index,),
            {REWRITTEN_FROM: labels},
            options_table="SelectV2Options",
            origin=op.origin or op,
        )
        dropped.add(q.index)
        rewrites[new_ops[op.index].label] = list(labels)
    if not new_ops:
        return graph
    ctx.rewritten.update(rewrites)
    ops = [new_ops.get(op.index, op) for op in graph.ops if op.index not in dropped]
    return dataclasses.replace(graph, tensors=tensors, ops=ops)
