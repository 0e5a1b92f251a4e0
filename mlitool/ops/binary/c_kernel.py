"""`binary8`: int8 element-wise ADD, SUB, MUL, MAXIMUM, MINIMUM, DIV and SQUARED_DIFFERENCE with
TFLite's broadcasting; `batch_matmul8`: int8 BATCH_MATMUL.

Shapes are aligned right, as TFLite broadcasts (an operand's missing leading dimensions are 1);
an operand's extent-1 dimension repeats its element, through a zero stride. Strides come from
each tensor's mem_stride, so the operands may be views. The arithmetic is that of
`mlitool.ops.binary.reference` / `mlitool.ops.binary.batch_matmul` on the same config, whose fields the
lowering computes as TFLite's Prepare() does.
"""

from __future__ import annotations

import numpy as np

from mlitool.mli.fallback import FallbackKernel, register_kernel
from mlitool.mli.types import Role
from mlitool.ops.binary import batch_matmul as BMM
from mlitool.ops.binary import reference as BIN

_BINARY = """\
/* RoundingDivideByPOT for DIV's exponents 0..63: from 32 on, what LiteRT's compiled kernel does
 * (mask all ones, shift by e mod 32). */
static int32_t @FN@_rdbpot64(int32_t x, int32_t e) {
    return e >= 32 ? (x >> (e & 31)) + (x >= 0 ? 1 : 0) : @P@_rdbpot(x, e);
}

/* GetReciprocal(y, 31) for y > 0: gemmlowp's Newton-Raphson 1 / (1 + a), a in [0, 1) */
static int32_t @FN@_recip(int32_t y, int32_t *shift) {
    int32_t h = @P@_clz((uint32_t)y), half, x, i;
    int32_t a = (int32_t)(((uint32_t)y << h) - 0x80000000u);
    half = (int32_t)(((int64_t)a + INT32_MAX + 1) / 2);
    x = 1515870810 + @P@_srdhm(half, -1010580540);
    for (i = 0; i < 3; i++) {
        int32_t one_minus = (1 << 29) - @P@_srdhm(half, x);
        x += @P@_satpot(@P@_srdhm(x, one_minus), 2);
    }
    *shift = 31 - h;
    return @P@_satpot(x, 1);
}

/* TFLite's int8 DIV of offset values x / y (y == 0, which TFLite refuses: saturate) */
static int32_t @FN@_div(const @CFG@ *c, int32_t x, int32_t y) {
    int32_t inv, rs, h;
    if (y == 0) {
        return x >= 0 ? c->act_max : c->act_min;
    }
    if (y < 0) {
        x = -x;
        y = -y;
    }
    inv = @FN@_recip(y, &rs);
    h = @P@_clz((uint32_t)(x >= 0 ? x : ~x)) - 1;
    x = @P@_srdhm((int32_t)((int64_t)x * ((int64_t)1 << h)), inv);
    return @FN@_rdbpot64(@P@_srdhm(x, c->out_mult), h + rs - c->out_shift) + c->out_zp;
}

static int32_t @FN@_op(const @CFG@ *c, int32_t a, int32_t b) {
    int32_t x = a - c->a_zp, y = b - c->b_zp, q;
    if (c->op == 5) {
        q = @FN@_div(c, x, y);
    } else {
        if (c->left_shift > 0) { /* both operands to one scale (ADD, SUB, SQUARED_DIFFERENCE) */
            x = @P@_mbqm(x * (1 << c->left_shift), c->a_mult, c->a_shift);
            y = @P@_mbqm(y * (1 << c->left_shift), c->b_mult, c->b_shift);
        }
        switch (c->op) {
        case 0: q = x + y; break;
        case 1: q = x - y; break;
        case 2: q = x * y; break;
        case 3: q = x > y ? x : y; break;
        case 4: q = x < y ? x : y; break;
        default: q = (x - y) * (x - y); break;
        }
        q = @P@_mbqm(q, c->out_mult, c->out_shift) + c->out_zp;
    }
    return q < c->act_min ? c->act_min : (q > c->act_max ? c->act_max : q);
}

/* Element strides of `in` along each dimension of `out` (shapes aligned right): 0 where `in`
 * has extent 1, so that its element repeats. */
static void @FN@_strides(const mli_tensor *in, const mli_tensor *out, uint32_t *s) {
    uint32_t d, lead = out->rank - in->rank;
    for (d = 0u; d < out->rank; d++) {
        s[d] = (d < lead || in->shape[d - lead] == 1u) ? 0u : (uint32_t)in->mem_stride[d - lead];
    }
}

@STORAGE@mli_status @FN@(const mli_tensor *in1, const mli_tensor *in2, const @CFG@ *cfg,
                          mli_tensor *out) {
    const int8_t *a = @P@_in8(in1);
    const int8_t *b = @P@_in8(in2);
    int8_t *y = out->data.mem.pi8;
    uint32_t sa[MLI_MAX_RANK], sb[MLI_MAX_RANK];
    uint32_t i, d, n = @P@_count(out);
    @FN@_strides(in1, out, sa);
    @FN@_strides(in2, out, sb);
    for (i = 0u; i < n; i++) {
        uint32_t r = i, oa = 0u, ob = 0u;
        for (d = out->rank; d > 0u; d--) {
            uint32_t k = r % out->shape[d - 1u];
            r /= out->shape[d - 1u];
            oa += k * sa[d - 1u];
            ob += k * sb[d - 1u];
        }
        y[@P@_offset(out, i)] = (int8_t)@FN@_op(cfg, a[oa], b[ob]);
    }
    return MLI_STATUS_OK;
}
"""


