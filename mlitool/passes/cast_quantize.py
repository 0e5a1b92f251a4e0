"""Casts around a quantization, as one CAST: an int32 (or int64 index) tensor cast to float and
quantized (`cast_int_quantize`), and an int8 tensor dequantized then cast to an integer type
(`cast_of_dequantize`).

A full-integer model writes `tf.cast(tf.argmin(x), tf.float32)` as ARG_MIN -> CAST (int64 to
float32) -> QUANTIZE (to int8): a float tensor between, which has no value range to quantize it
with. QUANTIZE(CAST(v)) is a function of the integer v alone: the CAST, marked
`ir.QUANTIZED_CAST`, writes the QUANTIZE's output and its kernels compute TFLite's QUANTIZE of
the float32 value (the executors) or its levels' int32 thresholds (lowering, `cast32`). Equal
on every input. The new CAST keeps the CAST's index (`origin`: the CAST); the QUANTIZE goes.

A full-integer model whose input is token ids (a Keras `Embedding` fed float ids) writes
`tf.cast(x, tf.int32)` as DEQUANTIZE (int8 to float32) -> CAST (to int32): a float tensor between.
CAST(DEQUANTIZE(x)) is a function of the int8 x alone: the CAST, marked `ir.DEQUANTIZED_CAST`, reads
x and casts its float32 DEQUANTIZE value (TFLite's: the double product rounded to float32), a
256-entry table in `cast32`. The DEQUANTIZE goes when the CAST was its only reader.
"""

from __future__ import annotations

import dataclasses

from mlitool import ir
from mlitool.passes.context import PassContext
from mlitool.passes.upsampling import REWRITTEN_FROM


def cast_int_quantize(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """`graph` with each int32 / int64 -> float32 CAST read only by a QUANTIZE to int8 made one
    CAST to that QUANTIZE's output (`ctx.rewritten`: its label -> the ops replaced)."""
    consumers = graph.consumers()
    new_ops, dropped, rewrites = {}, set(), {}
    for op in graph.ops:
        if op.type != "CAST" or graph.tensors[op.inputs[0]].dtype not in ("int32", "int64"):
            continue
        mid = op.outputs[0]
        readers = consumers.get(mid, [])
        if graph.tensors[mid].dtype != "float32" or mid in graph.outputs or len(readers) != 1:
            continue
        q = readers[0]
        out = graph.tensors[q.outputs[0]]
        if q.type != "QUANTIZE" or out.dtype != "int8" or out.quant is None or out.quant.per_axis:
            continue
        labels = (op.label, q.label)
        new_ops[op.index] = dataclasses.replace(
            op,
            outputs=(out.index,),
            options={**op.options, ir.QUANTIZED_CAST: True, REWRITTEN_FROM: labels},
            origin=op.origin or op,
        )
        dropped.add(q.index)
        rewrites[new_ops[op.index].label] = list(labels)
    if not new_ops:
        return graph
    ctx.rewritten.update(rewrites)
    ops = [new_ops.get(op.index, op) for op in graph.ops if op.index not in dropped]
    return dataclasses.replace(graph, ops=ops)


def cast_of_dequantize(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """`graph` with each CAST to an integer type of a DEQUANTIZE of a per-tensor int8 tensor
    reading that tensor (`ir.DEQUANTIZED_CAST`, `ctx.rewritten`)."""
    producers, consumers, outputs = graph.producers(), graph.consumers(), set(graph.outputs)
    new_ops, dropped = {}, set()
    for op in graph.ops:
        if op.type != "CAST" or graph.tensors[op.outputs[0]].dtype not in (
            "int8",
            "int16",
            "int32",
        ):
            continue
        deq = producers.get(op.inputs[0])
        if deq is None or deq.type != "DEQUANTIZE":
            continue
        x = graph.tensors[deq.inputs[0]]
        if x.dtype != "int8" or x.quant is None or x.quant.per_axis or x.data is not None:
            continue
        if tuple(x.shape) != tuple(graph.tensors[deq.outputs[0]].shape):
            continue  # a malformed DEQUANTIZE: validation names it
        labels = (op.label, deq.label)
        new_ops[op.index] = dataclasses.replace(
            op,
            inputs=(x.index,),
            options={**op.options, ir.DEQUANTIZED_CAST: True, REWRITTEN_FROM: labels},
            origin=op.origin or op,
        )
        ctx.rewritten[new_ops[op.index].label] = list(labels)
        readers = consumers.get(deq.outputs[0], [])
        if deq.outputs[0] not in outputs and all(r.index == op.index for r in readers):
            dropped.add(deq.index)
    if not new_ops:
        return graph
    ops = [new_ops.get(op.index, op) for op in graph.ops if op.index not in dropped]
    return dataclasses.replace(graph, ops=ops)
