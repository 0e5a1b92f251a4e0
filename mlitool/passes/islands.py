"""Float islands in int8 models, as one int8 op.

Where TFLite's int8 quantizer has no int8 kernel for an element-wise op (TF 2.21 leaves ELU,
NEG, SQUARE, POW, CEIL, FLOOR, ROUND, SIN, COS, FLOOR_DIV and FLOOR_MOD in float), an int8 model
holds DEQUANTIZE -> op (float32) -> QUANTIZE (one DEQUANTIZE may feed several such islands;
POW's exponent and FLOOR_DIV's / FLOOR_MOD's divisor are constants). The float tensors
between have no int8 parameters, so lowering would ask for calibration. Since the three ops
map each int8 input value to one int8 output value (other inputs: one-value constants),
`fuse_float_islands` replaces them by the op alone on the int8 tensors, carrying the 256 results the three compute (`ISLAND_TABLE`,
evaluated with tflite mode's own kernels of the three ops, so it is what TFLite computes:
DEQUANTIZE in float32, the float kernel, QUANTIZE's division and rounding). tflite mode, the
`mli` executor and the fallback C (`lut8`) then read that table; float mode runs the op's
float function on the real values, as before.

It is a model-stage pass (`runner.PASSES`) for the reason the upsampling rewrite does: every
stage sees one graph. The op keeps its own index; DEQUANTIZE and QUANTIZE are listed as the ops
it replaces (`REWRITTEN_FROM`, `inspect`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool import ir
from mlitool.ir import FLOAT_ISLAND, ISLAND_RUNS, ISLAND_TABLE
from mlitool.ops import spec as opspec
from mlitool.passes.context import PassContext
from mlitool.passes.upsampling import REWRITTEN_FROM


def _per_tensor_int8(t: ir.Tensor) -> bool:
    return t.dtype == "int8" and t.quant is not None and not t.quant.per_axis


def one_value(t: ir.Tensor) -> bool:
    """A constant whose elements are all one value (of any shape: a folded ZEROS_LIKE)."""
    data = np.asarray(t.data).reshape(-1)
    return data.size >= 1 and bool(np.all(data == data[0]))


# An element-wise op whose other inputs, constants of one value, are part of the function the
# island's table holds (POW, FLOOR_DIV, FLOOR_MOD) marks its tflite kernel: it reads
# `ISLAND_TABLE` on int8 tensors.
READS_ISLAND_TABLE = "reads_island_table"
# A fallback op that is not element-wise but whose tflite kernel runs its float32 kernel between
# the island's DEQUANTIZE values and the QUANTIZE of its output (`FLOAT_ISLAND`), its other inputs
# constants (CUMSUM's axis), marks that kernel so.
RUNS_FLOAT_ISLAND = "runs_float_island"


def _float_kernel_fallback(graph: ir.Graph, op: ir.Op) -> bool:
    """A fallback op that runs a float island on int8 tensors (`RUNS_FLOAT_ISLAND`), one output,
    its other inputs constants or integer indices (DYNAMIC_UPDATE_SLICE's run-time starts: no
    float value of the island)."""
    spec = opspec.get(op.type)
    if spec is None or spec.kind != "fallback" or len(op.outputs) != 1:
        return False
    others = [graph.tensor(i) for i in op.inputs[1:]]
    return getattr(spec.run[1], RUNS_FLOAT_ISLAND, False) and all(
        t is not None and (t.data is not None or t.dtype in ("int32", "int64")) for t in others
    )


def _elementwise_fallback(graph: ir.Graph, op: ir.Op) -> bool:
    """A fallback op whose output element is a function of the same element of its first input:
    a unary op, or one whose tflite kernel reads the island's table (`READS_ISLAND_TABLE`) and
    whose other inputs are one-value constants."""
    spec = opspec.get(op.type)
    if spec is None or spec.kind != "fallback" or len(op.outputs) != 1:
        return False
    if spec.slots == ("input",):
        return not spec.variadic  # ADD_N's one slot repeats
    others = [graph.tensor(i) for i in op.inputs[1:]]
    return getattr(spec.run[1], READS_ISLAND_TABLE, False) and all(
        t is not None and t.data is not None and t.size == 1 for t in others
    )


def fuse_float_islands(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """`graph` with each DEQUANTIZE -> element-wise op -> QUANTIZE of int8 tensors replaced by
    the op on the int8 tensors (`ctx.rewritten`: label of the op -> labels of the ops it
    replaces). A DEQUANTIZE
    read by several such islands goes with them, only when every reader is one."""
    consumers, outputs = graph.consumers(), set(graph.outputs)
    replaced: dict[int, ir.Op | None] = {}
    rewrites: dict[str, list[str]] = {}
    for deq in graph.ops:
        if deq.type != "DEQUANTIZE" or deq.outputs[0] in outputs:
            continue
        x = graph.tensors[deq.inputs[0]]
        islands = [_island(graph, op, consumers) for op in consumers.get(deq.outputs[0], [])]
        if not _per_tensor_int8(x) or not islands or None in islands:
            continue
        replaced[deq.index] = None
        for op, quant in islands:
            labels = [deq.label, op.label, quant.label]
            if _elementwise_fallback(graph, op):
                table = _table(graph, (deq, op, quant))
                carried = {ISLAND_TABLE: tuple(int(v) for v in table)}
                runs = f"int8 table of 256 ({op.type} of one int8 input: identical on every input)"
            else:  # the DEQUANTIZE values the op's float32 kernel starts from
                table = _table(graph, (deq,))
                carried = {FLOAT_ISLAND: tuple(float(v) for v in table)}
                runs = f"float32 {op.type} as TFLite (DEQUANTIZE values, QUANTIZE's rounding)"
            carried[ISLAND_RUNS] = runs  # inspect names it
            fused = dataclasses.replace(
                op,
                inputs=(x.index, *op.inputs[1:]),
                outputs=quant.outputs,
                options={**op.options, **carried, REWRITTEN_FROM: tuple(labels)},
            )
            replaced.update({quant.index: None, op.index: fused})
            rewrites[fused.label] = labels
    if not rewrites:
        return graph
    ctx.rewritten.update(rewrites)
    ops = [replaced.get(op.index, op) for op in graph.ops]
    return dataclasses.replace(graph, ops=[o for o in ops if o is not None])


def _island(graph: ir.Graph, op: ir.Op, consumers) -> tuple[ir.Op, ir.Op] | None:
    """(op, its QUANTIZE) when `op`, a reader of a DEQUANTIZE's float32 output, is an island:
    element-wise on it alone, read only by a QUANTIZE to per-tensor int8; else None."""
    src = graph.tensors[op.inputs[0]]
    fusable = _elementwise_fallback(graph, op) or _float_kernel_fallback(graph, op)
    if not fusable or src.dtype != "float32":
        return None
    if src.index in op.inputs[1:] or op.outputs[0] in graph.outputs:
        return None
    readers = consumers.get(op.outputs[0], [])
    if len(readers) != 1 or readers[0].type != "QUANTIZE":
        return None
    quant = readers[0]
    return (op, quant) if _per_tensor_int8(graph.tensors[quant.outputs[0]]) else None


def _table(graph: ir.Graph, chain: tuple[ir.Op, ...]) -> np.ndarray:
    """The chain's result for every int8 input -128..127 (the island's three ops: its int8
    results; DEQUANTIZE alone: its float32 values), run by tflite mode on a 256-element copy of
    their tensors."""
    from mlitool.execute.reference.graph import run_graph

    index: dict[int, int] = {}
    tensors: list[ir.Tensor] = []
    ops = []
    for op in chain:
        ins = []
        for i in op.inputs:
            if i not in index:
                t = graph.tensors[i]
                index[i] = len(tensors)
                shape = t.shape if t.data is not None else (256,)
                if t.data is not None and t.size > 1:  # one value (`one_value`), any shape
                    t, shape = dataclasses.replace(t, data=np.asarray(t.data).reshape(-1)[:1]), (1,)
                tensors.append(
                    dataclasses.replace(
                        t, index=len(tensors), shape=tuple(shape), shape_signature=None
                    )
                )
            ins.append(index[i])
        outs = []
        for o in op.outputs:
            t = graph.tensors[o]
            index[o] = len(tensors)
            tensors.append(
                dataclasses.replace(t, index=len(tensors), shape=(256,), shape_signature=None)
            )
            outs.append(index[o])
        ops.append(dataclasses.replace(op, inputs=tuple(ins), outputs=tuple(outs)))
    first, last = index[chain[0].inputs[0]], index[chain[-1].outputs[0]]
    mini = ir.Graph(graph.name, tensors, ops, [first], [last])
    x = np.arange(-128, 128, dtype=np.int16).astype(np.int8)[None, :]
    return run_graph(mini, {first: x}, "tflite")[last].reshape(256)
