"""The graph passes, IR -> IR rewrites, in one ordered list (`PASSES`) run by one runner.

Each pass is a function `(graph, ctx) -> graph` (`context.PassContext`) with a docstring saying
what it rewrites and why, and belongs to one stage:

- `MODEL`: right after reading, for every command (`pipeline.read`, and `inspect`, which shows
  what they did): a custom op mlitool knows named by its custom code, float16 weights folded,
  a QDQ file's QUANTIZE -> DEQUANTIZE pairs read as the quantization of the float tensors they
  wrap, constant ops folded (the batch fixed to 1), nearest upsampling and dilated
  convolutions through the batch as one op, an int8 model's float islands as the int8 op and
  its float regions (a GRU left in float) as one op, a bool CAST to float then QUANTIZE as a
  SELECT_V2. What they change every later stage sees: validation, the support check,
  lowering, the executors. No option is settled yet: `ctx.target` is None.
- `LOWERING`: between the support check and lowering (`mli.lower.driver`), with the target:
  PAD fusion, ops MLI runs as conv2d.

They run in the order of `PASSES` (one list, as Vela's graph optimiser lists its rewrites), each
stage on a shallow copy: the caller's graph (which inspect, report and the executors read) is
never changed.

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
from collections.abc import Callable
from typing import NamedTuple

from mlitool import ir
from mlitool.passes.as_conv import depthwise_one_channel_as_conv, fc_rows_as_conv
from mlitool.passes.bias_scale import rescale_bias_as_tflite
from mlitool.passes.bool_islands import fuse_bool_islands
from mlitool.passes.cast_bool import cast_bool_as_select
from mlitool.passes.cast_quantize import cast_int_quantize, cast_of_dequantize
from mlitool.passes.constant_fold import fold_constants
from mlitool.passes.context import PassContext
from mlitool.passes.custom_ops import name_custom_ops
from mlitool.passes.dilated import fuse_space_to_batch_conv
from mlitool.passes.float16 import fold_float16_dequantize
from mlitool.passes.float_expressions import fuse_float_expressions
from mlitool.passes.float_regions import fuse_float_regions
from mlitool.passes.islands import fuse_float_islands
from mlitool.passes.moved_islands import fuse_moved_islands
from mlitool.passes.order_islands import read_int8_for_order
from mlitool.passes.pad_fusion import fuse_pad_into_conv
from mlitool.passes.pool_padding import fuse_lowest_pad_into_max_pool
from mlitool.passes.qdq import read_qdq_pairs
from mlitool.passes.quantize_early import quantize_before_concatenation
from mlitool.passes.upsampling import fuse_tiled_upsampling

__all__ = ["LOWERING", "MODEL", "PASSES", "GraphPass", "run_passes"]

MODEL = "model"  # after reading, for every command
LOWERING = "lowering"  # on lowering's copy, with the target


class GraphPass(NamedTuple):
    stage: str  # MODEL | LOWERING
    run: Callable[[ir.Graph, PassContext], ir.Graph]


PASSES = (
    GraphPass(MODEL, name_custom_ops),  # first: every later stage dispatches on the op type
    GraphPass(MODEL, fold_float16_dequantize),
    GraphPass(MODEL, read_qdq_pairs),  # before folding: a weight's pair is still there
    GraphPass(MODEL, fold_constants),
    GraphPass(MODEL, fuse_tiled_upsampling),  # after folding: RESHAPE targets known
    GraphPass(MODEL, fuse_space_to_batch_conv),
    GraphPass(MODEL, quantize_before_concatenation),  # each branch an island of its own
    GraphPass(MODEL, fuse_float_islands),
    GraphPass(MODEL, fuse_float_expressions),  # islands of several ops (PT2E)
    GraphPass(MODEL, fuse_bool_islands),  # comparisons of float values, SELECT of them
    GraphPass(MODEL, fuse_moved_islands),  # UNPACK of a DEQUANTIZE
    GraphPass(MODEL, read_int8_for_order),  # ARG_MAX / ARG_MIN of a DEQUANTIZE
    GraphPass(MODEL, cast_bool_as_select),
    GraphPass(MODEL, cast_int_quantize),
    GraphPass(MODEL, cast_of_dequantize),  # int8 ids dequantized, cast to int32
    GraphPass(MODEL, fuse_float_regions),  # what float is left: a float FULLY_CONNECTED, GRU gates
    GraphPass(MODEL, rescale_bias_as_tflite),  # last: the bias of the graph every stage sees
    GraphPass(LOWERING, fuse_pad_into_conv),
    GraphPass(LOWERING, fuse_lowest_pad_into_max_pool),
    GraphPass(LOWERING, depthwise_one_channel_as_conv),
    GraphPass(LOWERING, fc_rows_as_conv),
)


def run_passes(
    graph: ir.Graph, ctx: PassContext, stage: str, passes: tuple[GraphPass, ...] = PASSES
) -> ir.Graph:
    """`graph` rewritten in order by the `passes` of `stage` (a shallow copy: tensors and
    untouched ops are shared, the op list is the copy's own); what they did is in `ctx`."""
    g = dataclasses.replace(
        graph,
        ops=list(graph.ops),
        tensors=list(graph.tensors),
        inputs=list(graph.inputs),
        outputs=list(graph.outputs),
    )
    for p in passes:
        if p.stage == stage:
            g = p.run(g, ctx)
    return g


def fold_model(model: ir.Model) -> None:
    """Rewrite `model`'s main graph by the model-stage passes, as every command sees it; what
    they did is recorded on the model (shown by `inspect`, carried into the MLI model)."""
    ctx = PassContext()
    model.subgraphs[0] = run_passes(model.main, ctx, MODEL)
    model.rewritten_ops = dict(ctx.rewritten)
    model.batch_fixed = list(ctx.batch_fixed)
    model.folded_ops = list(ctx.folded)
    model.removed_ops = list(ctx.removed)
    model.warnings += ctx.warnings
