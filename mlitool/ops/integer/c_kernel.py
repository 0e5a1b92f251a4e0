"""The int32 fallback C with its numpy twins: `binary32` (ADD, SUB, MUL, FLOOR_DIV, FLOOR_MOD,
MAXIMUM, MINIMUM, the comparisons), `select32`, `cast32`, `gather_rows`.

An int32 tensor is an SA32 tensor of scale 1 and zero point 0: its containers are the values.
The arithmetic wraps through uint32_t (no signed overflow in C) and never divides by 0 (the
element is 0; TFLite fails, see `reference.py`). Operands broadcast right-aligned against the
output, as `compare8` does.
"""

from __future__ import annotations

import numpy as np

from mlitool.mli.fallback import FallbackKernel, register_kernel
from mlitool.ops.common.broadcast_c import BROADCAST_AT, batched
from mlitool.ops.integer.reference import binary32, wrap32


def _run_binary(layer, model, xs, arith) -> np.ndarray:
    rank = len(model.tensor(layer.outputs[0]).shape)
    a, b = (batched(model, n, x, rank) for n, x in zip(layer.inputs, xs))
    c = layer.cfg
    out = binary32(c["op"], a, b, c["act_min"], c["act_max"])
    return out.astype(np.int8) if out.dtype == bool else out


BINARY32 = FallbackKernel(
    name="binary32",
    doc="int32 ADD / SUB / MUL / SQUARED_DIFFERENCE (wrapping) / DIV / FLOOR_DIV / FLOOR_MOD / "
    "MAXIMUM / MINIMUM, or a comparison (bool output)",
    c_source=BROADCAST_AT
    + """\
static int32_t @FN@_op(int32_t op, int32_t x, int32_t y) {
    int32_t r;
    switch (op) { /* the order of mlitool.ops.integer.reference.CODES */
    case 0: return (int32_t)((uint32_t)x + (uint32_t)y);
    case 1: return (int32_t)((uint32_t)x - (uint32_t)y);
    case 2: return (int32_t)((uint32_t)x * (uint32_t)y);
    case 3:
        if (y == 0) return 0;
        if (y == -1) return (int32_t)(0u - (uint32_t)x);
        r = x / y;
        return (x % y != 0 && ((x < 0) != (y < 0))) ? r - 1 : r;
    case 4:
        if (y == 0 || y == -1) return 0;
        r = x % y;
        return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
    case 5: return x > y ? x : y;
    case 6: return x < y ? x : y;
    case 13:
        if (y == 0) return 0;
        if (y == -1) return (int32_t)(0u - (uint32_t)x);
        return x / y;
    default:
        r = (int32_t)((uint32_t)x - (uint32_t)y);
        return (int32_t)((uint32_t)r * (uint32_t)r);
    }
}

static int @FN@_cmp(int32_t op, int32_t x, int32_t y) {
    switch (op) { /* the order of mlitool.ops.compare.reference.CODES, from 7 */
    case 7: return x == y;
    case 8: return x != y;
    case 9: return x > y;
    case 10: return x >= y;
    case 11: return x < y;
    default: return x <= y;
    }
}

@STORAGE@mli_status @FN@(const mli_tensor *in1, const mli_tensor *in2, const @CFG@ *cfg,
                         mli_tensor *out) {
    const int32_t *a = in1->data.mem.pi32;
    const int32_t *b = in2->data.mem.pi32;
    uint32_t i, n = @P@_count(out);
    for (i = 0u; i < n; i++) {
        int32_t x = a[@FN@_at(in1, out, i)];
        int32_t y = b[@FN@_at(in2, out, i)];
        if (cfg->op >= 7 && cfg->op <= 12) {
            out->data.mem.pi8[@P@_offset(out, i)] = (int8_t)@FN@_cmp(cfg->op, x, y);
        } else {
            int32_t r = @FN@_op(cfg->op, x, y);
            r = r < cfg->act_min ? cfg->act_min : r;
            out->data.mem.pi32[@P@_offset(out, i)] = r > cfg->act_max ? cfg->act_max : r;
        }
    }
    return MLI_STATUS_OK;
}
""",
    run=_run_binary,
    cfg=("op", "act_min", "act_max"),
)


