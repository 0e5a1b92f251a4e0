"""`compare8` (int8 comparisons, bool output) and `select8` (SELECT / SELECT_V2 on int8), with
right-aligned broadcasting of every operand against the output.

A bool tensor is one byte, 0 or 1: in MLI an SA8 tensor of scale 1 and zero point 0. compare8
computes TFLite's reference arithmetic from the config lowering derives from the operands'
parameters (`mlitool.ops.compare.reference.scaling`): ((x + offset) << 8), a rounding doubling high
multiply by the multiplier, a rounding right shift by -shift; then the comparison `op`.
"""

from __future__ import annotations

import numpy as np

from mlitool.mli.fallback import FallbackKernel, register_kernel
from mlitool.ops.common.broadcast_c import BROADCAST_AT, batched
from mlitool.ops.compare.reference import CODES, scaled


def _run_compare(layer, model, xs, arith) -> np.ndarray:
    rank = len(model.tensor(layer.outputs[0]).shape)
    a, b = (batched(model, n, x, rank) for n, x in zip(layer.inputs, xs))
    c = layer.cfg
    u = scaled(a, c["offset1"], c["mult1"], c["shift1"])
    v = scaled(b, c["offset2"], c["mult2"], c["shift2"])
    return CODES[c["op"]](u, v).astype(np.int8)


COMPARE8 = FallbackKernel(
    name="compare8",
    doc="int8 comparison as TFLite computes it (operands rescaled to a common footing), output 0/1",
    c_source=BROADCAST_AT
    + """\
/* TFLite's MultiplyByQuantizedMultiplierSmallerThanOneExp of (x + offset) << 8: a rounding
 * doubling high multiply, then a rounding (half away from zero) right shift by -shift. */
static int32_t @FN@_scaled(int32_t x, int32_t offset, int32_t mult, int32_t shift) {
    int64_t p = (int64_t)((x + offset) * 256) * mult;
    int64_t high = (p + (p >= 0 ? ((int64_t)1 << 30) : (1 - ((int64_t)1 << 30)))) /
                   ((int64_t)1 << 31);
    int64_t mask = ((int64_t)1 << -shift) - 1;
    int64_t threshold = (mask >> 1) + (high < 0 ? 1 : 0);
    return (int32_t)((high >> -shift) + ((high & mask) > threshold ? 1 : 0));
}

@STORAGE@mli_status @FN@(const mli_tensor *in1, const mli_tensor *in2, const @CFG@ *cfg,
                         mli_tensor *out) {
    const int8_t *a = @P@_in8(in1);
    const int8_t *b = @P@_in8(in2);
    int8_t *y = out->data.mem.pi8;
    uint32_t i, n = @P@_count(out);
    for (i = 0u; i < n; i++) {
        int32_t u = @FN@_scaled(a[@FN@_at(in1, out, i)], cfg->offset1, cfg->mult1, cfg->shift1);
        int32_t v = @FN@_scaled(b[@FN@_at(in2, out, i)], cfg->offset2, cfg->mult2, cfg->shift2);
        int r;
        switch (cfg->op) { /* the order of mlitool.execute.compare.CODES */
        case 0: r = u == v; break;
        case 1: r = u != v; break;
        case 2: r = u > v; break;
        case 3: r = u >= v; break;
        case 4: r = u < v; break;
        default: r = u <= v; break;
        }
        y[@P@_offset(out, i)] = (int8_t)r;
    }
    return MLI_STATUS_OK;
}
""",
    run=_run_compare,
    cfg=("op", "offset1", "mult1", "shift1", "offset2", "mult2", "shift2"),
)


def _run_select(layer, model, xs, arith) -> np.ndarray:
    rank = len(model.tensor(layer.outputs[0]).shape)
    cond, x, y = (batched(model, n, v, rank) for n, v in zip(layer.inputs, xs))
    return np.where(cond != 0, x, y).astype(np.int8)