def operands(layer, model, xs, least: int = 0) -> list[np.ndarray]:
    """The layer's inputs with a sample axis (a constant's: one sample) and their shapes aligned
    right to one rank (that of the output, or of an input, or `least`, the largest)."""
    names = [*layer.inputs, layer.outputs[0]]
    rank = max([least] + [len(model.tensor(n).shape) for n in names])
    out = []
    for name, x in zip(layer.inputs, xs):
        t = model.tensor(name)
        x = np.asarray(x)
        x = x[None] if t.role == Role.PARAM else x
        out.append(x.reshape((x.shape[0],) + (1,) * (rank - len(t.shape)) + tuple(t.shape)))
    return out


def _run_binary(layer, model, xs, arith) -> np.ndarray:
    return BIN.apply(layer.cfg, *operands(layer, model, xs))


BINARY8 = FallbackKernel(
    name="binary8",
    doc="int8 ADD/SUB/MUL/MAXIMUM/MINIMUM/DIV/SQUARED_DIFFERENCE with broadcasting, as TFLite",
    c_source=_BINARY,
    run=_run_binary,
    cfg=BIN.CFG,
)

_BATCH_MATMUL = """\
/* Element strides of `t` along `rank` dimensions (shape aligned right); 0 where its extent is 1.
 * Also its extents. */
static void @FN@_dims(const mli_tensor *t, uint32_t rank, uint32_t *shape, uint32_t *s) {
    uint32_t d, lead = rank - t->rank;
    for (d = 0u; d < rank; d++) {
        shape[d] = d < lead ? 1u : t->shape[d - lead];
        s[d] = shape[d] == 1u ? 0u : (uint32_t)t->mem_stride[d - lead];
    }
}

@STORAGE@mli_status @FN@(const mli_tensor *lhs, const mli_tensor *rhs, const @CFG@ *cfg,
                          mli_tensor *out) {
    const int8_t *x = lhs->data.mem.pi8;
    const int8_t *w = rhs->data.mem.pi8;
    int8_t *y = out->data.mem.pi8;
    uint32_t ls[MLI_MAX_RANK + 1], rs[MLI_MAX_RANK + 1], os[MLI_MAX_RANK + 1];
    uint32_t lsh[MLI_MAX_RANK + 1], rsh[MLI_MAX_RANK + 1], osh[MLI_MAX_RANK + 1];
    uint32_t rank = out->rank, d, i, k, n = @P@_count(out), depth, lm, lk, rk, rn;
    if (lhs->rank > rank) {
        rank = lhs->rank;
    }
    if (rhs->rank > rank) {
        rank = rhs->rank;
    }
    if (rank < 2u) {
        rank = 2u;
    }
    @FN@_dims(lhs, rank, lsh, ls);
    @FN@_dims(rhs, rank, rsh, rs);
    @FN@_dims(out, rank, osh, os);
    /* strides along M, K of lhs and K, N of rhs (adj: the last two dimensions swapped) */
    lm = cfg->adj_x ? ls[rank - 1u] : ls[rank - 2u];
    lk = cfg->adj_x ? ls[rank - 2u] : ls[rank - 1u];
    rk = cfg->adj_y ? rs[rank - 1u] : rs[rank - 2u];
    rn = cfg->adj_y ? rs[rank - 2u] : rs[rank - 1u];
    depth = cfg->adj_x ? lsh[rank - 2u] : lsh[rank - 1u];
    for (i = 0u; i < n; i++) {
        uint32_t r = i / (osh[rank - 1u] * osh[rank - 2u]), xo = 0u, wo = 0u;
        uint32_t m = (i / osh[rank - 1u]) % osh[rank - 2u], col = i % osh[rank - 1u];
        int32_t acc = 0;
        for (d = rank - 2u; d > 0u; d--) { /* batch dimensions, broadcast */
            uint32_t b = r % osh[d - 1u];
            r /= osh[d - 1u];
            xo += b * ls[d - 1u];
            wo += b * rs[d - 1u];
        }
        xo += m * lm;
        wo += col * rn;
        for (k = 0u; k < depth; k++) {
            acc += ((int32_t)x[xo + k * lk] - cfg->lhs_zp) * ((int32_t)w[wo + k * rk] - cfg->rhs_zp);
        }
        acc = @P@_mbqm(acc, cfg->out_mult, cfg->out_shift) + cfg->out_zp;
        y[@P@_offset(out, i)] = (int8_t)(acc < -128 ? -128 : (acc > 127 ? 127 : acc));
    }
    return MLI_STATUS_OK;
}
"""


