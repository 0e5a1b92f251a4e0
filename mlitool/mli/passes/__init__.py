"""Graph passes: IR -> IR rewrites between the support check and lowering.

Each pass is a function `(graph, target) -> graph` with a docstring saying what it rewrites and
why. They run in the order of `PASSES` (one list, as Vela's graph optimiser lists its rewrites),
on a copy: the caller's graph (which inspect, report and the executors read) is never changed.
A rewritten op keeps its index; an op a pass makes of another (a different type) has that
model's op as its `origin` (ir.Op), so layers, labels and per-layer overrides still name the
model's op. What a pass decided for lowering it records in the op's options (documented by the
pass). The support check, `facts.layer_kind` and inspect read the model's graph: the
predicates that choose a rewrite live with the pass (as_conv.py), and layer_kind asks them.

Lowering then selects kernels and encodes numbers. What stays there: a fused activation a
kernel cannot apply (`Builder.relu_after`). As a pass it would be a RELU op after the kernel,
reading a new pre-activation tensor, and the emitted bytes would change: MLI tensors are
defined in the .c and listed in the .json in the order lowering makes them, and today the
model's output comes first (before the weights, bias and the `_pre_act` copy of a one-row
FULLY_CONNECTED on MLI 1.x); the kernel op, lowered before the inserted RELU, would make its
pre-activation tensor first and the output last. The copy also carries parameters lowering
sets after encoding (FX frac bits lowered for the accumulator, max pool's `_krn` output whose
convert then follows the relu), and a RELU lowered on its own notes the parameters it copies.
Keeping those bytes would take lowering one op while looking at the next: the cross-op state
this stage removes.
"""

from __future__ import annotations

import dataclasses

from mlitool import ir
from mlitool.mli.passes.as_conv import depthwise_one_channel_as_conv, fc_rows_as_conv
from mlitool.mli.passes.pad_fusion import fuse_pad_into_conv
from mlitool.mli.passes.pool_padding import fuse_lowest_pad_into_max_pool
from mlitool.mli.target import Target

__all__ = ["PASSES", "run_passes"]

PASSES = (
    fuse_pad_into_conv,
    fuse_lowest_pad_into_max_pool,
    depthwise_one_channel_as_conv,
    fc_rows_as_conv,
)


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
