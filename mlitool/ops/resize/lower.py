"""Lowerings of RESIZE_BILINEAR (the `resize_bilinear` fallback C), SPACE_TO_BATCH_ND /
BATCH_TO_SPACE_ND (index gathers, `gather4`) and SPACE_TO_DEPTH / DEPTH_TO_SPACE (MLI permutes of
a reshaped view)."""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.mli.lower import params as P
from mlitool.mli.lower.builder import Builder, act_el
from mlitool.mli.lower.facts import const_values
from mlitool.ops.gather.lower import gather4_layers, gather_output
from mlitool.ops.resize.c_kernel import RESIZE_BILINEAR
from mlitool.ops.resize.reference import scale_10
from mlitool.ops.resize.space_batch import blocked, lower_space_batch

# --- checks ----------------------------------------------------------------------------------


# --- shared steps ----------------------------------------------------------------------------


# --- lowerings -------------------------------------------------------------------------------


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
    kout, pending = gather_output(b, op, x, el)
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
    """SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND: with block 1 a pad (with the output's zero point)
    or a crop of the spatial axes (gather4); any other block, of one sample, the space_batch
    fallback C (a batch the support check refuses: "has batch 4 (MLI runs batch 1)")."""
    if blocked(b.g, op):
        lower_space_batch(b, op, fmt)
        return
    shape = b.g.tensors[op.inputs[0]].shape
    edges = np.asarray(const_values(b.g, op.inputs[2]), dtype=np.int64).reshape(-1, 2)
    vecs = [np.arange(d) for d in shape]
    for d, (lo, hi) in enumerate(edges, start=1):
        if op.type == "SPACE_TO_BATCH_ND":
            vecs[d] = np.concatenate([np.full(lo, -1), np.arange(shape[d]), np.full(hi, -1)])
        else:
            vecs[d] = np.arange(lo, shape[d] - hi)
    gather4_layers(b, op, fmt, vecs, "pad" if op.type == "SPACE_TO_BATCH_ND" else "crop")


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
