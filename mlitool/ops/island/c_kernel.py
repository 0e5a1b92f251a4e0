"""`float_island<N>`: an int8 model's float island of N int8 inputs (N = 2..MAX_INPUTS) in
float32 C, as TFLite computes it: each input's float32 value (`deq<k>`: a plain DEQUANTIZE,
scale * (x - zp) from the scale's bits and the zero point; else from its table, 256 bit
patterns), the island's ADD / SUB / MUL left to right with their fused activations, then
QUANTIZE's division by the output scale, rounded half away from zero, plus the zero point,
clamped (`arith.island_int8` is its numpy twin).

IEEE-754 single precision rounds each addition, subtraction, multiplication and division alike
on every target, provided the compiler does not contract a multiplication and the next addition
into a fused multiply-add (one rounding instead of two; GCC does so by default outside strict
ISO modes, -ffp-contract=fast): each step's result goes through a volatile float, which forces
its rounding to float32 (GCC 12 at -O2 -mfma -ffp-contract=fast emits no FMA here even without
it: the clamp and the table-or-product choice stand between; volatile makes that hold for any
compiler). A product followed only by the division by the scale cannot contract (an FMA
multiplies and adds). On a core without an FPU every float operation is a call into the
compiler's soft-float library: tens of cycles per operation instead of one or two (per output
element N - 1 operations, a division and the rounding), and the library's code size.
"""

from __future__ import annotations

import numpy as np

from mlitool.mli.fallback import FallbackKernel, register_kernel
from mlitool.ops.island import arith

MAX_INPUTS = 8
# `deq<k>` of a constant term (one value, or one per channel: `len<k>` of them, the output's
# last axis); 0: an input read through its table; 1: a plain DEQUANTIZE.
CONSTANT_TERM = 2

_HELPERS = """\
static float @FN@_f32(int32_t bits) {
    union {
        int32_t i;
        float f;
    } u;
    u.i = bits;
    return u.f;
}

/* One step of the island, rounded to float32 (volatile: no contraction into an FMA with the
 * next step), then its fused activation clamp min(max(r, lo), hi) as TFLite's float kernels. */
static float @FN@_step(float acc, float v, int32_t op, int32_t lo, int32_t hi) {
    volatile float r;
    float f, l = @FN@_f32(lo), h = @FN@_f32(hi);
    switch (op) {
    case 0: r = acc + v; break;
    case 1: r = acc - v; break;
    case 2: r = v - acc; break;
    default: r = acc * v; break;
    }
    f = r;
    f = f < l ? l : f;
    return f > h ? h : f;
}

/* Input value x of a term: its table's float32 bit pattern, or (`deq`: the term is a plain
 * DEQUANTIZE, the table holds the scale's bits and the zero point) scale * (x - zp), one
 * float32 rounding of the exact product as TFLite's double product cast to float; volatile:
 * the product is not contracted with the step that adds it. */
static float @FN@_value(const int32_t *t, int32_t deq, int32_t x) {
    volatile float r;
    if (!deq) {
        return @FN@_f32(t[x + 128]);
    }
    r = @FN@_f32(t[0]) * (float)(x - t[1]);
    return r;
}

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
"""


def _source(n: int) -> str:
    ins = ", ".join(f"const mli_tensor *in{k}" for k in range(n))
    tabs = ", ".join(f"const mli_tensor *table{k}" for k in range(n))
    decl = "".join(
        f"    const int8_t *x{k} = in{k}->data.mem.pi8;\n"
        f"    const int32_t *t{k} = table{k}->data.mem.pi32;\n"
        for k in range(n)
    )
    steps = "".join(
        f"        v = {_term(k)};\n"
        f"        acc = @FN@_step(acc, v, cfg->op{k}, cfg->lo{k}, cfg->hi{k});\n"
        for k in range(1, n)
    )
    return (
        _HELPERS
        + f"""
@STORAGE@mli_status @FN@({ins}, {tabs}, const @CFG@ *cfg, mli_tensor *out) {{
{decl}    int8_t *y = out->data.mem.pi8;
    const float scale = @FN@_f32(cfg->fscale);
    uint32_t i, n = @P@_count(out);
    for (i = 0u; i < n; i++) {{
        float v, acc = {_term(0)};
{steps}        y[@P@_offset(out, i)] = (int8_t)@FN@_round(acc / scale, cfg->out_zp);
    }}
    return MLI_STATUS_OK;
}}
"""
    )


def _term(k: int) -> str:
    """Term k's float32 value at output element i: a constant's value for i's channel (the
    int8 input, its table tensor, is then not read), else the input's."""
    return (
        f"cfg->deq{k} == {CONSTANT_TERM} ? @FN@_f32(t{k}[i % (uint32_t)cfg->len{k}])\n"
        f"            : @FN@_value(t{k}, cfg->deq{k}, x{k}[@P@_offset(in{k}, i)])"
    )


def _cfg(n: int) -> tuple[str, ...]:
    steps = (f"{f}{k}" for k in range(1, n) for f in ("op", "lo", "hi"))
    lens = (f"len{k}" for k in range(n))
    return (*(f"deq{k}" for k in range(n)), *lens, *steps, "fscale", "out_zp")


def _run(layer, model, xs, arith_mode) -> np.ndarray:
    cfg = layer.cfg
    n = len(layer.inputs)
    out_shape = model.tensor(layer.outputs[0]).shape
    ins = [np.asarray(x) for x in xs]
    batch = next(x.shape[0] for k, x in enumerate(ins) if cfg[f"deq{k}"] != CONSTANT_TERM)
    tables = []
    for k in range(n):
        data = model.tensor(layer.params[f"table{k}"]).data.astype(np.int32).reshape(-1)
        if cfg[f"deq{k}"] == CONSTANT_TERM:  # values by channel, broadcast over the output
            values = data.view(np.float32)
            ins[k] = np.broadcast_to(values, (batch, *out_shape)) if values.size > 1 else values[0]
            tables.append(None)
            continue
        if cfg[f"deq{k}"]:  # the scale's bits and the zero point: one float32 product each
            scale = data[:1].view(np.float32)[0]
            data = dequantized(float(scale), int(data[1])).view(np.int32)
        tables.append(data.view(np.float32))
    codes = {v: k for k, v in arith.STEP_CODES.items()}
    steps = []
    for k in range(1, n):
        lo, hi = np.array([cfg[f"lo{k}"], cfg[f"hi{k}"]], np.int32).view(np.float32)
        steps.append((codes[cfg[f"op{k}"]], (float(lo), float(hi))))
    scale = np.array([cfg["fscale"]], np.int32).view(np.float32)[0]
    y = arith.island_int8(ins, tables, steps, float(scale), int(cfg["out_zp"]))
    return np.broadcast_to(y, (batch, *out_shape)).reshape((batch,) + tuple(out_shape))


def dequantized(scale: float, zp: int) -> np.ndarray:
    """DEQUANTIZE of every int8 value -128..127 in float32: scale * (x - zp), one rounding."""
    return (np.float32(scale) * (np.arange(-128, 128) - zp).astype(np.float32)).astype(np.float32)


_KERNELS: dict[int, FallbackKernel] = {}


def island_kernel(n: int) -> FallbackKernel:
    return _KERNELS[n]


for _n in range(2, MAX_INPUTS + 1):
    _KERNELS[_n] = register_kernel(
        FallbackKernel(
            name=f"float_island{_n}",
            doc=f"an int8 model's float island of {_n} int8 inputs, float32 as TFLite",
            cfg=_cfg(_n),
            c_source=_source(_n),
            run=_run,
        )
    )