SELECT8 = FallbackKernel(
    name="select8",
    doc="int8 SELECT: x where the condition byte is not 0, else y (values copied unchanged)",
    c_source=BROADCAST_AT
    + """\
@STORAGE@mli_status @FN@(const mli_tensor *cond, const mli_tensor *x, const mli_tensor *y,
                         mli_tensor *out) {
    const int8_t *c = @P@_in8(cond);
    const int8_t *xv = @P@_in8(x);
    const int8_t *yv = @P@_in8(y);
    int8_t *o = out->data.mem.pi8;
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
register_kernel(COMPARE8)
register_kernel(SELECT8)


# --- int16 (16x8 models): FX16 operands -----------------------------------------------------

# A tensor's int16 elements (a rank-0 constant keeps its value in the container itself).
_IN16 = """\
static const int16_t *@FN@_in16(const mli_tensor *t) {
    return (t->rank == 0u && t->data.capacity == 0u) ? &t->data.mem.i16 : t->data.mem.pi16;
}
"""


def _run_compare16(layer, model, xs, arith) -> np.ndarray:
    rank = len(model.tensor(layer.outputs[0]).shape)
    a, b = (batched(model, n, x, rank) for n, x in zip(layer.inputs, xs))
    c = layer.cfg
    u = np.asarray(a, np.int64) * (1 << c["shift1"])
    v = np.asarray(b, np.int64) * (1 << c["shift2"])
    return CODES[c["op"]](u, v).astype(np.int8)


COMPARE16 = FallbackKernel(
    name="compare16",
    doc="int16 (FX16) comparison: both operands shifted left onto common frac bits, output 0/1",
    c_source=BROADCAST_AT
    + _IN16
    + """\
@STORAGE@mli_status @FN@(const mli_tensor *in1, const mli_tensor *in2, const @CFG@ *cfg,
                         mli_tensor *out) {
    const int16_t *a = @FN@_in16(in1);
    const int16_t *b = @FN@_in16(in2);
    int8_t *y = out->data.mem.pi8;
    uint32_t i, n = @P@_count(out);
    for (i = 0u; i < n; i++) {
        int64_t u = (int64_t)a[@FN@_at(in1, out, i)] * ((int64_t)1 << cfg->shift1);
        int64_t v = (int64_t)b[@FN@_at(in2, out, i)] * ((int64_t)1 << cfg->shift2);
        int r;
        switch (cfg->op) { /* the order of mlitool.ops.compare.reference.CODES */
        case 0: r = u == v; break;
        case 1: r = u != v; break;
        case 2: r = u > v; break;
        case 3: r = u >= v; break;
        case 4: r = u < v; break;
        default: r = u <= v; break;
        }
        y[@P@_offset(out, i)] = (int8_t)r;
    }
    return MLI_STATUS_OK;
}
""",
    run=_run_compare16,
    cfg=("op", "shift1", "shift2"),
)


def _run_select16(layer, model, xs, arith) -> np.ndarray:
    rank = len(model.tensor(layer.outputs[0]).shape)
    cond, x, y = (batched(model, n, v, rank) for n, v in zip(layer.inputs, xs))
    return np.where(cond != 0, x, y).astype(np.int16)


SELECT16 = FallbackKernel(
    name="select16",
    doc="int16 (FX16) SELECT: x where the condition byte is not 0, else y (values copied)",
    c_source=BROADCAST_AT
    + _IN16
    + """\
@STORAGE@mli_status @FN@(const mli_tensor *cond, const mli_tensor *x, const mli_tensor *y,
                         mli_tensor *out) {
    const int8_t *c = @P@_in8(cond);
    const int16_t *xv = @FN@_in16(x);
    const int16_t *yv = @FN@_in16(y);
    int16_t *o = out->data.mem.pi16;
    uint32_t i, n = @P@_count(out);
    for (i = 0u; i < n; i++) {
        o[@P@_offset(out, i)] = c[@FN@_at(cond, out, i)] ? xv[@FN@_at(x, out, i)]
                                                         : yv[@FN@_at(y, out, i)];
    }
    return MLI_STATUS_OK;
}
""",
    run=_run_select16,
)
register_kernel(COMPARE16)
register_kernel(SELECT16)
