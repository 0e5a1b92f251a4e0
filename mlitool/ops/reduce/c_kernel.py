"""`reduce8` / `reduce16`: MEAN, SUM, REDUCE_MAX and REDUCE_MIN of an int8 (SA8) or int16 (FX16,
zero point 0: 16x8 models) tensor over any axes; one C text, instantiated for each element type.

cfg: `mode` (0 sum, 1 max, 2 min), `axes` (bit d set: MLI input dimension d is reduced),
`rescale`: 0, the extreme is stored as it is (TFLite's MAX / MIN, equal parameters); 1, integer:
MultiplyByQuantizedMultiplier(acc - `bias`, `multiplier`, `shift`) + `out_zp` (MEAN: `bias` =
input zero point * count, the multiplier with 1/count folded in as TFLite's QuantizedMeanOrSum;
MAX / MIN of a calibrated float model: `bias` = input zero point); 2, float32 as LiteRT's builtin
SUM: roundf(acc * `fscale` + `fbias`) + `out_zp` (float32 bit patterns in int32 fields).
Lowering computes them as TFLite does (`mlitool.ops.reduce.reference`). Output element o is the o-th
in row-major order of the kept dimensions: its order in the output with or without keep_dims.
"""

from __future__ import annotations

import functools

import numpy as np

from mlitool.mli.fallback import FallbackKernel, register_kernel
from mlitool.ops.reduce.reference import reduce_int, requantize, sum_float_rescale

MODE = {"sum": 0, "max": 1, "min": 2}
CFG = ("mode", "axes", "rescale", "bias", "multiplier", "shift", "out_zp", "fscale", "fbias")


def _f32(bits: int) -> np.float32:
    return np.array([bits], np.int32).view(np.float32)[0]


def _run(layer, model, xs, arith, dtype=np.int8) -> np.ndarray:
    cfg = layer.cfg
    x = xs[0]
    axes = tuple(d + 1 for d in range(x.ndim - 1) if cfg["axes"] >> d & 1)
    mode = {v: k for k, v in MODE.items()}[cfg["mode"]]
    acc = reduce_int(x, mode, axes, keep=False)
    if cfg["rescale"] == 1:
        acc = requantize(acc, cfg["bias"], cfg["multiplier"], cfg["shift"], cfg["out_zp"], dtype)
    elif cfg["rescale"] == 2:
        scale, bias = _f32(cfg["fscale"]), _f32(cfg["fbias"])
        acc = sum_float_rescale(acc, scale, bias, cfg["out_zp"], dtype)
    out_shape = model.tensor(layer.outputs[0]).shape
    return acc.astype(dtype).reshape((x.shape[0],) + tuple(out_shape))


_C_TEMPLATE = """\
static float @P@_@TAG@_f32(int32_t bits) {
    union {
        int32_t i;
        float f;
    } u;
    u.i = bits;
    return u.f;
}

/* roundf(v) + zp clamped to @W@; |v| capped at 2^24 first (beyond it no result differs) */
static int32_t @P@_@TAG@_round(float v, int32_t zp) {
    float t, f;
    int32_t r;
    v = v > 16777216.0f ? 16777216.0f : (v < -16777216.0f ? -16777216.0f : v);
    t = v < 0.0f ? -v : v;
    f = (float)(int32_t)t;
    r = (int32_t)f + (t - f >= 0.5f ? 1 : 0);
    r = (v < 0.0f ? -r : r) + zp;
    return r < @LO@ ? @LO@ : (r > @HI@ ? @HI@ : r);
}

@STORAGE@mli_status @FN@(const mli_tensor *in, const @CFG@ *cfg, mli_tensor *out) {
    const @T@ *x = in->data.mem.@MEM@;
    @T@ *y = out->data.mem.@MEM@;
    uint32_t n_out = @P@_count(out), n_in = @P@_count(in), count = n_in / n_out;
    uint32_t o, k, d;
    for (o = 0u; o < n_out; o++) {
        int32_t acc = 0;
        for (k = 0u; k < count; k++) {
            /* input coordinates: kept dimensions from o, reduced ones from k (row-major) */
            uint32_t oi = o, ki = k, off = 0u;
            int32_t v;
            for (d = in->rank; d > 0u; d--) {
                uint32_t dim = in->shape[d - 1u], c;
                if ((uint32_t)cfg->axes & (1u << (d - 1u))) {
                    c = ki % dim;
                    ki /= dim;
                } else {
                    c = oi % dim;
                    oi /= dim;
                }
                off += c * (uint32_t)in->mem_stride[d - 1u];
            }
            v = x[off];
            if (cfg->mode == 0) {
                acc += v;
            } else if (k == 0u || (cfg->mode == 1 ? v > acc : v < acc)) {
                acc = v;
            }
        }
        if (cfg->rescale == 1) {
            acc = @P@_wrap32((int64_t)acc - cfg->bias);
            acc = @P@_mbqm(acc, cfg->multiplier, cfg->shift) + cfg->out_zp;
            acc = acc < @LO@ ? @LO@ : (acc > @HI@ ? @HI@ : acc);
        } else if (cfg->rescale == 2) {
            float v = (float)acc * @P@_@TAG@_f32(cfg->fscale);
            acc = @P@_@TAG@_round(v + @P@_@TAG@_f32(cfg->fbias), cfg->out_zp);
        }
        y[@P@_offset(out, o)] = (@T@)acc;
    }
    return MLI_STATUS_OK;
}
"""


def _kernel(name: str, dtype: type[np.integer], tag: str) -> FallbackKernel:
    """The kernel for elements of `dtype`: the C text for its C type (`@W@_t`), data container
    member (`@MEM@`) and range (`@LO@`, `@HI@`), helpers named `@P@_<tag>_...`."""
    width, info = np.dtype(dtype).name, np.iinfo(dtype)
    text = _C_TEMPLATE.replace("@TAG@", tag).replace("@T@", f"{width}_t").replace("@W@", width)
    text = text.replace("@MEM@", f"pi{info.bits}")
    return FallbackKernel(
        name=name,
        doc=f"{width} sum / mean / max / min over any axes, rescaled as TFLite's QuantizedMeanOrSum",
        c_source=text.replace("@LO@", str(info.min)).replace("@HI@", str(info.max)),
        run=functools.partial(_run, dtype=dtype),
        cfg=CFG,
    )


REDUCE8 = _kernel("reduce8", np.int8, "reduce")
REDUCE16 = _kernel("reduce16", np.int16, "reduce16")
register_kernel(REDUCE8)
register_kernel(REDUCE16)
