"""Model pass: float16 weights behind DEQUANTIZE become float32 constants.

TFLite's float16 quantization stores weights as float16 constants, each behind a DEQUANTIZE op
that the interpreter evaluates once. Folding them at import makes the weights what every later
stage expects (a constant input of CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED), so calibration
and `--weights-only` treat them as weights. Op indices keep the file's numbering (as `inspect`
shows it, and as config overrides name them).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool import ir
from mlitool.passes.context import PassContext


def fold_float16_dequantize(graph: ir.Graph, ctx: PassContext) -> ir.Graph:
    """`graph` with every DEQUANTIZE of a float16 constant folded into a float32 constant (the
    same graph when there is none; the file's graph is left as read)."""
    tensors, keep = list(graph.tensors), []
    for op in graph.ops:
        src = graph.tensor(op.inputs[0]) if op.type == "DEQUANTIZE" and op.inputs else None
        if (
            src is not None
            and src.data is not None
            and src.dtype == "float16"
            and len(op.outputs) == 1
        ):
            out = graph.tensors[op.outputs[0]]
            if out.dtype == "float32" and tuple(out.shape) == tuple(src.shape):
                tensors[out.index] = dataclasses.replace(out, data=np.asarray(src.data, np.float32))
                continue
        keep.append(op)
    if len(keep) == len(graph.ops):
        return graph
    return dataclasses.replace(graph, tensors=tensors, ops=keep)
