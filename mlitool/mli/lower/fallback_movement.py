"""Data-movement ops MLI has no kernel for: onto the fallback C (`gather4` for TILE, GATHER,
RESIZE_NEAREST_NEIGHBOR and block-1 SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND; `resize_bilinear`),
or onto MLI compositions (SPACE_TO_DEPTH / DEPTH_TO_SPACE: a view and mli_krn_permute; PACK: a
concatenation of views; UNPACK: slices, in movement.py).

They copy raw elements in the activation's own element type (no conversion in FX formats). As
TFLite's kernels, they never requantize: an int8 model's output keeps its own parameters over
the copied values; otherwise (float models, FX) the output takes the input's parameters and a
convert follows where the model's differ.
"""

from __future__ import annotations

import numpy as np

from mlitool import ir, opspec
from mlitool.errors import UnsupportedError
from mlitool.execute.call import Call
from mlitool.execute.resize import scale_10
from mlitool.fallback.gather import GATHER4
from mlitool.fallback.resize import RESIZE_BILINEAR
from mlitool.mli.lower import concat
from mlitool.mli.lower import params as P
from mlitool.mli.lower.builder import Builder, act_el
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.lower.facts import const_values
from mlitool.mli.lower.fallback import fallback_needs_mli2
from mlitool.mli.types import ElType, MliTensor

# --- checks ----------------------------------------------------------------------------------


def movement_types(s: Subject):
    """fallback C moves int8 or int16 elements; tensor {name!r} is {dtype}"""
    for i in (*s.op.inputs[:1], *s.op.outputs):
        t = s.graph.tensors[i]
        if t.data is None and t.dtype not in ("int8", "int16", "float32"):
            return {"name": t.name or f"#{i}", "dtype": t.dtype}
    return _OK


def hwc_only(s: Subject):
    """fallback C and compositions of this op are written for the HWC layout"""
    return _OK if s.layout == "hwc" else {}


CHECKS = (fallback_needs_mli2, movement_types, hwc_only)


def gather_constant(s: Subject):
    """GATHER with run-time indices or batch_dims {bd} (fallback C: constant indices, batch_dims 0)"""
    bd = int(s.op.options.get("batch_dims", 0))
    if const_values(s.graph, s.op.inputs[1]) is None or bd != 0:
        return {"bd": bd}
    return _OK


# --- shared steps ----------------------------------------------------------------------------


def _output(b: Builder, op: ir.Op, x: str, el: ElType) -> tuple[str, list]:
    """The output of a raw copy: an int8 model's tensor keeps its parameters (TFLite copies raw
    values whatever they are); otherwise it carries the input's."""
    tin, tout = b.g.tensors[op.inputs[0]], b.g.tensors[op.outputs[0]]
    if el == ElType.SA8 and tin.dtype == tout.dtype == "int8":
        return b.produce(op.outputs[0], el).name, []
    return b.kernel_output(op, op.outputs[0], el, P.copy_params(b.tensors[x]))


def _fill(t: MliTensor) -> int:
    return int(t.zero_point[0]) if t.el_type.is_sa else 0


def _gather4(b: Builder, op: ir.Op, fmt: str, vecs: list[np.ndarray], what: str) -> None:
    """A gather4 layer from index vectors along each TFLite input axis (the batch's is [0])."""
    el = act_el(fmt)
    x = b.use(op, op.inputs[0], el)
    rank = len(b.g.tensors[op.inputs[0]].shape)
    if rank >= 2:
        vecs = vecs[1:]
    vecs = [np.zeros(1, np.int64)] * (4 - len(vecs)) + [np.asarray(v) for v in vecs]
    kout, pending = _output(b, op, x, el)
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
    if op.type == "GATHER":  # indices of any rank pick in row-major order: flatten them
        src = b.g.tensors[op.inputs[0]].shape
        axis = int(op.options.get("axis", 0)) % len(src)
        n = int(np.asarray(const_values(b.g, op.inputs[1])).size)
        shape = tuple(src[:axis]) + (n,) + tuple(src[axis + 1 :])
    _gather4(b, op, fmt, _probe(b, op, shape), "per-axis index gather")