def _run_select(layer, model, xs, arith) -> np.ndarray:
    rank = len(model.tensor(layer.outputs[0]).shape)
    cond, x, y = (batched(model, n, v, rank) for n, v in zip(layer.inputs, xs))
    return np.where(cond != 0, x, y).astype(np.int32)


SELECT32 = FallbackKernel(
    name="select32",
    doc="int32 SELECT: x where the condition byte is not 0, else y",
    c_source=BROADCAST_AT
    + """\
@STORAGE@mli_status @FN@(const mli_tensor *cond, const mli_tensor *x, const mli_tensor *y,
                         mli_tensor *out) {
    const int8_t *c = @P@_in8(cond);
    const int32_t *xv = x->data.mem.pi32;
    const int32_t *yv = y->data.mem.pi32;
    int32_t *o = out->data.mem.pi32;
    uint32_t i, n = @P@_count(out);
    for (i = 0u; i < n; i++) {
        o[@P@_offset(out, i)] = c[@FN@_at(cond, out, i)] ? xv[@FN@_at(x, out, i)]
                                                         : yv[@FN@_at(y, out, i)];
    }
    return MLI_STATUS_OK;
}
""",
    run=_run_select,
)

# cast32's output modes
TO_INT32, TO_INT8, TO_BOOL, TO_SA8, TO_INT16 = 0, 1, 2, 3, 4


def cast_values(v: np.ndarray, mode: int, thresholds: np.ndarray, reach: int) -> np.ndarray:
    """int32 values `v` in the output's representation (`mode`); TO_SA8: -128 plus the number
    of thresholds <= v, at most `reach` (the levels an int32 reaches)."""
    v = np.asarray(v, np.int64)
    if mode == TO_INT32:
        return v.astype(np.int32)
    if mode == TO_INT8:
        return wrap32(v).astype(np.int8)  # int32 -> int8 keeps the low byte, as TFLite's cast
    if mode == TO_BOOL:
        return (v != 0).astype(np.int8)
    if mode == TO_INT16:
        return wrap32(v).astype(np.int16)  # the low 16 bits, as TFLite's cast
    thr = np.asarray(thresholds, np.int64).reshape(-1)
    return (np.minimum(np.searchsorted(thr, v, side="right"), reach) - 128).astype(np.int8)


def _run_cast(layer, model, xs, arith) -> np.ndarray:
    x, lut, thr = xs
    c = layer.cfg
    x = np.asarray(x)
    if c["in_bytes"] == 1:
        v = np.asarray(lut, np.int64).reshape(-1)[x.astype(np.int64) + 128]
    else:  # int16 (FX16 of 0 frac bits) or int32: the values
        v = x.astype(np.int64)
    # element i of the output is element i of the input (the C walks the count): the output's
    # own shape (an MLI argmax's [1, 1] cast into a rank-1 tensor)
    out_shape = model.tensor(layer.outputs[0]).shape
    y = cast_values(v, c["mode"], thr, c["reach"])
    return y.reshape((x.shape[0], *out_shape))


