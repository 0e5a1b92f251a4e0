"""OpSpecs of the index gathers: GATHER, TILE, RESIZE_NEAREST_NEIGHBOR, REVERSE_V2 (the
backward half of a Bidirectional RNN), MIRROR_PAD (REFLECT, SYMMETRIC) and BROADCAST_TO. Each
output is its input's elements picked along each axis by index tables: the `gather4` fallback C
(any element type), one kernel for both executor modes that also gives validation the output
shape."""

from __future__ import annotations

from collections.abc import Callable

from mlitool.ops.common.computed_shapes import computed_shapes
from mlitool.ops.common.register import fallback_op
from mlitool.ops.gather import lower as GL
from mlitool.ops.gather import reference as R
from mlitool.ops.integer import lower as IL
from mlitool.ops.integer.dispatch import checks_or, int32_or, on_int32
from mlitool.ops.spec import CONVERT, OpSpec, register


def gather_op(
    name: str,
    slots: tuple[str, ...],
    options: str | None,
    kernel: Callable,
    params: tuple[str, ...] = (),
    checks: tuple[Callable, ...] = GL.CHECKS,
    lower: Callable = GL.lower_index_gather,
    **facts,
) -> OpSpec:
    """Register `name`, whose output is its input's elements picked along each axis by index
    tables (`gather4`, any element type): one `kernel` runs in both executor modes and gives
    validation the output shape."""
    facts.setdefault("int32", True)  # gather4 moves int32 elements too (SA32)
    facts.setdefault("bools", True)  # and bool bytes (SA8 of scale 1)
    return fallback_op(
        name,
        slots,
        quantized=False,
        options=options,
        params=params,
        shapes=computed_shapes,
        checks=checks,
        lower=lower,
        run=(kernel,) * 2,
        **facts,
    )


def _gather_bounds(graph, op) -> dict[int, int]:
    """GATHER's positions index its input's `axis`."""
    shape = graph.tensors[op.inputs[0]].shape
    axis = int(op.options.get("axis", 0))
    return {1: shape[axis % len(shape)]} if -len(shape) <= axis < len(shape) else {}


def _gather_nd_bounds(graph, op) -> dict[int, int]:
    """GATHER_ND's indices: their last axis's k components index the input's first k axes
    (the smallest of them bounds every component)."""
    shape, k = graph.tensors[op.inputs[0]].shape, graph.tensors[op.inputs[1]].shape[-1:]
    return {1: min(shape[: k[0]])} if k and 0 < k[0] <= len(shape) else {}


def _lookup_bounds(graph, op) -> dict[int, int]:
    """EMBEDDING_LOOKUP's ids pick the table's rows."""
    return {0: graph.tensors[op.inputs[1]].shape[0]}


gather_op(
    "GATHER",
    ("input", "positions"),
    "GatherOptions",
    R.gather,
    index_bounds=_gather_bounds,
    # run-time int32 indices (or int32 data): the `integer` family's `gather_rows`
    checks=checks_or((*GL.CHECKS, GL.gather_constant), IL.GATHER_CHECKS),
    lower=int32_or(GL.lower_index_gather, IL.lower_gather_rows),
    int32=True,
    leading_dims=on_int32,
)
gather_op("TILE", ("input", "multiples"), "TileOptions", R.tile, params=("multiples",))
gather_op(
    "RESIZE_NEAREST_NEIGHBOR",
    ("input", "size"),
    "ResizeNearestNeighborOptions",
    R.resize_nearest_neighbor,
    params=("size",),
)
gather_op(
    "MIRROR_PAD",
    ("input", "paddings"),
    "MirrorPadOptions",
    R.mirror_pad,
    params=("paddings",),
)
gather_op(
    "BROADCAST_TO",
    ("input", "shape"),
    None,
    R.broadcast_to,
    params=("shape",),
    lower=GL.lower_broadcast_to,
)
gather_op(
    "GATHER_ND",
    ("input", "indices"),
    None,
    R.gather_nd,
    checks=(*GL.CHECKS, GL.indices_constant, GL.gather_nd_view),
    lower=GL.lower_gather_nd,
    index_bounds=_gather_nd_bounds,
    leading_dims=True,  # picks rows: a leading dimension other than 1 is not a batch
)
gather_op("REVERSE_V2", ("input", "axis"), "ReverseV2Options", R.reverse_v2, params=("axis",))
# Run-time ids (a graph input of int32 ids): rows of the table copied by the `integer` family's
# `gather_rows` fallback C.
register(
    OpSpec(
        "EMBEDDING_LOOKUP",
        ("ids", "table"),
        types=CONVERT,
        params=("table",),
        weights=("table",),
        shapes=computed_shapes,
        kind="fallback",
        int32=True,
        leading_dims=True,  # the looked-up rows
        checks=IL.LOOKUP_CHECKS,
        lower=IL.lower_gather_rows,
        run=(R.embedding_lookup,) * 2,
        index_bounds=_lookup_bounds,
    )
)
