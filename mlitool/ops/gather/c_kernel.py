"""`gather4`: out[i0, i1, i2, i3] = in[t0[i0], t1[i1], t2[i2], t3[i3]], one small index vector
per input axis (the input seen with leading axes of 1 up to rank 4), and an index of -1 for a
fill value (padding).

One kernel for every op that picks elements along each axis independently: TILE, GATHER along
one axis (constant indices), RESIZE_NEAREST_NEIGHBOR, the padding / cropping of a
SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND with block 1. It copies raw elements of any MLI element
size (SA8, FX8, FX16): no requantization, as TFLite's kernels copy. The output is written in
row-major order through its own shape and strides, so it may have another rank (GATHER with a
scalar index drops an axis) as long as the element count matches.
"""

from __future__ import annotations

import numpy as np

from mlitool.mli.fallback import FallbackKernel, register_kernel

CFG = ("n0", "n1", "n2", "n3", "fill")


def vectors(layer, model) -> list[np.ndarray]:
    """The four index vectors of a gather4 layer."""
    index = model.tensor(layer.params["index"]).data.astype(np.int64)
    counts = [int(layer.cfg[f"n{d}"]) for d in range(4)]
    return np.split(index, np.cumsum(counts)[:-1])


def _run(layer, model, xs, arith) -> np.ndarray:
    x = xs[0]
    x4 = x.reshape((x.shape[0],) + (1,) * (5 - x.ndim) + x.shape[1:])
    vecs = vectors(layer, model)
    grid = np.ix_(np.arange(x.shape[0]), *(np.maximum(v, 0) for v in vecs))
    y = x4[grid]
    pad = np.zeros([len(v) for v in vecs], bool)
    for d, v in enumerate(vecs):  # an index of -1 along any axis: the fill value
        pad |= (v < 0).reshape([-1 if k == d else 1 for k in range(4)])
    y = np.where(pad[None], x.dtype.type(layer.cfg["fill"]), y)
    out = model.tensor(layer.outputs[0])
    return y.reshape((x.shape[0],) + tuple(out.shape))


GATHER4 = FallbackKernel(
    name="gather4",
    doc="per-axis index gather: out[i0,i1,i2,i3] = in[t0[i0],t1[i1],t2[i2],t3[i3]] (-1: fill)",
    cfg=CFG,
    c_source="""\
@STORAGE@mli_status @FN@(const mli_tensor *in, const mli_tensor *index, const @CFG@ *cfg,
                         mli_tensor *out) {
    const int32_t *t0 = index->data.mem.pi32;
    const int32_t *t1 = t0 + cfg->n0;
    const int32_t *t2 = t1 + cfg->n1;
    const int32_t *t3 = t2 + cfg->n2;
    const uint32_t lead = 4u - in->rank;
    const uint32_t size = mli_hlp_tensor_element_size(in);
    int32_t stride[4] = {0, 0, 0, 0};
    int32_t i0, i1, i2, i3;
    uint32_t d, i = 0u;
    for (d = 0u; d < in->rank; d++) {
        stride[lead + d] = in->mem_stride[d];
    }
    for (i0 = 0; i0 < cfg->n0; i0++) {
        for (i1 = 0; i1 < cfg->n1; i1++) {
            for (i2 = 0; i2 < cfg->n2; i2++) {
                for (i3 = 0; i3 < cfg->n3; i3++, i++) {
                    /* a negative index anywhere: the fill value (padding) */
                    const int hole = t0[i0] < 0 || t1[i1] < 0 || t2[i2] < 0 || t3[i3] < 0;
                    const int32_t src = hole ? 0
                        : t0[i0] * stride[0] + t1[i1] * stride[1] + t2[i2] * stride[2]
                          + t3[i3] * stride[3];
                    const uint32_t dst = @P@_offset(out, i);
                    if (size == 4u) { /* int32 (SA32 of scale 1: fill 0) */
                        out->data.mem.pi32[dst] = hole ? cfg->fill : in->data.mem.pi32[src];
                    } else if (size == 2u) {
                        out->data.mem.pi16[dst] =
                            hole ? (int16_t)cfg->fill : in->data.mem.pi16[src];
                    } else {
                        out->data.mem.pi8[dst] = hole ? (int8_t)cfg->fill : in->data.mem.pi8[src];
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
register_kernel(GATHER4)
