"""`float_region<N>`: an int8 model's float region (N int8 inputs) as its program of float32
operations (`program.py`, which documents the instructions and is the numpy twin), and
`float_region_out`: one region output, TFLite's QUANTIZE of its float32 values;
`float_region_carry`: a float32 output a later region reads (a transformer's residual stream
between blocks), an FP32 tensor.

The region writes its work area, an SA32 tensor of float32 bit patterns (one layer output, so
the memory plan places it and the runtime check compares it); each output layer reads it. Every
operation is one IEEE-754 float32 operation as TFLite's float32 reference kernels do it:
products and sums go through a volatile float, so no compiler contracts them into a fused
multiply-add (one rounding instead of two); LOGISTIC, TANH, EXP and SOFTMAX call the C
library's expf and tanhf, as TFLite does (their last bit is the C library's: the same on the host as LiteRT's,
another library's may differ). On a core without an FPU each float operation is a call into
the compiler's soft-float library: tens of cycles instead of one or two, and its code size.
"""

from __future__ import annotations

import numpy as np

from mlitool.mli.fallback import FallbackKernel, register_kernel
from mlitool.ops.float_region import program as P

MAX_INPUTS = 4

_HELPERS = """\
#include <math.h>

static float @FN@_f(int32_t bits) {
    union {
        int32_t i;
        float f;
    } u;
    u.i = bits;
    return u.f;
}

static int32_t @FN@_b(float f) {
    union {
        int32_t i;
        float f;
    } u;
    u.f = f;
    return u.i;
}

/* Value at address a + i: the work area (a >= 0) or the constants (a < 0: consts[-a - 1]). */
static float @FN@_ld(const int32_t *arena, const int32_t *consts, int32_t a, int32_t i) {
    return a >= 0 ? @FN@_f(arena[a + i]) : @FN@_f(consts[-a - 1 + i]);
}

static float @FN@_clamp(float r, int32_t lo, int32_t hi) {
    float l = @FN@_f(lo), h = @FN@_f(hi);
    r = r < l ? l : r;
    return r > h ? h : r;
}

/* reference_ops::Logistic on float */
static float @FN@_logistic(float x) {
    volatile float d;
    if (x > 16.619047164916992188f) {
        return 1.0f;
    }
    if (x < -9.0f) {
        return expf(x);
    }
    d = 1.0f + expf(-x);
    return 1.0f / d;
}

/* ADD, SUB, MUL, DIV, SQUARED_DIFFERENCE ((a - b) rounded, then squared): one rounding each */
static float @FN@_binary(int32_t kind, float a, float b) {
    volatile float r, d;
    if (kind == 0) {
        r = a + b;
    } else if (kind == 1) {
        r = a - b;
    } else if (kind == 2) {
        r = a * b;
    } else if (kind == 3) {
        r = a / b;
    } else {
        d = a - b;
        r = d * d;
    }
    return r;
}

/* LOGISTIC, TANH, RSQRT (1.0f / sqrtf), SQRT, EXP, RELU, RELU6, RELU_N1_TO_1 */
static float @FN@_unary(int32_t kind, float v) {
    volatile float r;
    switch (kind) {
    case 0:
        return @FN@_logistic(v);
    case 1:
        return tanhf(v);
    case 2:
        r = sqrtf(v);
        r = 1.0f / r;
        return r;
    case 3:
        return sqrtf(v);
    case 4:
        return expf(v);
    case 5:
        return v < 0.0f ? 0.0f : v;
    case 6:
        return v < 0.0f ? 0.0f : (v > 6.0f ? 6.0f : v);
    default:
        return v < -1.0f ? -1.0f : (v > 1.0f ? 1.0f : v);
    }
}

static void @FN@_fc(int32_t *arena, const int32_t *consts, const int32_t *w) {
    int32_t r, o, d, rows = w[5], depth = w[6], outs = w[7];
    for (r = 0; r < rows; r++) {
        for (o = 0; o < outs; o++) {
            volatile float p, total = 0.0f;
            float bias = w[4] == INT32_MIN ? 0.0f : @FN@_ld(arena, consts, w[4], o);
            for (d = 0; d < depth; d++) {
                p = @FN@_ld(arena, consts, w[2], r * depth + d) *
                    @FN@_ld(arena, consts, w[3], o * depth + d);
                total = total + p;
            }
            p = total + bias;
            arena[w[1] + r * outs + o] = @FN@_b(@FN@_clamp(p, w[8], w[9]));
        }
    }
}

/* 4-d index space dims[0..3]: the element offset of flat index i through strides s[0..3] */
static int32_t @FN@_at(const int32_t *dims, const int32_t *s, int32_t i) {
    int32_t k, off = 0;
    for (k = 3; k >= 0; k--) {
        off += (i % dims[k]) * s[k];
        i /= dims[k];
    }
    return off;
}

static void @FN@_move(int32_t *arena, const int32_t *consts, const int32_t *w) {
    int32_t i, n = w[3] * w[4] * w[5] * w[6];
    for (i = 0; i < n; i++) {
        float v = @FN@_ld(arena, consts, w[2], @FN@_at(w + 3, w + 7, i));
        arena[w[1] + @FN@_at(w + 3, w + 11, i)] = @FN@_b(v);
    }
}

static void @FN@_bin(int32_t *arena, const int32_t *consts, const int32_t *w) {
    int32_t i, n = w[5] * w[6] * w[7] * w[8];
    for (i = 0; i < n; i++) {
        float a = @FN@_ld(arena, consts, w[3], @FN@_at(w + 5, w + 9, i));
        float b = @FN@_ld(arena, consts, w[4], @FN@_at(w + 5, w + 13, i));
        float r = @FN@_binary(w[1], a, b);
        arena[w[2] + i] = @FN@_b(@FN@_clamp(r, w[17], w[18]));
    }
}

/* COPY dst src n, and FLAT kind dst a b n sa sb lo hi: operands read in order (step 1) or one
 * value (step 0) */
static void @FN@_copy(int32_t *arena, const int32_t *consts, const int32_t *w) {
    int32_t i;
    for (i = 0; i < w[3]; i++) {
        arena[w[1] + i] = @FN@_b(@FN@_ld(arena, consts, w[2], i));
    }
}

static void @FN@_flat(int32_t *arena, const int32_t *consts, const int32_t *w) {
    int32_t i;
    for (i = 0; i < w[5]; i++) {
        float a = @FN@_ld(arena, consts, w[3], i * w[6]);
        float b = @FN@_ld(arena, consts, w[4], i * w[7]);
        float r = @FN@_binary(w[1], a, b);
        arena[w[2] + i] = @FN@_b(@FN@_clamp(r, w[8], w[9]));
    }
}

static void @FN@_un(int32_t *arena, const int32_t *consts, const int32_t *w) {
    int32_t i;
    for (i = 0; i < w[4]; i++) {
        float v = @FN@_ld(arena, consts, w[3], i);
        arena[w[2] + i] = @FN@_b(@FN@_unary(w[1], v));
    }
}

/* MEAN: per output, the sum of its reduced elements in the input's order, then / count */
static void @FN@_mean(int32_t *arena, const int32_t *consts, const int32_t *w) {
    int32_t i, t, n = w[3] * w[4] * w[5] * w[6], terms = w[11] * w[12] * w[13] * w[14];
    for (i = 0; i < n; i++) {
        volatile float total = 0.0f;
        int32_t at = @FN@_at(w + 3, w + 7, i);
        for (t = 0; t < terms; t++) {
            total = total + @FN@_ld(arena, consts, w[2], at + @FN@_at(w + 11, w + 15, t));
        }
        total = total / (float)terms;
        arena[w[1] + i] = @FN@_b(total);
    }
}

/* BATCH_MATMUL: per batch, row and column, the products summed from 0 over the depth */
static void @FN@_mm(int32_t *arena, const int32_t *consts, const int32_t *w) {
    int32_t bi, i, j, k, rows = w[5], depth = w[6], cols = w[7];
    int32_t *y = arena + w[1];
    for (bi = 0; bi < w[4]; bi++) {
        for (i = 0; i < rows; i++) {
            for (j = 0; j < cols; j++) {
                volatile float p, total = 0.0f;
                for (k = 0; k < depth; k++) {
                    p = @FN@_ld(arena, consts, w[2], bi * w[8] + i * w[9] + k * w[10]) *
                        @FN@_ld(arena, consts, w[3], bi * w[11] + k * w[12] + j * w[13]);
                    total = total + p;
                }
                y[(bi * rows + i) * cols + j] = @FN@_b(total);
            }
        }
    }
}

/* SOFTMAX per row: max, expf((x - max) * beta) stored and summed from 0, each / the sum */
static void @FN@_smax(int32_t *arena, const int32_t *consts, const int32_t *w) {
    int32_t r, c, depth = w[4];
    float beta = @FN@_f(w[5]);
    for (r = 0; r < w[3]; r++) {
        volatile float d, sum = 0.0f;
        float top = @FN@_ld(arena, consts, w[2], r * depth);
        for (c = 1; c < depth; c++) {
            float v = @FN@_ld(arena, consts, w[2], r * depth + c);
            top = top < v ? v : top;
        }
        for (c = 0; c < depth; c++) {
            d = @FN@_ld(arena, consts, w[2], r * depth + c) - top;
            d = d * beta;
            d = expf(d);
            arena[w[1] + r * depth + c] = @FN@_b(d);
            sum = sum + d;
        }
        for (c = 0; c < depth; c++) {
            d = @FN@_f(arena[w[1] + r * depth + c]) / sum;
            arena[w[1] + r * depth + c] = @FN@_b(d);
        }
    }
}
"""

