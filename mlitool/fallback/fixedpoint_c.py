"""C text of TFLite's fixed-point helpers for fallback kernels, each copy named after its
kernel (`@P@_<tag>_mbqm`) so that several kernels in one NAME.c do not collide."""

from __future__ import annotations

_MBQM = """\
/* TFLite's MultiplyByQuantizedMultiplier (double rounding), x wrapped to int32 after the left
   shift as TFLite's int32 arithmetic does. Right shifts of negative values are arithmetic. */
static int32_t @P@_TAG_wrap32(int64_t v) {
    uint32_t u = (uint32_t)((uint64_t)v & 0xFFFFFFFFu);
    return u < 0x80000000u ? (int32_t)u : (int32_t)(u - 0x80000000u) - INT32_MAX - 1;
}

static int32_t @P@_TAG_mbqm(int32_t x, int32_t multiplier, int32_t shift) {
    int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    int32_t a = @P@_TAG_wrap32((int64_t)x * ((int64_t)1 << left)), mask, rem, threshold, r;
    int64_t ab = (int64_t)a * multiplier;
    if (a == INT32_MIN && multiplier == INT32_MIN) {
        r = INT32_MAX;
    } else {
        r = (int32_t)((ab + (ab >= 0 ? (1 << 30) : 1 - (1 << 30))) / ((int64_t)1 << 31));
    }
    mask = (int32_t)(((int64_t)1 << right) - 1);
    rem = r & mask;
    threshold = (mask >> 1) + (r < 0 ? 1 : 0);
    return (r >> right) + (rem > threshold ? 1 : 0);
}

"""


def mbqm_c(tag: str) -> str:
    """`@P@_<tag>_wrap32(int64)` and `@P@_<tag>_mbqm(x, multiplier, shift)`."""
    return _MBQM.replace("TAG", tag)
