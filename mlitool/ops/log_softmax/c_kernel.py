"""`log_softmax8`: int8 LOG_SOFTMAX over the last dimension, TFLite's integer arithmetic.

cfg: `multiplier` / `shift` scale input differences to Q5.26, `reverse_multiplier` /
`reverse_shift` take a Q5.26 value back to input steps, `diff_min` is the smallest difference
that counts; lowering computes them as TFLite's Prepare() does (`mlitool.ops.log_softmax.reference.
prepare`). Per row: the max; the Q12.19 sum of gemmlowp's exp of every difference; TFLite's
fixed-point log of it; each output is (difference in Q5.26 - log) rounded to Q4 + 127, or -128
at or below the difference that maps to log - 32. Integer arithmetic only; the numpy twin is
tflite mode's own kernel.
"""

from __future__ import annotations

import numpy as np

from mlitool.mli.fallback import FallbackKernel, register_kernel
from mlitool.ops.log_softmax.reference import Params, log_softmax_int8

CFG = ("multiplier", "shift", "reverse_multiplier", "reverse_shift", "diff_min")


def _run(layer, model, xs, arith) -> np.ndarray:
    return log_softmax_int8(xs[0], Params(**{k: layer.cfg[k] for k in CFG}))


# int32 sums that wrap (TFLite's int32 arithmetic), saturate or halve; the other fixed-point
# helpers are the shared ones (`fixedpoint_c`).
_FIXEDPOINT = """\
static int32_t @FN@_add(int32_t a, int32_t b) {
    return @P@_wrap32((int64_t)a + b);
}

static int32_t @FN@_sub(int32_t a, int32_t b) {
    return @P@_wrap32((int64_t)a - b);
}

static int32_t @FN@_sat(int64_t v) {
    return v > INT32_MAX ? INT32_MAX : (v < INT32_MIN ? INT32_MIN : (int32_t)v);
}

/* gemmlowp RoundingHalfSum of a sum s: (s + sign) / 2, truncated */
static int32_t @FN@_halfsum(int64_t s) {
    return (int32_t)((s + (s >= 0 ? 1 : -1)) / 2);
}
"""

_MATH = """\
/* gemmlowp exp_on_negative_values: Q5.26 a <= 0 -> Q0.31 */
static int32_t @FN@_exp(int32_t a) {
    static const int32_t barrel[7] = {1672461947, 1302514674, 790015084, 290630308,
                                      39332535,   720401,     242};
    const int32_t quarter = (int32_t)1 << 24, c = 1895147668;
    int32_t a_mod = @FN@_sub(a & (quarter - 1), quarter), x, x2, x4, poly, result, rem, k;
    /* exp on [-1/4, 0) by its Taylor series at -1/8, in Q0.31 */
    x = @FN@_add(@P@_satpot(a_mod, 5), (int32_t)1 << 28);
    x2 = @P@_srdhm(x, x);
    x4 = @P@_srdhm(x2, x2);
    poly = @FN@_add(@P@_rdbpot(x4, 2), @P@_srdhm(x2, x));
    poly = @P@_rdbpot(@FN@_add(@P@_srdhm(poly, 715827883), x2), 1);
    result = @FN@_add(c, @P@_srdhm(c, @FN@_add(x, poly)));
    /* times exp(-2^k) for every bit k (-2 .. 4) of the rest */
    rem = @FN@_sub(a_mod, a);
    for (k = 0; k < 7; k++) {
        if ((rem >> (24 + k)) & 1) {
            result = @P@_srdhm(result, barrel[k]);
        }
    }
    return a == 0 ? INT32_MAX : result;
}

/* gemmlowp one_over_one_plus_x_for_x_in_0_1: Q0.31 in [0, 1) -> 1 / (1 + a) in Q0.31 */
static int32_t @FN@_recip(int32_t a) {
    int32_t half = @FN@_halfsum((int64_t)a + INT32_MAX), x, k;
    x = @FN@_add(1515870810, @P@_srdhm(half, -1010580540)); /* 48/17 - 32/17 d, Q2.29 */
    for (k = 0; k < 3; k++) { /* Newton-Raphson */
        int32_t one_minus = @FN@_sub((int32_t)1 << 29, @P@_srdhm(half, x));
        x = @FN@_add(x, @P@_satpot(@P@_srdhm(x, one_minus), 2));
    }
    return @P@_satpot(x, 1);
}

/* TFLite's log_x_for_x_greater_than_or_equal_to_1: Q12.19 z > 0 -> log z in Q5.26, through
   a Q6.25 accumulator: log2 from the leading zeros of z and of z / sqrt 2 (the closer kept),
   the rest by a rational approximation. */
static int32_t @FN@_log(int32_t z) {
    const int32_t quarter = (int32_t)1 << 23, sqrt_half = 1518500250, qrt = 1805811301;
    int32_t clz_a = @P@_clz((uint32_t)z), r, r_b, pow2, pow_b, head_b, p, q, sq, num, den;
    r = @P@_satpot(@P@_srdhm(@P@_satpot(z, clz_a - 1), sqrt_half), 1);
    pow2 = @FN@_sat((int64_t)@P@_satpot(12 - clz_a, 25) + quarter);
    head_b = @P@_clz((uint32_t)@P@_srdhm(z, sqrt_half)) - 1;
    r_b = @P@_satpot(z, head_b);
    pow_b = @FN@_sat((int64_t)@P@_satpot(12 - head_b, 25) - quarter);
    r = r_b < r ? r_b : r;
    pow2 = pow_b > pow2 ? pow_b : pow2;
    p = @FN@_halfsum((int64_t)r + qrt);
    q = @FN@_sub(r, qrt);
    q = @FN@_add(q, q);
    sq = @P@_srdhm(q, q);
    num = @FN@_add(@P@_srdhm(q, r), @P@_srdhm(@P@_srdhm(q, sq), 117049297));
    den = @FN@_add(@FN@_add(1057819769, q), @P@_srdhm(127690142, sq));
    den = @FN@_add(@P@_srdhm(p, den), @P@_srdhm(638450708, q));
    num = @P@_srdhm(@P@_rdbpot(num, 6), @FN@_recip(den));
    return @P@_satpot(@FN@_add(@P@_srdhm(pow2, 1488522236), num), 1);
}
"""

