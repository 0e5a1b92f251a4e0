"""Graph passes: IR -> IR rewrites between the support check and lowering.

Each pass is a function `(graph, target) -> graph` with a docstring saying what it rewrites and
why. They run in the order of `PASSES` (one list, as Vela's graph optimiser lists its rewrites),
on a copy: the caller's graph (which inspect, report and the executors read) is never changed.
A rewritten op keeps its index and type, so layers, labels and per-layer overrides still name
the model's op; what a pass decided for lowering it records in the op's options (documented
by the pass).

Lowering then selects kernels and encodes numbers. What stays there, because a graph rewrite
would change the emitted bytes or depends on the encoding rather than on the graph: a fused
activation a kernel cannot apply (`Builder.relu_after`: whether depends on the layer's format
and SA8 range, the pre-activation tensor carries the output's encoded parameters), FULLY_CONNECTED
over several rows as a 1x1 conv2d and DEPTHWISE_CONV_2D over one channel as conv2d (their views
and weights are named after the model's tensors and the layer keeps the model's op type).
"""

from __future__ import annotations

import dataclasses

from mlitool import ir
from mlitool.mli.passes.as_conv import depthwise_one_channel_as_conv, fc_rows_as_conv
from mlitool.mli.passes.pad_fusion import fuse_pad_into_conv
from mlitool.mli.target import Target

__all__ = ["PASSES", "run_passes"]

PASSES = (fuse_pad_into_conv, depthwise_one_channel_as_conv, fc_rows_as_conv)


def run_passes(graph: ir.Graph, target: Target, passes=PASSES) -> ir.Graph:
    """`graph` rewritten by `passes` in order (a shallow copy: tensors and untouched ops are
    shared, the op list is the copy's own)."""
    g = dataclasses.replace(
        graph,
        ops=list(graph.ops),
        tensors=list(graph.tensors),
        inputs=list(graph.inputs),
        outputs=list(graph.outputs),
    )
    for rewrite in passes:
        g = rewrite(g, target)
    return g