_RUN = """
@STORAGE@mli_status @FN@(@INS@, const mli_tensor *code, const mli_tensor *consts,
                         const @CFG@ *cfg, mli_tensor *work) {
    static const int32_t length[@NOPS@] = {@LENGTH@};
    const mli_tensor *ins[@N@] = {@NAMES@};
    const int32_t *c = consts->data.mem.pi32;
    const int32_t *w = code->data.mem.pi32;
    int32_t *arena = work->data.mem.pi32;
    int32_t i, k;
    for (i = 0; i < cfg->arena; i++) {
        arena[i] = 0;
    }
    for (k = 0; k < cfg->count; k++, w += length[w[0]]) {
        if (w[0] == 0) { /* DEQUANTIZE: float(scale * (x - zp)), one rounding */
            const int8_t *x = @P@_in8(ins[w[2]]);
            volatile float v;
            for (i = 0; i < w[3]; i++) {
                v = @FN@_f(w[4]) * (float)(x[@P@_offset(ins[w[2]], (uint32_t)i)] - w[5]);
                arena[w[1] + i] = @FN@_b(v);
            }
        } else if (w[0] == 1) {
            @FN@_fc(arena, c, w);
        } else if (w[0] == 2) {
            @FN@_move(arena, c, w);
        } else if (w[0] == 3) {
            @FN@_bin(arena, c, w);
        } else if (w[0] == 4) {
            @FN@_un(arena, c, w);
        } else if (w[0] == 5) {
            @FN@_copy(arena, c, w);
        } else if (w[0] == 6) {
            @FN@_flat(arena, c, w);
        } else if (w[0] == 7) {
            @FN@_mean(arena, c, w);
        } else if (w[0] == 8) {
            @FN@_mm(arena, c, w);
        } else if (w[0] == 9) {
            @FN@_smax(arena, c, w);
        } else { /* LOAD: an FP32 tensor an earlier region carries */
            const mli_tensor *x = ins[w[2]];
            for (i = 0; i < w[3]; i++) {
                arena[w[1] + i] = @FN@_b(x->data.mem.pf32[@P@_offset(x, (uint32_t)i)]);
            }
        }
    }
    return MLI_STATUS_OK;
}
"""

