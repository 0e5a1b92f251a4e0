"""Float islands of int8 models around an op that only moves values, as the int8 op.

TF 2.21 leaves `tf.unstack` of an int8 model's tensor in float: DEQUANTIZE -> UNPACK (float32)
-> QUANTIZE of the outputs used. The float tensors have no int8 parameters, so lowering would
ask for calibration. An op that moves values without computing (`MOVES`) commutes with the
element-wise DEQUANTIZE: `fuse_moved_islands` runs it on the int8 tensor, its outputs on the
input's parameters, and each QUANTIZE becomes nothing (its parameters are the input's and it is
the output's only reader: the op writes its tensor) or `ir.ISLAND_OP` carrying the 256 int8
results of DEQUANTIZE -> QUANTIZE as tflite mode computes them. Equal on every input.

Only when the DEQUANTIZE's one reader is the op and every output of the op is read by
QUANTIZEs to per-tensor int8 alone, or by nothing. The op keeps its index and lists the ops it
replaces (`REWRITTEN_FROM`, `inspect`, with how it runs: `ISLAND_RUNS`); a QUANTIZE's table op
keeps the QUANTIZE's.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool import ir
from mlitool.ir import ISLAND_OP, ISLAND_RUNS, ISLAND_TABLE
from mlitool.passes.bool_islands import _same_quant
from mlitool.passes.context import PassContext
from mlitool.passes.islands import _per_tensor_int8, _table
from mlitool.passes.upsampling import REWRITTEN_FROM

MOVES = ("UNPACK",)


def fuse_moved_islands(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """`graph` with each DEQUANTIZE -> value-moving op -> QUANTIZEs run as the op on the int8
    tensor (`ctx.rewritten`); the same graph when there is none."""
    consumers, outputs = graph.consumers(), set(graph.outputs)
    tensors = list(graph.tensors)
    placed: dict[int, ir.Op] = {}
    removed: set[int] = set()
    for deq in graph.ops:
        if deq.type != "DEQUANTIZE":
            continue
        x = graph.tensors[deq.inputs[0]]
        readers = consumers.get(deq.outputs[0], [])
        if not _per_tensor_int8(x) or x.data is not None:
            continue
        if len(readers) != 1 or readers[0].type not in MOVES or deq.outputs[0] in outputs:
            continue
        move = readers[0]
        if move.inputs[0] != deq.outputs[0] or not all(
            graph.tensors[i].data is not None for i in move.inputs[1:]
        ):
            continue
        quants = [consumers.get(o, []) for o in move.outputs]
        if any(o in outputs for o in move.outputs) or not all(
            q.type == "QUANTIZE" and _per_tensor_int8(graph.tensors[q.outputs[0]])
            for qs in quants
            for q in qs
        ):
            continue
        new_outs, labels = [], [move.label, deq.label]
        for o, qs in zip(move.outputs, quants):
            target = graph.tensors[qs[0].outputs[0]] if len(qs) == 1 else None
            if target is not None and _same_quant(target.quant, x.quant):
                new_outs.append(target.index)  # the QUANTIZE changes nothing: write its tensor
                removed.add(qs[0].index)
                labels.append(qs[0].label)
                continue
            t = graph.tensors[o]
            made = dataclasses.replace(
                t, index=len(tensors), name=f"{t.name}/int8", dtype="int8", quant=x.quant
            )
            tensors.append(made)
            new_outs.append(made.index)
            for q in qs:
                placed[q.index] = _requantize(graph, deq, o, q, made.index)
                ctx.rewritten[placed[q.index].label] = list(placed[q.index].options[REWRITTEN_FROM])
        placed[move.index] = dataclasses.replace(
            move,
            inputs=(x.index, *move.inputs[1:]),
            outputs=tuple(new_outs),
            options={
                **move.options,
                ISLAND_RUNS: f"int8 {move.type} (it moves values: the {move.type} of the "
                f"DEQUANTIZEd is the DEQUANTIZE of the {move.type}; QUANTIZEs to other "
                "parameters as int8 tables of 256)",
                REWRITTEN_FROM: tuple(labels),
            },
        )
        ctx.rewritten[placed[move.index].label] = labels
        removed.add(deq.index)
    if not placed:
        return graph
    ops = [placed.get(op.index, op) for op in graph.ops]
    ops = [op for op in ops if op.index in placed or op.index not in removed]
    return dataclasses.replace(graph, tensors=tensors, ops=ops)


def _requantize(graph: ir.Graph, deq: ir.Op, o: int, q: ir.Op, src: int) -> ir.Op:
    """`q` (QUANTIZE of the moved float tensor `o`) as a table op on the moved int8 `src`: the
    256 results of DEQUANTIZE -> QUANTIZE."""
    table = _table(graph, (dataclasses.replace(deq, outputs=(o,)), q))
    labels = (q.label,)
    return ir.Op(
        q.index,
        ISLAND_OP,
        (src,),
        q.outputs,
        {
            ISLAND_TABLE: tuple(int(v) for v in np.asarray(table)),
            ISLAND_RUNS: "int8 table of 256 (DEQUANTIZE -> QUANTIZE of one int8 input: "
            "identical on every input)",
            REWRITTEN_FROM: labels,
        },
        origin=q,
    )
