"""The index gathers lowered onto the `gather4` fallback C: the output's elements picked along each
axis by index tables the lowering computes by running the op's own kernel on index grids."""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.execute.reference.call import Call
from mlitool.mli.lower import params as P
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.lower.facts import const_values
from mlitool.mli.types import ElType, MliTensor
from mlitool.ops import spec as opspec
from mlitool.ops.common.fallback_checks import fallback_needs_mli2
from mlitool.ops.gather.c_kernel import GATHER4

# --- checks ----------------------------------------------------------------------------------


def movement_types(s: Subject):
    """fallback C moves int8, int16, int32 or bool elements; tensor {name!r} is {dtype}"""
    for i in (*s.op.inputs[:1], *s.op.outputs):
        t = s.graph.tensors[i]
        if t.data is None and t.dtype not in ("int8", "int16", "int32", "float32", "bool"):
            return {"name": t.name or f"#{i}", "dtype": t.dtype}
    return _OK


def hwc_only(s: Subject):
    """fallback C and compositions of this op are written for the HWC layout"""
    return _OK if s.layout == "hwc" else {}


CHECKS = (fallback_needs_mli2, movement_types, hwc_only)


def indices_constant(s: Subject):
    """{op} with run-time indices (fallback C: constant indices)"""
    return _OK if const_values(s.graph, s.op.inputs[1]) is not None else {"op": s.op.type}


def gather_nd_view(s: Subject):
    """GATHER_ND of a tensor whose axes after the indexed ones number more than 3 (fallback C
    sees the indexed axes merged into one, then the others, at most rank 4)"""
    idx = const_values(s.graph, s.op.inputs[1])
    k = np.asarray(idx).shape[-1] if idx is not None and np.ndim(idx) else 0
    return _OK if len(s.input(0).shape) - k <= 3 else {}


def gather_constant(s: Subject):
    """GATHER with run-time indices (fallback C: constant indices)"""
    return _OK if const_values(s.graph, s.op.inputs[1]) is not None else {}


# --- shared steps ----------------------------------------------------------------------------


def gather_output(b: Builder, op: ir.Op, x: str, el: ElType) -> tuple[str, list]:
    """The output of a raw copy: an int8 model's tensor keeps its parameters (TFLite copies raw
    values whatever they are); otherwise it carries the input's."""
    tin, tout = b.g.tensors[op.inputs[0]], b.g.tensors[op.outputs[0]]
    if el == ElType.SA8 and tin.dtype == tout.dtype == "int8":
        return b.produce(op.outputs[0], el).name, []
    return b.kernel_output(op, op.outputs[0], el, P.copy_params(b.tensors[x]))


def _fill(t: MliTensor) -> int:
    return int(t.zero_point[0]) if t.el_type.is_sa else 0


def gather4_layers(b: Builder, op: ir.Op, fmt: str, vecs: list[np.ndarray], what: str) -> None:
    """A gather4 layer from index vectors along each TFLite input axis (the batch's is [0])."""
    el = b.el_of(op.inputs[0], fmt)
    x = b.use(op, op.inputs[0], el)
    rank = len(b.g.tensors[op.inputs[0]].shape)
    if rank >= 2:
        vecs = vecs[1:]
    gather4_layer(b, op, el, x, vecs, what)


def gather4_layer(
    b: Builder, op: ir.Op, el: ElType, x: str, vecs: list[np.ndarray], what: str
) -> None:
    """A gather4 layer reading MLI tensor `x` by index vectors along each of its axes."""
    vecs = [np.zeros(1, np.int64)] * (4 - len(vecs)) + [np.asarray(v) for v in vecs]
    kout, pending = gather_output(b, op, x, el)
    index = np.concatenate(vecs).astype(np.int32)
    note = "gather4 index vectors, one per input axis (-1: fill)"
    cfg = {f"n{d}": len(v) for d, v in enumerate(vecs)} | {"fill": _fill(b.tensors[kout])}
    b.fallback(
        op,
        GATHER4,
        [x],
        [kout],
        params={"index": b.sa_constant(f"{kout}_index", ElType.SA32, index, notes=[note])},
        cfg=cfg,
        notes=[f"no MLI kernel for {op.type}: fallback C ({what}, {index.size} indices)"],
    )
    b.finish(op, pending, f"{op.type} copies raw values")


