"""Which model outputs are classifiers (top-1 figures), and why the others are not: one rule
for verify and report's sensitivity."""

from __future__ import annotations

import numpy as np

from mlitool import ir


def classifier_outputs(graph: ir.Graph) -> set[int]:
    """Outputs whose largest element is a class (`top1_blank` gives None for them)."""
    return {i for i in graph.outputs if top1_blank(graph, i) is None}


def top1_blank(graph: ir.Graph, index: int) -> str | None:
    """Why output `index` gets no top-1 figure, or None when it does: a classifier is one
    vector of K >= 2 scores once unit dims are dropped (any K: [1, 1001] behind a RESHAPE too),
    written by SOFTMAX (through DEQUANTIZE / RESHAPE / SQUEEZE) or else not the size of an input
    (an autoencoder's reconstruction is not a classification)."""
    shape = [d for d in graph.tensors[index].shape if d != 1]
    if not shape:
        return "regression output: 1 value"
    if len(shape) > 1:
        return f"not one vector of class scores: shape {'x'.join(map(str, shape))}"
    producers = graph.producers()
    op = producers.get(index)
    while op is not None and op.type in ("DEQUANTIZE", "RESHAPE", "SQUEEZE"):
        op = producers.get(op.inputs[0])
    if op is not None and op.type == "SOFTMAX":
        return None
    if any(int(np.prod(graph.tensors[i].shape)) == shape[0] for i in graph.inputs):
        return f"{shape[0]} values, the size of an input: a reconstruction, not classes"
    return None
