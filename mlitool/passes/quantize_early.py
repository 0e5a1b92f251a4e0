"""A QUANTIZE after a float CONCATENATION / PACK in an int8 model, moved onto each input.

TF's int8 quantizer leaves ops it has no int8 kernel for (SIN, COS, CUMSUM, FLOOR, ROUND...) in
float32, and where their results meet in a CONCATENATION it quantizes once, after it:
DEQUANTIZE -> SIN -> CONCATENATION (float32) -> QUANTIZE. The float tensors between have no
int8 parameters, so each branch would need calibration. QUANTIZE is element-wise and
CONCATENATION / PACK only move elements, so QUANTIZE(CONCATENATION(x, y)) equals
CONCATENATION(QUANTIZE(x), QUANTIZE(y)) on every input, bit for bit, with the QUANTIZE's
parameters on each part. `quantize_before_concatenation` makes that rewrite; each branch is then
a DEQUANTIZE -> op -> QUANTIZE island that `islands` / `float_expressions` turn into the int8 op.
It runs before them.

A DEQUANTIZE of an int8 tensor with the output's parameters quantizes back to that tensor
exactly (|q - zero point| <= 255: the float32 product and quotient stay within an ulp of an
integer), so such a branch takes the int8 tensor itself. A constant input is quantized here
(TFLite's QUANTIZE arithmetic). The concatenation keeps its index and writes the QUANTIZE's
output; each new QUANTIZE gets an index after the model's last op and the concatenation's op as
its `origin`, so messages name a model op.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool import ir
from mlitool.execute.reference.params import affine_quantize
from mlitool.ir import ISLAND_OP, ISLAND_RUNS, ISLAND_TABLE
from mlitool.passes.context import PassContext
from mlitool.passes.upsampling import REWRITTEN_FROM

MOVES_ELEMENTS = ("CONCATENATION", "PACK")


def quantize_before_concatenation(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """`graph` with each float32 CONCATENATION / PACK read only by a QUANTIZE to per-tensor int8
    turned into the int8 op on its inputs quantized one by one (`ctx.rewritten`)."""
    consumers, producers = graph.consumers(), graph.producers()
    tensors = list(graph.tensors)
    next_index = max((op.index for op in graph.ops), default=-1) + 1
    before: dict[int, list[ir.Op]] = {}  # concatenation's index -> QUANTIZE ops to run first
    changed: dict[int, ir.Op] = {}
    dropped: set[int] = set()
    for op in graph.ops:
        q = _only_quantize_reader(graph, op, consumers)
        if q is None:
            continue
        out = graph.tensors[q.outputs[0]]
        inputs, quantizes = [], []
        for i in op.inputs:
            x = graph.tensors[i]
            deq = producers.get(i)
            source = _dequantized_int8(graph, deq)
            if source is not None and _same_params(source, out):
                inputs.append(source.index)
                continue
            part = ir.Tensor(
                len(tensors),
                f"{x.name}/quantized",
                x.shape,
                "int8",
                None,
                out.quant,
                shape_signature=x.shape_signature,
            )
            if x.data is not None:
                part.data = affine_quantize(np.asarray(x.data, np.float32), out).astype(np.int8)
            tensors.append(part)
            inputs.append(part.index)
            if x.data is None:
                quantize = ir.Op(
                    next_index, "QUANTIZE", (i,), (part.index,), {}, origin=op.origin or op
                )
                if source is not None:  # DEQUANTIZE -> QUANTIZE: one int8 table
                    quantize = _requantize_table(
                        dataclasses.replace(graph, tensors=tensors), deq, quantize
                    )
                quantizes.append(quantize)
                next_index += 1
        before[op.index] = quantizes
        changed[op.index] = dataclasses.replace(
            op,
            inputs=tuple(inputs),
            outputs=q.outputs,
            options={**op.options, REWRITTEN_FROM: (op.label, q.label)},
        )
        dropped.add(q.index)
        ctx.rewritten[changed[op.index].label] = [op.label, q.label]
    if not changed:
        return graph
    ops: list[ir.Op] = []
    for op in graph.ops:
        if op.index in dropped:
            continue
        ops.extend(before.get(op.index, []))
        ops.append(changed.get(op.index, op))
    return dataclasses.replace(graph, tensors=tensors, ops=ops)


def _only_quantize_reader(graph: ir.Graph, op: ir.Op, consumers) -> ir.Op | None:
    """The QUANTIZE to per-tensor int8 that alone reads `op`'s float32 output, when `op` is a
    CONCATENATION / PACK of float32 tensors without a fused activation."""
    if op.type not in MOVES_ELEMENTS or op.options.get("fused_activation", "NONE") != "NONE":
        return None
    out = op.outputs[0]
    if out in graph.outputs or graph.tensors[out].dtype != "float32":
        return None
    if any(graph.tensors[i].dtype != "float32" for i in op.inputs):
        return None
    readers = consumers.get(out, [])
    if len(readers) != 1 or readers[0].type != "QUANTIZE":
        return None
    t = graph.tensors[readers[0].outputs[0]]
    per_tensor = t.quant is not None and not t.quant.per_axis
    return readers[0] if t.dtype == "int8" and per_tensor else None


def _dequantized_int8(graph: ir.Graph, producer: ir.Op | None) -> ir.Tensor | None:
    """The per-tensor int8 tensor a DEQUANTIZE reads (None for another producer)."""
    if producer is None or producer.type != "DEQUANTIZE":
        return None
    x = graph.tensors[producer.inputs[0]]
    return x if x.dtype == "int8" and x.quant is not None and not x.quant.per_axis else None


def _same_params(x: ir.Tensor, out: ir.Tensor) -> bool:
    """Quantizing `x`'s dequantized float32 values with `out`'s parameters gives `x` back."""
    return float(x.quant.scale[0]) == float(out.quant.scale[0]) and int(
        x.quant.zero_point[0]
    ) == int(out.quant.zero_point[0])


def _requantize_table(graph: ir.Graph, deq: ir.Op, quantize: ir.Op) -> ir.Op:
    """DEQUANTIZE -> QUANTIZE of an int8 tensor as one island op carrying their 256 results
    (tflite mode's own kernels: TFLite's float32 DEQUANTIZE and QUANTIZE)."""
    from mlitool.passes.islands import _table

    table = _table(graph, (deq, quantize))
    return ir.Op(
        quantize.index,
        ISLAND_OP,
        (deq.inputs[0],),
        quantize.outputs,
        {
            ISLAND_TABLE: tuple(int(v) for v in table),
            ISLAND_RUNS: "int8 table of 256 (DEQUANTIZE, QUANTIZE of one int8 input: identical "
            "on every input)",
            REWRITTEN_FROM: (quantize.label, deq.label),
        },
        origin=quantize.origin,
    )
