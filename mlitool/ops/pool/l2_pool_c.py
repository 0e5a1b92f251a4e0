"""`l2pool8`: L2_POOL_2D of an int8 (SA8) HWC tensor for a float model quantized by mlitool
(TFLite and TFLite Micro have no int8 kernel): per window the sum S of (x - `zp_in`)^2 over the
positions inside the input and their count n, then round(k * sqrt(S / n)) in integers,
k = input scale / output scale: r = (isqrt(S * `k2` / n) + 2^(g-1)) >> g with
`k2` = round(k^2 * 4^g) (< 2^31), plus `out_zp`, clamped to the activation range `lo`..`hi`.
`l2pool_twin` is its numpy twin; the C uses integers only (no libm)."""

from __future__ import annotations

import numpy as np

from mlitool.execute import windows as win
from mlitool.mli.fallback import FallbackKernel, register_kernel

CFG = ("kh", "kw", "sh", "sw", "pt", "pl", "zp_in", "k2", "g", "out_zp", "lo", "hi")


def scale_factor(k: float) -> tuple[int, int]:
    """(k2, g): k^2 on 2g fraction bits, the most that keep it below 2^31 (g at most 15)."""
    g = 15
    while g > 0 and k * k * 4.0**g >= 2.0**31:
        g -= 1
    return int(round(k * k * 4.0**g)), g


def isqrt(a: np.ndarray) -> np.ndarray:
    """floor(sqrt(a)) of non-negative int64 values, exactly."""
    s = np.floor(np.sqrt(a.astype(np.float64))).astype(np.int64)
    s = np.where(s * s > a, s - 1, s)
    s = np.where(s * s > a, s - 1, s)
    s = np.where((s + 1) * (s + 1) <= a, s + 1, s)
    return np.where((s + 1) * (s + 1) <= a, s + 1, s)


def l2pool_twin(x: np.ndarray, cfg: dict, oh: int, ow: int) -> np.ndarray:
    """`x` [N, H, W, C] int8 -> [N, oh, ow, C] int8, as the C computes it."""
    kh, kw, sh, sw, pt, pl = (int(cfg[k]) for k in ("kh", "kw", "sh", "sw", "pt", "pl"))
    d = x.astype(np.int64) - int(cfg["zp_in"])
    v = win.windows(d, kh, kw, oh, ow, pt, pl, sh, sw, value=0)
    total = (v * v).sum(axis=(4, 5))
    n = win.valid_counts(x.shape[1], x.shape[2], kh, kw, oh, ow, pt, pl, sh, sw)
    n = n[None, :, :, None].astype(np.int64)
    g = int(cfg["g"])
    r = isqrt(total * int(cfg["k2"]) // n)
    r = (r + ((1 << g) >> 1)) >> g
    return np.clip(r + int(cfg["out_zp"]), int(cfg["lo"]), int(cfg["hi"])).astype(np.int8)


def _run(layer, model, xs, arith) -> np.ndarray:
    x = xs[0]
    out_shape = tuple(model.tensor(layer.outputs[0]).shape)
    return l2pool_twin(x, layer.cfg, out_shape[0], out_shape[1])


L2POOL8 = FallbackKernel(
    name="l2pool8",
    doc="int8 L2 pooling: round(k * sqrt(mean of squares)) in integers",
    cfg=CFG,
    c_source="""\
static uint64_t @P@_isqrt64(uint64_t a) {
    uint64_t r = 0u, bit = (uint64_t)1 << 62;
    while (bit > a) {
        bit >>= 2;
    }
    while (bit != 0u) {
        if (a >= r + bit) {
            a -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
        bit >>= 2;
    }
    return r;
}

@STORAGE@mli_status @FN@(const mli_tensor *in, const @CFG@ *cfg, mli_tensor *out) {
    const int8_t *x = in->data.mem.pi8;
    int8_t *y = out->data.mem.pi8;
    const int32_t ih = (int32_t)in->shape[0], iw = (int32_t)in->shape[1];
    const int32_t oh = (int32_t)out->shape[0], ow = (int32_t)out->shape[1];
    const int32_t ch = (int32_t)out->shape[2];
    int32_t oy, ox, c, fy, fx;
    uint32_t flat = 0u;
    for (oy = 0; oy < oh; oy++) {
        for (ox = 0; ox < ow; ox++) {
            for (c = 0; c < ch; c++, flat++) {
                uint64_t sum = 0u, count = 0u, r;
                int32_t v;
                for (fy = 0; fy < cfg->kh; fy++) {
                    const int32_t iy = oy * cfg->sh - cfg->pt + fy;
                    if (iy < 0 || iy >= ih) {
                        continue;
                    }
                    for (fx = 0; fx < cfg->kw; fx++) {
                        const int32_t ix = ox * cfg->sw - cfg->pl + fx;
                        int32_t d;
                        if (ix < 0 || ix >= iw) {
                            continue;
                        }
                        d = x[iy * in->mem_stride[0] + ix * in->mem_stride[1]
                              + c * in->mem_stride[2]] - cfg->zp_in;
                        sum += (uint64_t)(d * d);
                        count++;
                    }
                }
                r = @P@_isqrt64(sum * (uint64_t)cfg->k2 / count);
                r = (r + (((uint64_t)1 << cfg->g) >> 1)) >> cfg->g;
                v = (int32_t)(r > 1000u ? 1000u : r) + cfg->out_zp;
                y[@P@_offset(out, flat)] = (int8_t)(v < cfg->lo ? cfg->lo : (v > cfg->hi ? cfg->hi : v));
            }
        }
    }
    return MLI_STATUS_OK;
}
""",
    run=_run,
)
register_kernel(L2POOL8)