def _probe(b: Builder, op: ir.Op, shape: tuple[int, ...]) -> list[np.ndarray]:
    """Index vectors of an op that picks elements along each axis independently, read off its
    own tflite-mode kernel run on each axis's coordinates (viewed in `shape`, of the input's
    rank). Refuses an op whose selection is not separable."""
    g, src = b.g, b.g.tensors[op.inputs[0]]
    kernel = opspec.spec(op.type).run[1]
    coords = np.indices(src.shape, dtype=np.int32)
    outs = [
        np.asarray(kernel(Call(op, g, "tflite", {src.index: c[None]}, 1))[0]).reshape(shape)
        for c in coords
    ]
    vecs = [o[(0,) * d + (slice(None),) + (0,) * (len(shape) - d - 1)] for d, o in enumerate(outs)]
    grids = np.ix_(*vecs)
    if not all(np.array_equal(np.broadcast_to(gr, shape), o) for gr, o in zip(grids, outs)):
        raise UnsupportedError(f"{op.label}: its selection is not one index vector per axis")
    return vecs


# --- lowerings -------------------------------------------------------------------------------


def lower_index_gather(b: Builder, op: ir.Op, fmt: str) -> None:
    """TILE, RESIZE_NEAREST_NEIGHBOR, GATHER: one gather4 layer."""
    shape = tuple(b.g.tensors[op.outputs[0]].shape)
    if op.type == "GATHER" and int(op.options.get("batch_dims", 0) or 0) != 0:
        return _lower_element_gather(b, op, fmt)
    if op.type == "GATHER":  # indices of any rank pick in row-major order: flatten them
        src = b.g.tensors[op.inputs[0]].shape
        axis = int(op.options.get("axis", 0)) % len(src)
        n = int(np.asarray(const_values(b.g, op.inputs[1])).size)
        shape = tuple(src[:axis]) + (n,) + tuple(src[axis + 1 :])
    gather4_layers(b, op, fmt, _probe(b, op, shape), "per-axis index gather")


def _lower_element_gather(b: Builder, op: ir.Op, fmt: str) -> None:
    """GATHER with batch_dims (each batch row picks its own indices: not one index vector per
    axis): the input seen as one row-major axis (MLI 2.x's HWC: TFLite's order), one index per
    output element, read off the op's own kernel run on the elements' positions."""
    el = b.el_of(op.inputs[0], fmt)
    src = tuple(b.g.tensors[op.inputs[0]].shape)
    kernel = opspec.spec(op.type).run[1]
    where = np.arange(int(np.prod(src)), dtype=np.int64).reshape(1, *src)
    flat = np.asarray(kernel(Call(op, b.g, "tflite", {op.inputs[0]: where}, 1))[0]).reshape(-1)
    x = b.use(op, op.inputs[0], el)
    x = b.dense_view(op, fmt, x, (int(np.prod(src)),), "GATHER with batch_dims: one axis")
    gather4_layer(b, op, el, x, [flat], "GATHER with batch_dims: one index per element")


def lower_separable(b: Builder, op: ir.Op, fmt: str, shape: tuple[int, ...], what: str) -> None:
    """Any op picking elements along each axis independently (its output seen in `shape`, of
    the input's rank): one gather4 layer whose index vectors its own kernel gives."""
    gather4_layers(b, op, fmt, _probe(b, op, shape), what)


def lower_gather_nd(b: Builder, op: ir.Op, fmt: str) -> None:
    """GATHER_ND with constant indices [..., k]: the input seen with its first k axes merged
    into one (a view), whose rows the flat indices pick (one gather4 layer)."""
    el = b.el_of(op.inputs[0], fmt)
    shape = tuple(b.g.tensors[op.inputs[0]].shape)
    idx = np.asarray(const_values(b.g, op.inputs[1])).astype(np.int64)
    k = idx.shape[-1]
    rows = np.ravel_multi_index(tuple(idx.reshape(-1, k).T), shape[:k])
    view = (int(np.prod(shape[:k])), *shape[k:])
    x = b.use(op, op.inputs[0], el)
    x = b.dense_view(op, fmt, x, view, "GATHER_ND: its indexed axes merged into one")
    vecs = [rows, *(np.arange(n) for n in shape[k:])]
    gather4_layer(b, op, el, x, vecs, "GATHER_ND rows of the indexed axes merged")


def lower_broadcast_to(b: Builder, op: ir.Op, fmt: str) -> None:
    """BROADCAST_TO, also to a higher rank: the input seen with leading axes of 1 (as gather4
    sees any input up to rank 4), index 0 along each axis it repeats (one gather4 layer)."""
    el = b.el_of(op.inputs[0], fmt)
    src = tuple(b.g.tensors[op.inputs[0]].shape)
    out = tuple(b.g.tensors[op.outputs[0]].shape)
    padded = (1,) * (len(out) - len(src)) + src
    vecs = [np.zeros(o, np.int64) if i == 1 else np.arange(o) for i, o in zip(padded, out)]
    if len(out) >= 2:  # the output's batch axis (1) is not an MLI axis
        vecs = vecs[1:]
    x = b.use(op, op.inputs[0], el)
    gather4_layer(b, op, el, x, vecs, "repeated along the axes of size 1")
