"""`update_slice`: out = in with `update` written over it from constant start offsets (one per
axis of the output seen up to rank 4, leading axes of 1), the start indices TFLite clamps,
clamped at conversion. It copies raw elements of any MLI element size (SA8, FX8, FX16, SA32), as
TFLite's kernel copies; every tensor is read and written through its own strides."""

from __future__ import annotations

import numpy as np

from mlitool.mli.fallback import FallbackKernel, register_kernel
from mlitool.mli.types import Role
from mlitool.ops.update_slice.reference import update_slice

CFG = ("s0", "s1", "s2", "s3")

# Both kernels: each output element from the update where it falls inside the window at
# `start` (output shape and update shape seen as rank 4), else from the input, raw elements.
_WRITE = """\
static mli_status @FN@_write(const mli_tensor *in, const mli_tensor *update, const uint32_t *shape,
                             const uint32_t *ushape, const int32_t *start, mli_tensor *out) {
    const uint32_t size = mli_hlp_tensor_element_size(in);
    uint32_t d, i, n = @P@_count(out);
    for (i = 0u; i < n; i++) {
        uint32_t r = i, k[4], u = 0u;
        int inside = 1;
        for (d = 4u; d > 0u; d--) {
            k[d - 1u] = r % shape[d - 1u];
            r /= shape[d - 1u];
        }
        for (d = 0u; d < 4u; d++) {
            const int32_t j = (int32_t)k[d] - start[d];
            if (j < 0 || j >= (int32_t)ushape[d]) {
                inside = 0;
            } else {
                u = u * ushape[d] + (uint32_t)j;
            }
        }
        {
            const mli_tensor *src = inside ? update : in;
            const uint32_t from = @P@_offset(src, inside ? u : i);
            const uint32_t to = @P@_offset(out, i);
            if (size == 4u) {
                out->data.mem.pi32[to] = src->data.mem.pi32[from];
            } else if (size == 2u) {
                out->data.mem.pi16[to] = src->data.mem.pi16[from];
            } else {
                out->data.mem.pi8[to] = src->data.mem.pi8[from];
            }
        }
    }
    return MLI_STATUS_OK;
}
"""


def _run(layer, model, xs, arith) -> np.ndarray:
    x, update = np.asarray(xs[0]), np.asarray(xs[1])
    u_t = model.tensor(layer.inputs[1])
    if u_t.role == Role.PARAM:
        update = update[None]
    lead = 4 - (x.ndim - 1)
    starts = [int(layer.cfg[f"s{d}"]) for d in range(lead, 4)]
    y = x.copy()
    window = tuple(slice(s, s + n) for s, n in zip(starts, update.shape[1:]))
    y[(slice(None), *window)] = update
    return y


UPDATE_SLICE = register_kernel(
    FallbackKernel(
        name="update_slice",
        doc="out = in with update written from constant start offsets (DYNAMIC_UPDATE_SLICE)",
        cfg=CFG,
        c_source=_WRITE
        + """\
@STORAGE@mli_status @FN@(const mli_tensor *in, const mli_tensor *update, const @CFG@ *cfg,
                         mli_tensor *out) {
    const int32_t start[4] = {cfg->s0, cfg->s1, cfg->s2, cfg->s3};
    const uint32_t lead = 4u - out->rank;
    uint32_t shape[4] = {1u, 1u, 1u, 1u};
    uint32_t ushape[4] = {1u, 1u, 1u, 1u};
    uint32_t d;
    for (d = 0u; d < out->rank; d++) {
        shape[lead + d] = out->shape[d];
        ushape[lead + d] = update->shape[d];
    }
    return @FN@_write(in, update, shape, ushape, start, out);
}
""",
        run=_run,
    )
)


# `update_slice_at`: the start indices an int32 tensor read at run time. cfg a0..a3: for each
# MLI axis of the output (seen up to rank 4, leading axes of 1), the position of its start in
# that tensor (-1: an axis the MLI tensor does not have, start 0).
AT_CFG = ("a0", "a1", "a2", "a3")


def _run_at(layer, model, xs, arith) -> np.ndarray:
    x, update, starts = (np.asarray(v) for v in xs)
    if model.tensor(layer.inputs[1]).role == Role.PARAM:
        update = update[None]
    lead = 4 - (x.ndim - 1)
    at = [int(layer.cfg[f"a{d}"]) for d in range(lead, 4)]
    s = starts.reshape(x.shape[0], -1).astype(np.int64)
    picked = np.stack([s[:, a] if a >= 0 else np.zeros(len(s), np.int64) for a in at], axis=1)
    hi = np.maximum(np.asarray(x.shape[1:]) - np.asarray(update.shape[1:]), 0)
    return update_slice(x, update, np.clip(picked, 0, hi))


UPDATE_SLICE_AT = register_kernel(
    FallbackKernel(
        name="update_slice_at",
        doc="out = in with update written from run-time int32 start indices, clamped as TFLite "
        "clamps them (DYNAMIC_UPDATE_SLICE)",
        cfg=AT_CFG,
        c_source=_WRITE
        + """\
@STORAGE@mli_status @FN@(const mli_tensor *in, const mli_tensor *update,
                         const mli_tensor *starts, const @CFG@ *cfg, mli_tensor *out) {
    const int32_t at[4] = {cfg->a0, cfg->a1, cfg->a2, cfg->a3};
    const uint32_t lead = 4u - out->rank;
    uint32_t shape[4] = {1u, 1u, 1u, 1u};
    uint32_t ushape[4] = {1u, 1u, 1u, 1u};
    int32_t start[4];
    uint32_t d;
    for (d = 0u; d < out->rank; d++) {
        shape[lead + d] = out->shape[d];
        ushape[lead + d] = update->shape[d];
    }
    for (d = 0u; d < 4u; d++) { /* TFLite's clamp: 0 .. shape - update shape */
        const int32_t hi = (int32_t)shape[d] - (int32_t)ushape[d];
        const int32_t s = at[d] < 0 ? 0 : starts->data.mem.pi32[at[d]];
        start[d] = s < 0 ? 0 : (s > hi ? (hi > 0 ? hi : 0) : s);
    }
    return @FN@_write(in, update, shape, ushape, start, out);
}
""",
        run=_run_at,
    )
)