CAST32 = FallbackKernel(
    name="cast32",
    doc="CAST through int32: an int8 input by a 256-entry table, an int16 / int32 one as it is; "
    "out as int32, the low 16 bits or byte, bool, or int8 by 255 thresholds",
    c_source="""\
@STORAGE@mli_status @FN@(const mli_tensor *in, const mli_tensor *lut, const mli_tensor *thr,
                         const @CFG@ *cfg, mli_tensor *out) {
    uint32_t i, n = @P@_count(out);
    for (i = 0u; i < n; i++) {
        uint32_t at = @P@_offset(in, i);
        int32_t v = cfg->in_bytes == 1   ? lut->data.mem.pi32[in->data.mem.pi8[at] + 128]
                    : cfg->in_bytes == 2 ? (int32_t)in->data.mem.pi16[at]
                                         : in->data.mem.pi32[at];
        uint32_t o = @P@_offset(out, i);
        if (cfg->mode == 0) {
            out->data.mem.pi32[o] = v;
        } else if (cfg->mode == 4) {
            uint32_t low = (uint32_t)v & 0xFFFFu;
            out->data.mem.pi16[o] = (int16_t)(low >= 32768u ? (int32_t)low - 65536 : (int32_t)low);
        } else if (cfg->mode == 1) {
            uint32_t low = (uint32_t)v & 0xFFu;
            out->data.mem.pi8[o] = (int8_t)(low >= 128u ? (int32_t)low - 256 : (int32_t)low);
        } else if (cfg->mode == 2) {
            out->data.mem.pi8[o] = (int8_t)(v != 0);
        } else { /* the number of thresholds <= v (at most reach), from -128 */
            uint32_t lo = 0u, hi = 255u;
            while (lo < hi) {
                uint32_t mid = (lo + hi) / 2u;
                if (thr->data.mem.pi32[mid] <= v) {
                    lo = mid + 1u;
                } else {
                    hi = mid;
                }
            }
            lo = lo < (uint32_t)cfg->reach ? lo : (uint32_t)cfg->reach;
            out->data.mem.pi8[o] = (int8_t)((int32_t)lo - 128);
        }
    }
    return MLI_STATUS_OK;
}
""",
    run=_run_cast,
    cfg=("in_bytes", "mode", "reach"),
)


def _run_gather(layer, model, xs, arith) -> np.ndarray:
    params, idx = xs
    c = layer.cfg
    params, idx = np.asarray(params), np.asarray(idx)
    n = idx.shape[0]
    if params.ndim == len(model.tensor(layer.inputs[0]).shape):
        params = np.broadcast_to(params[None], (n,) + params.shape)
    nb = c["batch"]
    p = params.reshape(n * nb, c["outer"], c["rows"], c["inner"])
    k = idx.reshape(n * nb, -1).astype(np.int64)
    bad = (k < 0) | (k >= c["rows"])
    safe = np.where(bad, 0, k)
    out = np.stack([p[s][:, safe[s], :] for s in range(n * nb)])
    out = np.where(bad[:, None, :, None], np.zeros((), p.dtype), out)
    return out.reshape((n,) + tuple(model.tensor(layer.outputs[0]).shape))


GATHER_ROWS = FallbackKernel(
    name="gather_rows",
    doc="GATHER (any batch_dims) / EMBEDDING_LOOKUP by run-time int32 indices: rows copied, an "
    "index out of range gives a row of raw 0",
    c_source="""\
@STORAGE@mli_status @FN@(const mli_tensor *params, const mli_tensor *idx, const @CFG@ *cfg,
                         mli_tensor *out) {
    const int32_t *k = idx->data.mem.pi32;
    uint32_t size = (uint32_t)cfg->inner * (uint32_t)cfg->bytes;
    const uint8_t *src = cfg->bytes == 4 ? (const uint8_t *)params->data.mem.pi32
                                         : (const uint8_t *)params->data.mem.pi8;
    uint8_t *dst = cfg->bytes == 4 ? (uint8_t *)out->data.mem.pi32 : (uint8_t *)out->data.mem.pi8;
    int32_t t, o, j;
    uint32_t b;
    for (t = 0; t < cfg->batch; t++) { /* batch_dims: each batch row has its own indices */
        const int32_t *kt = k + (uint32_t)t * (uint32_t)cfg->count;
        for (o = 0; o < cfg->outer; o++) {
            const uint32_t to = (uint32_t)t * (uint32_t)cfg->outer + (uint32_t)o;
            for (j = 0; j < cfg->count; j++) {
                uint8_t *row = dst + (to * (uint32_t)cfg->count + (uint32_t)j) * size;
                int inside = kt[j] >= 0 && kt[j] < cfg->rows;
                const uint8_t *from =
                    src + (to * (uint32_t)cfg->rows + (uint32_t)(inside ? kt[j] : 0)) * size;
                for (b = 0u; b < size; b++) {
                    row[b] = inside ? from[b] : 0u;
                }
            }
        }
    }
    return MLI_STATUS_OK;
}
""",
    run=_run_gather,
    cfg=("batch", "outer", "rows", "inner", "count", "bytes"),
)

register_kernel(BINARY32)
register_kernel(SELECT32)
register_kernel(CAST32)
register_kernel(GATHER_ROWS)
