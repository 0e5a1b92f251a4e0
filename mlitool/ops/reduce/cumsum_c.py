"""`cumsum8`: CUMSUM of an int8 (SA8) tensor along one MLI axis: running int32 sums of the raw
values (from the end when `reverse`; before the element when `exclusive`), each requantized as
MultiplyByQuantizedMultiplier(sum - `zp_in` * terms, `multiplier`, `shift`) + `out_zp`, clamped
(`requantized_cumsum` is its numpy twin). The input is read through
its strides; `outer`, `size`, `inner`: the MLI shape seen as [outer, size, inner]."""

from __future__ import annotations

import numpy as np

from mlitool.execute.reference.fixedpoint import round_away_f32
from mlitool.mli.fallback import FallbackKernel, register_kernel
from mlitool.ops.reduce.reference import requantize

f32 = np.float32
CFG = ("outer", "size", "inner", "exclusive", "reverse", "zp_in", "multiplier", "shift", "out_zp")


def running_sums(x: np.ndarray, axis: int, exclusive: bool, reverse: bool, dtype) -> np.ndarray:
    """Each element's sum of those before it along `axis` (and itself unless `exclusive`), in
    `dtype`, accumulated one after the other (float32: TFLite's order and rounding)."""
    x = np.asarray(x, dtype)
    if reverse:
        x = np.flip(x, axis)
    total = np.cumsum(x, axis=axis, dtype=dtype)
    if exclusive:
        total = np.concatenate(
            [np.zeros_like(np.take(total, [0], axis)), np.delete(total, -1, axis)], axis=axis
        )
    return np.ascontiguousarray(np.flip(total, axis) if reverse else total)


def terms(shape: tuple[int, ...], axis: int, exclusive: bool, reverse: bool) -> np.ndarray:
    """How many elements each running sum holds, broadcastable to `shape`."""
    n = shape[axis]
    k = np.arange(n) + (0 if exclusive else 1)
    k = k[::-1] if reverse else k
    return k.reshape([n if d == axis else 1 for d in range(len(shape))])


def requantized_cumsum(x, axis, exclusive, reverse, zp_in, multiplier, shift, zp_out, dtype):
    """The int8 CUMSUM of `cumsum8`: running int sums requantized per number of terms."""
    total = running_sums(x, axis, exclusive, reverse, np.int64)
    bias = zp_in * terms(total.shape, axis, exclusive, reverse)
    return requantize(total, bias, multiplier, shift, zp_out, dtype)


def _run(layer, model, xs, arith) -> np.ndarray:
    cfg = layer.cfg
    x = xs[0]
    x3 = x.reshape(x.shape[0], cfg["outer"], cfg["size"], cfg["inner"])
    y = requantized_cumsum(
        x3,
        2,
        bool(cfg["exclusive"]),
        bool(cfg["reverse"]),
        cfg["zp_in"],
        cfg["multiplier"],
        cfg["shift"],
        cfg["out_zp"],
        np.int8,
    )
    out_shape = model.tensor(layer.outputs[0]).shape
    return y.reshape((x.shape[0],) + tuple(out_shape))


CUMSUM8 = FallbackKernel(
    name="cumsum8",
    doc="int8 running sums along one axis, each requantized for its number of terms",
    cfg=CFG,
    c_source="""\
@STORAGE@mli_status @FN@(const mli_tensor *in, const @CFG@ *cfg, mli_tensor *out) {
    const int8_t *x = in->data.mem.pi8;
    int8_t *y = out->data.mem.pi8;
    int32_t o, i, j;
    for (o = 0; o < cfg->outer; o++) {
        for (i = 0; i < cfg->inner; i++) {
            int32_t acc = 0;
            for (j = 0; j < cfg->size; j++) {
                const int32_t k = cfg->reverse ? cfg->size - 1 - j : j;
                const uint32_t flat = (uint32_t)((o * cfg->size + k) * cfg->inner + i);
                const int32_t terms = cfg->exclusive ? j : j + 1;
                int32_t v;
                if (!cfg->exclusive) {
                    acc += x[@P@_offset(in, flat)];
                }
                v = @P@_wrap32((int64_t)acc - (int64_t)cfg->zp_in * terms);
                v = @P@_mbqm(v, cfg->multiplier, cfg->shift) + cfg->out_zp;
                y[@P@_offset(out, flat)] = (int8_t)(v < -128 ? -128 : (v > 127 ? 127 : v));
                if (cfg->exclusive) {
                    acc += x[@P@_offset(in, flat)];
                }
            }
        }
    }
    return MLI_STATUS_OK;
}
""",
    run=_run,
)
register_kernel(CUMSUM8)