_OUT = """
/* QUANTIZE's reference rounding: roundf(v) + zp clamped to int8; |v| capped at 2^24 first */
static int32_t @FN@_round(float v, int32_t zp) {
    float t, f;
    int32_t r;
    v = v > 16777216.0f ? 16777216.0f : (v < -16777216.0f ? -16777216.0f : v);
    t = v < 0.0f ? -v : v;
    f = (float)(int32_t)t;
    r = (int32_t)f + (t - f >= 0.5f ? 1 : 0);
    r = (v < 0.0f ? -r : r) + zp;
    return r < -128 ? -128 : (r > 127 ? 127 : r);
}

static float @FN@_f(int32_t bits) {
    union {
        int32_t i;
        float f;
    } u;
    u.i = bits;
    return u.f;
}

@STORAGE@mli_status @FN@(const mli_tensor *work, const @CFG@ *cfg, mli_tensor *out) {
    const int32_t *arena = work->data.mem.pi32 + cfg->addr;
    int8_t *y = out->data.mem.pi8;
    const float scale = @FN@_f(cfg->fscale);
    uint32_t i, n = @P@_count(out);
    for (i = 0u; i < n; i++) {
        y[@P@_offset(out, i)] = (int8_t)@FN@_round(@FN@_f(arena[i]) / scale, cfg->out_zp);
    }
    return MLI_STATUS_OK;
}
"""