def _run_batch_matmul(layer, model, xs, arith) -> np.ndarray:
    lhs, rhs = operands(layer, model, xs, least=2)
    out_shape = model.tensor(layer.outputs[0]).shape
    y = BMM.apply(layer.cfg, lhs, rhs)
    return y.reshape((y.shape[0],) + tuple(out_shape))


BATCH_MATMUL8 = FallbackKernel(
    name="batch_matmul8",
    doc="int8 BATCH_MATMUL (adj_x / adj_y, broadcast batch dimensions), as TFLite",
    c_source=_BATCH_MATMUL,
    run=_run_batch_matmul,
    cfg=BMM.CFG,
)


def _int16_text(text: str) -> str:
    """`batch_matmul8`'s C for int16 operands: int64 sums, the 64-bit MultiplyByQuantizedMultiplier
    (TFLite's BatchMatMul<int16_t, int64_t>), int16 saturation."""
    swaps = (
        ("const int8_t *x = lhs->data.mem.pi8;", "const int16_t *x = lhs->data.mem.pi16;"),
        ("const int8_t *w = rhs->data.mem.pi8;", "const int16_t *w = rhs->data.mem.pi16;"),
        ("int8_t *y = out->data.mem.pi8;", "int16_t *y = out->data.mem.pi16;"),
        ("int32_t acc = 0;", "int64_t acc = 0;"),
        (
            "acc += ((int32_t)x[xo + k * lk] - cfg->lhs_zp) * ((int32_t)w[wo + k * rk] - cfg->rhs_zp);",
            "acc += ((int64_t)x[xo + k * lk] - cfg->lhs_zp) * ((int64_t)w[wo + k * rk] - cfg->rhs_zp);",
        ),
        (
            "acc = @P@_mbqm(acc, cfg->out_mult, cfg->out_shift) + cfg->out_zp;",
            "acc = @FN@_mbqm64(acc, cfg->out_mult, cfg->out_shift) + cfg->out_zp;",
        ),
        (
            "y[@P@_offset(out, i)] = (int8_t)(acc < -128 ? -128 : (acc > 127 ? 127 : acc));",
            "y[@P@_offset(out, i)] = (int16_t)(acc < -32768 ? -32768 : (acc > 32767 ? 32767 : acc));",
        ),
    )
    for old, new in swaps:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return _MBQM64 + text