# --- an int8 model's float island ------------------------------------------------------------


def island_cumsum(x: np.ndarray, table, axis, exclusive, reverse, scale, zp) -> np.ndarray:
    """An int8 model's float island DEQUANTIZE -> CUMSUM -> QUANTIZE on the int8 values `x`:
    the DEQUANTIZE results (`table`, float32 by int8 value), TFLite's float32 running sums,
    then QUANTIZE's reference arithmetic (float32 division by the scale, rounded half away from
    zero, plus the zero point, clamped)."""
    deq = np.asarray(table, f32)[np.asarray(x).astype(np.int16) + 128]
    total = running_sums(deq, axis, exclusive, reverse, f32)
    with np.errstate(over="ignore"):
        v = total / f32(scale)
    r = round_away_f32(np.clip(v, f32(-(2.0**24)), f32(2.0**24))).astype(np.int64) + zp
    return np.clip(r, -128, 127).astype(np.int8)


def _run_island(layer, model, xs, arith) -> np.ndarray:
    cfg = layer.cfg
    x = xs[0]
    x3 = x.reshape(x.shape[0], cfg["outer"], cfg["size"], cfg["inner"])
    table = model.tensor(layer.params["table"]).data.astype(np.int32).view(np.float32)
    scale = np.array([cfg["fscale"]], np.int32).view(np.float32)[0]
    y = island_cumsum(
        x3, table, 2, bool(cfg["exclusive"]), bool(cfg["reverse"]), scale, cfg["out_zp"]
    )
    out_shape = model.tensor(layer.outputs[0]).shape
    return y.reshape((x.shape[0],) + tuple(out_shape))


ISLAND_CFG = ("outer", "size", "inner", "exclusive", "reverse", "fscale", "out_zp")

# Float32 additions and one division per element: IEEE-754 single precision rounds each alike on
# every target (no multiply, so no fused multiply-add to contract into).
CUMSUM_ISLAND8 = FallbackKernel(
    name="cumsum_island8",
    doc="an int8 model's float island DEQUANTIZE -> CUMSUM -> QUANTIZE, float32 as TFLite",
    cfg=ISLAND_CFG,
    c_source="""\
static float @P@_ci_f32(int32_t bits) {
    union {
        int32_t i;
        float f;
    } u;
    u.i = bits;
    return u.f;
}

/* QUANTIZE's reference rounding: roundf(v) + zp clamped to int8; |v| capped at 2^24 first */
static int32_t @P@_ci_round(float v, int32_t zp) {
    float t, f;
    int32_t r;
    v = v > 16777216.0f ? 16777216.0f : (v < -16777216.0f ? -16777216.0f : v);
    t = v < 0.0f ? -v : v;
    f = (float)(int32_t)t;
    r = (int32_t)f + (t - f >= 0.5f ? 1 : 0);
    r = (v < 0.0f ? -r : r) + zp;
    return r < -128 ? -128 : (r > 127 ? 127 : r);
}

@STORAGE@mli_status @FN@(const mli_tensor *in, const mli_tensor *table, const @CFG@ *cfg,
                         mli_tensor *out) {
    const int8_t *x = in->data.mem.pi8;
    const int32_t *deq = table->data.mem.pi32;
    int8_t *y = out->data.mem.pi8;
    const float scale = @P@_ci_f32(cfg->fscale);
    int32_t o, i, j;
    for (o = 0; o < cfg->outer; o++) {
        for (i = 0; i < cfg->inner; i++) {
            float acc = 0.0f;
            for (j = 0; j < cfg->size; j++) {
                const int32_t k = cfg->reverse ? cfg->size - 1 - j : j;
                const uint32_t flat = (uint32_t)((o * cfg->size + k) * cfg->inner + i);
                const float v = @P@_ci_f32(deq[x[@P@_offset(in, flat)] + 128]);
                float q;
                if (!cfg->exclusive) {
                    acc += v;
                }
                q = acc / scale;
                y[@P@_offset(out, flat)] = (int8_t)@P@_ci_round(q, cfg->out_zp);
                if (cfg->exclusive) {
                    acc += v;
                }
            }
        }
    }
    return MLI_STATUS_OK;
}
""",
    run=_run_island,
)
register_kernel(CUMSUM_ISLAND8)
