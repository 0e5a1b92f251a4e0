"""`space_batch`: SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND with a block other than 1 (of a batch-1
model: the blocked side's leading dimension holds the block offsets, kept as MLI rows), as
fallback C copying raw elements of any size (SA8, FX8, FX16): no requantization, as TFLite's
kernels copy.

S2B (`mode` 0): out[k, i, j, :] = x[i * bh + k / bw - top, j * bw + k % bw - left, :], the fill
value (the output's zero point) outside x. B2S (`mode` 1): out[y, x, :] = in[k, yy / bh,
xx / bw, :] with yy = y + top, xx = x + left (the crops) and k = (yy % bh) * bw + xx % bw.
Spatial sizes are those of a 2-D block; a 1-D block (rank 3, [1, T, C]) has width 1.
"""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.mli.fallback import FallbackKernel, register_kernel
from mlitool.mli.lower.builder import Builder, act_el
from mlitool.mli.lower.facts import const_values
from mlitool.ops.gather.lower import gather_output

CFG = ("mode", "bh", "bw", "top", "left", "ih", "iw", "oh", "ow", "ch", "fill")


def source_pixels(cfg) -> np.ndarray:
    """The input pixel (row-major over the input's spatial grid, block offsets first for B2S)
    of each output pixel, -1 for the fill."""
    bh, bw, top, left = (int(cfg[k]) for k in ("bh", "bw", "top", "left"))
    ih, iw, oh, ow = (int(cfg[k]) for k in ("ih", "iw", "oh", "ow"))
    if int(cfg["mode"]) == 0:
        k, i, j = np.indices((bh * bw, oh, ow))
        yy, xx = i * bh + k // bw - top, j * bw + k % bw - left
        inside = (yy >= 0) & (yy < ih) & (xx >= 0) & (xx < iw)
        return np.where(inside, yy * iw + xx, -1).reshape(-1)
    yy, xx = (v + d for v, d in zip(np.indices((oh, ow)), (top, left)))
    k = (yy % bh) * bw + xx % bw
    return ((k * ih + yy // bh) * iw + xx // bw).reshape(-1)


def _run(layer, model, xs, arith) -> np.ndarray:
    x, cfg = xs[0], layer.cfg
    n, ch = x.shape[0], int(cfg["ch"])
    pixels = x.reshape(n, -1, ch)
    src = source_pixels(cfg)
    y = np.where((src < 0)[None, :, None], x.dtype.type(cfg["fill"]), pixels[:, np.maximum(src, 0)])
    return y.reshape((n, *model.tensor(layer.outputs[0]).shape))


SPACE_BATCH = FallbackKernel(
    name="space_batch",
    doc="SPACE_TO_BATCH_ND (mode 0) / BATCH_TO_SPACE_ND (mode 1) of one sample, block bh x bw",
    cfg=CFG,
    c_source="""\
@STORAGE@mli_status @FN@(const mli_tensor *in, const @CFG@ *cfg, mli_tensor *out) {
    const uint32_t size = mli_hlp_tensor_element_size(in);
    const int32_t rows = cfg->mode == 0 ? cfg->bh * cfg->bw : 1;
    int32_t k, y, x, c;
    uint32_t i = 0u;
    for (k = 0; k < rows; k++) {
        for (y = 0; y < cfg->oh; y++) {
            for (x = 0; x < cfg->ow; x++) {
                /* the input pixel, row-major; -1: the fill value (S2B's padding) */
                int32_t src = -1;
                if (cfg->mode == 0) {
                    const int32_t yy = y * cfg->bh + k / cfg->bw - cfg->top;
                    const int32_t xx = x * cfg->bw + k % cfg->bw - cfg->left;
                    if (yy >= 0 && yy < cfg->ih && xx >= 0 && xx < cfg->iw) {
                        src = yy * cfg->iw + xx;
                    }
                } else {
                    const int32_t yy = y + cfg->top;
                    const int32_t xx = x + cfg->left;
                    const int32_t kk = (yy % cfg->bh) * cfg->bw + xx % cfg->bw;
                    src = (kk * cfg->ih + yy / cfg->bh) * cfg->iw + xx / cfg->bw;
                }
                for (c = 0; c < cfg->ch; c++, i++) {
                    const uint32_t dst = @P@_offset(out, i);
                    const uint32_t at = src < 0 ? 0u
                        : @P@_offset(in, (uint32_t)(src * cfg->ch + c));
                    if (size == 2u) {
                        out->data.mem.pi16[dst] =
                            src < 0 ? (int16_t)cfg->fill : in->data.mem.pi16[at];
                    } else {
                        out->data.mem.pi8[dst] = src < 0 ? (int8_t)cfg->fill : in->data.mem.pi8[at];
                    }
                }
            }
        }
    }
    return MLI_STATUS_OK;
}
""",
    run=_run,
)
register_kernel(SPACE_BATCH)


def blocked(graph: ir.Graph, op: ir.Op) -> bool:
    """A SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND whose block is not all 1 and whose batch side (the
    S2B's input, the B2S's output) has batch 1: the other side's leading dimension holds the
    block offsets, rows of one sample (`OpSpec.leading_dims`)."""
    block = const_values(graph, op.inputs[1])
    side = op.inputs[0] if op.type == "SPACE_TO_BATCH_ND" else op.outputs[0]
    shape = graph.tensors[side].shape
    return (
        block is not None and np.any(np.asarray(block) != 1) and len(shape) >= 3 and shape[0] == 1
    )


def lower_space_batch(b: Builder, op: ir.Op, fmt: str) -> None:
    """One space_batch layer (block other than 1)."""
    el = act_el(fmt)
    g = b.g
    block = [int(v) for v in np.asarray(const_values(g, op.inputs[1])).reshape(-1)]
    edges = np.asarray(const_values(g, op.inputs[2]), dtype=np.int64).reshape(-1, 2)
    bh, bw = (block + [1])[:2]
    top, left = int(edges[0, 0]), int(edges[1, 0]) if len(edges) > 1 else 0
    src, dst = g.tensors[op.inputs[0]].shape, g.tensors[op.outputs[0]].shape
    space, blocks = (src, dst) if op.type == "SPACE_TO_BATCH_ND" else (dst, src)

    def grid(shape):  # (H, W, C) of a [N, H, W, C] or [N, T, C] tensor
        return (shape[1], shape[2], shape[3]) if len(shape) == 4 else (shape[1], 1, shape[2])

    (sh, sw, ch), (kh, kw, _) = grid(space), grid(blocks)
    ih, iw, oh, ow = (sh, sw, kh, kw) if op.type == "SPACE_TO_BATCH_ND" else (kh, kw, sh, sw)
    x = b.use(op, op.inputs[0], el)
    kout, pending = gather_output(b, op, x, el)
    out = b.tensors[kout]
    fill = int(out.zero_point[0]) if out.el_type.is_sa else 0
    cfg = {
        "mode": 0 if op.type == "SPACE_TO_BATCH_ND" else 1,
        "bh": bh,
        "bw": bw,
        "top": top,
        "left": left,
        "ih": ih,
        "iw": iw,
        "oh": oh,
        "ow": ow,
        "ch": ch,
        "fill": fill,
    }
    b.fallback(
        op,
        SPACE_BATCH,
        [x],
        [kout],
        cfg=cfg,
        notes=[f"no MLI kernel for {op.type}: fallback C (block {bh} x {bw})"],
    )
    b.finish(op, pending, f"{op.type} copies raw values")