# TFLite's MultiplyByQuantizedMultiplier(int64_t x, ...): the multiplier rounded to 16 bits, one
# rounding right shift by 15 - shift (an arithmetic shift of negative values, as in C++).
_MBQM64 = """\
static int64_t @FN@_mbqm64(int64_t x, int32_t m, int32_t shift) {
    int64_t reduced = m < 0x7FFF0000 ? ((int64_t)m + (1 << 15)) >> 16 : 0x7FFF;
    int32_t total = 15 - shift;
    return (x * reduced + ((int64_t)1 << (total - 1))) >> total;
}

"""


def _run_batch_matmul16(layer, model, xs, arith) -> np.ndarray:
    lhs, rhs = operands(layer, model, xs, least=2)
    out_shape = model.tensor(layer.outputs[0]).shape
    y = BMM.apply16(layer.cfg, lhs, rhs)
    return y.reshape((y.shape[0],) + tuple(out_shape))


BATCH_MATMUL16 = FallbackKernel(
    name="batch_matmul16",
    doc="int16 BATCH_MATMUL (16x8 models; FX16 operands), as TFLite's int64 reference kernel",
    c_source=_int16_text(_BATCH_MATMUL),
    run=_run_batch_matmul16,
    cfg=BMM.CFG,
)
# TFLite Micro's int16 SQUARED_DIFFERENCE, broadcast as binary8 (operand strides of 0).
_SQUARED_DIFFERENCE16 = """\
static void @FN@_strides(const mli_tensor *in, const mli_tensor *out, uint32_t *s) {
    uint32_t d, lead = out->rank - in->rank;
    for (d = 0u; d < out->rank; d++) {
        s[d] = (d < lead || in->shape[d - lead] == 1u) ? 0u : (uint32_t)in->mem_stride[d - lead];
    }
}

@STORAGE@mli_status @FN@(const mli_tensor *in1, const mli_tensor *in2, const @CFG@ *cfg,
                          mli_tensor *out) {
    const int16_t *a = in1->data.mem.pi16;
    const int16_t *b = in2->data.mem.pi16;
    int16_t *y = out->data.mem.pi16;
    uint32_t sa[MLI_MAX_RANK], sb[MLI_MAX_RANK];
    uint32_t i, d, n = @P@_count(out);
    @FN@_strides(in1, out, sa);
    @FN@_strides(in2, out, sb);
    for (i = 0u; i < n; i++) {
        uint32_t r = i, oa = 0u, ob = 0u;
        int32_t u, v, q;
        for (d = out->rank; d > 0u; d--) {
            uint32_t k = r % out->shape[d - 1u];
            r /= out->shape[d - 1u];
            oa += k * sa[d - 1u];
            ob += k * sb[d - 1u];
        }
        u = @P@_mbqm(a[oa], cfg->a_mult, cfg->a_shift);
        v = @P@_mbqm(b[ob], cfg->b_mult, cfg->b_shift);
        q = @P@_mbqm((u - v) * (u - v), cfg->out_mult, cfg->out_shift);
        y[@P@_offset(out, i)] = (int16_t)(q < cfg->act_min ? cfg->act_min
                                                           : (q > cfg->act_max ? cfg->act_max : q));
    }
    return MLI_STATUS_OK;
}
"""


def _run_squared_difference16(layer, model, xs, arith) -> np.ndarray:
    return BIN.apply_squared_difference16(layer.cfg, *operands(layer, model, xs))


SQUARED_DIFFERENCE16 = FallbackKernel(
    name="squared_difference16",
    doc="int16 SQUARED_DIFFERENCE with broadcasting, as TFLite Micro's kernel (16x8 models)",
    c_source=_SQUARED_DIFFERENCE16,
    run=_run_squared_difference16,
    cfg=BIN.CFG,
)
register_kernel(BINARY8)
register_kernel(SQUARED_DIFFERENCE16)
register_kernel(BATCH_MATMUL8)
register_kernel(BATCH_MATMUL16)