_KERNEL = """\
@STORAGE@mli_status @FN@(const mli_tensor *in, const @CFG@ *cfg, mli_tensor *out) {
    const int8_t *x = in->data.mem.pi8;
    int8_t *y = out->data.mem.pi8;
    uint32_t depth = in->shape[in->rank - 1u], n = @P@_count(in), row, c;
    for (row = 0u; row < n; row += depth) {
        int32_t max = -128, sum = 0, log, floor_diff;
        for (c = 0u; c < depth; c++) {
            int32_t v = x[@P@_offset(in, row + c)];
            max = v > max ? v : max;
        }
        for (c = 0u; c < depth; c++) {
            int32_t diff = x[@P@_offset(in, row + c)] - max;
            if (diff >= cfg->diff_min) {
                int32_t q5 = @P@_mbqm(diff, cfg->multiplier, cfg->shift);
                sum = @FN@_add(sum, @P@_rdbpot(@FN@_exp(q5), 12)); /* Q0.31 -> Q12.19 */
            }
        }
        log = @FN@_log(sum);
        /* the difference of the smallest Q5.26 value plus the log: at or below it, -128 */
        floor_diff = @FN@_add(log, INT32_MIN);
        floor_diff = @P@_mbqm(floor_diff, cfg->reverse_multiplier, cfg->reverse_shift);
        floor_diff = floor_diff > cfg->diff_min - 1 ? floor_diff : cfg->diff_min - 1;
        for (c = 0u; c < depth; c++) {
            int32_t diff = x[@P@_offset(in, row + c)] - max, r = -128;
            if (diff > floor_diff) {
                int32_t q5 = @P@_mbqm(diff, cfg->multiplier, cfg->shift);
                r = @P@_rdbpot(@FN@_sub(q5, log), 22) + 127; /* Q5.26 -> Q4, + zero point */
                r = r > 127 ? 127 : (r < -128 ? -128 : r);
            }
            y[@P@_offset(out, row + c)] = (int8_t)r;
        }
    }
    return MLI_STATUS_OK;
}
"""

LOG_SOFTMAX8 = FallbackKernel(
    name="log_softmax8",
    doc="int8 LOG_SOFTMAX over the last dimension, TFLite's integer arithmetic",
    c_source=_FIXEDPOINT + _MATH + _KERNEL,
    run=_run,
    cfg=CFG,
)
register_kernel(LOG_SOFTMAX8)