_CARRY = """
static float @FN@_f(int32_t bits) {
    union {
        int32_t i;
        float f;
    } u;
    u.i = bits;
    return u.f;
}

@STORAGE@mli_status @FN@(const mli_tensor *work, const @CFG@ *cfg, mli_tensor *out) {
    const int32_t *arena = work->data.mem.pi32 + cfg->addr;
    uint32_t i, n = @P@_count(out);
    for (i = 0u; i < n; i++) {
        out->data.mem.pf32[@P@_offset(out, i)] = @FN@_f(arena[i]);
    }
    return MLI_STATUS_OK;
}
"""


def _source(n: int) -> str:
    ins = ", ".join(f"const mli_tensor *in{k}" for k in range(n))
    names = ", ".join(f"in{k}" for k in range(n))
    run = _RUN.replace("@INS@", ins).replace("@NAMES@", names).replace("@N@", str(n))
    run = run.replace("@NOPS@", str(len(P.LENGTH)))
    return _HELPERS + run.replace("@LENGTH@", ", ".join(map(str, P.LENGTH)))


def _run(layer, model, xs, arith_mode) -> np.ndarray:
    n = len(layer.inputs) - 2
    code = model.tensor(layer.inputs[n]).data.astype(np.int32)
    consts = model.tensor(layer.inputs[n + 1]).data.astype(np.int32).view(np.float32)
    prog = P.Program(code, consts, int(layer.cfg["arena"]), (), int(layer.cfg["count"]))
    arena = P.run_program(prog, [np.asarray(x) for x in xs[:n]])
    return arena.view(np.int32)


def _run_out(layer, model, xs, arith_mode) -> np.ndarray:
    cfg = layer.cfg
    arena = np.asarray(xs[0]).view(np.float32)
    out = model.tensor(layer.outputs[0])
    scale = float(np.array([cfg["fscale"]], np.int32).view(np.float32)[0])
    o = P.Output(
        int(cfg["addr"]), int(np.prod(out.shape, dtype=np.int64)), scale, int(cfg["out_zp"])
    )
    y = P.quantize_output(arena.reshape(len(arena), -1), o)
    return y.reshape((len(arena),) + tuple(out.shape))


def _run_carry(layer, model, xs, arith_mode) -> np.ndarray:
    arena = np.asarray(xs[0]).view(np.float32)
    out = model.tensor(layer.outputs[0])
    count, addr = int(np.prod(out.shape, dtype=np.int64)), int(layer.cfg["addr"])
    return arena[:, addr : addr + count].reshape((len(arena),) + tuple(out.shape))


_KERNELS: dict[int, FallbackKernel] = {}


def region_kernel(n: int) -> FallbackKernel:
    return _KERNELS[n]


for _n in range(1, MAX_INPUTS + 1):
    _KERNELS[_n] = register_kernel(
        FallbackKernel(
            name=f"float_region{_n}",
            doc=f"an int8 model's float region of {_n} int8 input(s): float32 as TFLite",
            cfg=("count", "arena"),
            c_source=_source(_n),
            run=_run,
        )
    )

OUTPUT_KERNEL = register_kernel(
    FallbackKernel(
        name="float_region_out",
        doc="one output of a float region: TFLite's QUANTIZE of its float32 values",
        cfg=("addr", "fscale", "out_zp"),
        c_source=_OUT,
        run=_run_out,
    )
)

CARRY_KERNEL = register_kernel(
    FallbackKernel(
        name="float_region_carry",
        doc="a float32 tensor one float region hands to a later one (FP32, unquantized)",
        cfg=("addr",),
        c_source=_CARRY,
        run=_run_carry,
    )
)
