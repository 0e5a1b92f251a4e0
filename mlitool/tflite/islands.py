"""Float islands in int8 models, as one int8 op.

Where TFLite's int8 quantizer has no int8 kernel for an element-wise op (TF 2.21 leaves ELU and
NEG in float), an int8 model holds DEQUANTIZE -> op (float32) -> QUANTIZE. The float tensors
between have no int8 parameters, so lowering would ask for calibration. Since the three ops
map each int8 input value to one int8 output value, `fuse_float_islands` replaces them by the
op alone on the int8 tensors, carrying the 256 results the three compute (`ISLAND_TABLE`,
evaluated with tflite mode's own kernels of the three ops, so it is what TFLite computes:
DEQUANTIZE in float32, the float kernel, QUANTIZE's division and rounding). tflite mode, the
`mli` executor and the fallback C (`lut8`) then read that table; float mode runs the op's
float function on the real values, as before.

It runs at import (`pipeline.fold_model`) for the reason the upsampling rewrite does: every
stage sees one graph. The op keeps its own index; DEQUANTIZE and QUANTIZE are listed as the ops
it replaces (`REWRITTEN_FROM`, `inspect`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool import ir, optable
from mlitool.execute.unary import ISLAND_TABLE
from mlitool.tflite.upsampling import REWRITTEN_FROM


def _per_tensor_int8(t: ir.Tensor) -> bool:
    return t.dtype == "int8" and t.quant is not None and not t.quant.per_axis


def _unary_fallback(op: ir.Op) -> bool:
    spec = optable.get(op.type)
    return spec is not None and spec.kind == "fallback" and spec.slots == ("input",)


def fuse_float_islands(graph: ir.Graph) -> tuple[ir.Graph, dict[str, list[str]]]:
    """(`graph` with each DEQUANTIZE -> unary op -> QUANTIZE of int8 tensors replaced by the op
    on the int8 tensors, {label of the op: labels of the ops it replaces})."""
    consumers, producers = graph.consumers(), graph.producers()
    outputs = set(graph.outputs)
    replaced: dict[int, ir.Op | None] = {}
    rewrites: dict[str, list[str]] = {}
    for op in graph.ops:
        if not _unary_fallback(op) or graph.tensors[op.inputs[0]].dtype != "float32":
            continue
        deq = producers.get(op.inputs[0])
        readers = consumers.get(op.outputs[0], [])
        if deq is None or deq.type != "DEQUANTIZE" or len(readers) != 1:
            continue
        quant = readers[0]
        x, y = graph.tensors[deq.inputs[0]], graph.tensors[quant.outputs[0]]
        inner = (op.inputs[0], op.outputs[0])
        if (
            quant.type != "QUANTIZE"
            or not (_per_tensor_int8(x) and _per_tensor_int8(y))
            or len(consumers.get(op.inputs[0], [])) != 1
            or outputs.intersection(inner)
        ):
            continue
        labels = [deq.label, op.label, quant.label]
        table = _table(graph, (deq, op, quant))
        fused = dataclasses.replace(
            op,
            inputs=(x.index,),
            outputs=(y.index,),
            options={
                **op.options,
                ISLAND_TABLE: tuple(int(v) for v in table),
                REWRITTEN_FROM: tuple(labels),
            },
        )
        replaced.update({deq.index: None, quant.index: None, op.index: fused})
        rewrites[fused.label] = labels
    if not rewrites:
        return graph, {}
    ops = [replaced.get(op.index, op) for op in graph.ops]
    return dataclasses.replace(graph, ops=[o for o in ops if o is not None]), rewrites


def _table(graph: ir.Graph, chain: tuple[ir.Op, ...]) -> np.ndarray:
    """The chain's int8 result for every input -128..127: the three ops run by tflite mode on a
    256-element copy of their tensors."""
    from mlitool.execute.graph import run_graph

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