def lower_resize_bilinear(b: Builder, op: ir.Op, fmt: str) -> None:
    el = act_el(fmt)
    x = b.use(op, op.inputs[0], el)
    h, w = b.tensors[x].shape[:2]
    oh, ow = (int(v) for v in np.asarray(const_values(b.g, op.inputs[1])).reshape(-1))
    align = bool(op.options.get("align_corners", False))
    cfg = {
        "scale_h": scale_10(h, oh, align),
        "scale_w": scale_10(w, ow, align),
        "half_pixel": int(bool(op.options.get("half_pixel_centers", False))),
    }
    kout, pending = _output(b, op, x, el)
    b.fallback(
        op,
        RESIZE_BILINEAR,
        [x],
        [kout],
        cfg=cfg,
        notes=[f"no MLI kernel for {op.type}: fallback C (TFLite's integer bilinear resize)"],
    )
    b.finish(op, pending, "RESIZE_BILINEAR keeps raw values' parameters")


def lower_batch_space(b: Builder, op: ir.Op, fmt: str) -> None:
    """SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND: a pad (with the output's zero point) or a crop of
    the spatial axes. Only block 1 gets here: any other makes a batch, which the support check
    refuses ("has batch 4 (MLI runs batch 1)")."""
    shape = b.g.tensors[op.inputs[0]].shape
    edges = np.asarray(const_values(b.g, op.inputs[2]), dtype=np.int64).reshape(-1, 2)
    vecs = [np.arange(d) for d in shape]
    for d, (lo, hi) in enumerate(edges, start=1):
        if op.type == "SPACE_TO_BATCH_ND":
            vecs[d] = np.concatenate([np.full(lo, -1), np.arange(shape[d]), np.full(hi, -1)])
        else:
            vecs[d] = np.arange(lo, shape[d] - hi)
    _gather4(b, op, fmt, vecs, "pad" if op.type == "SPACE_TO_BATCH_ND" else "crop")


def lower_depth_space(b: Builder, op: ir.Op, fmt: str) -> None:
    """SPACE_TO_DEPTH / DEPTH_TO_SPACE of an HWC tensor are one transpose of a rank-4 view:
    (H/b, b, W/b, b*C) <-> (H/b, W/b, b, b*C), the middle axes swapped (mli_krn_permute)."""
    el = act_el(fmt)
    bs = int(op.options["block_size"])
    x = b.use(op, op.inputs[0], el)
    h, w, c = b.tensors[x].shape
    if op.type == "SPACE_TO_DEPTH":
        view, perm = (h // bs, bs, w // bs, bs * c), (h // bs, w // bs, bs, bs * c)
    else:
        view, perm = (h, w, bs, c // bs), (h, bs, w, c // bs)
    why = f"{op.type} block {bs} as a transpose of axes 1 and 2"
    xv = b.dense_view(op, fmt, x, view, why)
    cfg = {"perm_dim0": 0, "perm_dim1": 2, "perm_dim2": 1, "perm_dim3": 3}
    leaves = P.kernel_leaves("permute", b.tensors[xv], cfg) or P.copy_params(b.tensors[xv])
    kout, pending = b.kernel_output(op, op.outputs[0], el, leaves)
    tmp = b.shaped_output(b.tensors[kout], perm, "perm")
    b.layer(op, "permute", fmt, [xv], [tmp], cfg_type="mli_permute_cfg", cfg=cfg, notes=[why])
    b.view_layer(op, tmp, kout, f"{op.type} output {list(b.tensors[kout].shape)}")
    b.finish(op, pending, "permute copies its input's parameters")


def lower_pack(b: Builder, op: ir.Op, fmt: str) -> None:
    """PACK: each input viewed with the new axis of size 1, concatenated along it."""
    el = act_el(fmt)
    out = b.produce(op.outputs[0], el)
    axis = b.mli_axis(
        int(op.options.get("axis", 0)), len(b.g.tensors[op.outputs[0]].shape), out.rank
    )
    piece = tuple(1 if d == axis else n for d, n in enumerate(out.shape))
    ins = [
        b.dense_view(op, fmt, b.use(op, i, el), piece, "PACK input with the new axis")
        for i in op.inputs
    ]
    concat._concat(b, op, fmt, out, out, ins)
