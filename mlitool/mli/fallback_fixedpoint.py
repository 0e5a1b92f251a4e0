"""C text of TFLite's (gemmlowp's) int32 fixed-point helpers, shared by the fallback kernels
that call them (`FallbackKernel.fixedpoint`): NAME.c defines them once, named `@P@_<helper>`,
after the prelude. Each is the C of its numpy twin in `mlitool.execute.reference.fixedpoint`."""

from __future__ import annotations

FIXEDPOINT = """\
/* TFLite's int32 fixed point (double rounding). Right shifts of negative values are arithmetic;
 * an int64 result that leaves int32 wraps, as TFLite's int32 arithmetic does. */
static int32_t @P@_wrap32(int64_t v) {
    uint32_t u = (uint32_t)((uint64_t)v & 0xFFFFFFFFu);
    return u < 0x80000000u ? (int32_t)u : (int32_t)(u - 0x80000000u) - INT32_MAX - 1;
}

/* SaturatingRoundingDoublingHighMul */
static int32_t @P@_srdhm(int32_t a, int32_t b) {
    int64_t ab = (int64_t)a * (int64_t)b;
    int64_t nudge = ab >= 0 ? ((int64_t)1 << 30) : (1 - ((int64_t)1 << 30));
    if (a == b && a == INT32_MIN) {
        return INT32_MAX;
    }
    return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/* RoundingDivideByPOT, 0 <= e <= 31 */
static int32_t @P@_rdbpot(int32_t x, int32_t e) {
    int32_t mask = (int32_t)(((int64_t)1 << e) - 1);
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> e) + ((x & mask) > threshold ? 1 : 0);
}

/* SaturatingRoundingMultiplyByPOT, 0 <= e <= 31 */
static int32_t @P@_satpot(int32_t x, int32_t e) {
    int32_t threshold = (int32_t)(((int64_t)1 << (31 - e)) - 1);
    if (e == 0) {
        return x;
    }
    if (x > threshold) {
        return INT32_MAX;
    }
    return x < -threshold ? INT32_MIN : (int32_t)((int64_t)x * ((int64_t)1 << e));
}

/* MultiplyByQuantizedMultiplier(x, multiplier, shift) */
static int32_t @P@_mbqm(int32_t x, int32_t m, int32_t shift) {
    int32_t left = shift > 0 ? shift : 0;
    int32_t a = @P@_wrap32((int64_t)x * ((int64_t)1 << left));
    return @P@_rdbpot(@P@_srdhm(a, m), shift > 0 ? 0 : -shift);
}

/* leading zero bits of v (32 for 0) */
static int32_t @P@_clz(uint32_t v) {
    int32_t n = 32;
    while (v != 0u) {
        v >>= 1;
        n--;
    }
    return n;
}
"""
