"""`resize_bilinear`: TFLite's integer bilinear resize (ResizeBilinearInteger) of an HWC tensor.

Positions advance by `scale_h` / `scale_w` (1/1024 of an input pixel, computed by lowering as
TFLite's kernel does), half-pixel centres shift them by scale / 2 - 512; the four neighbours'
weights multiply to 2^20 and the sum is rounded half away from zero. The weights sum to one,
so raw values keep their zero point / frac bits: no requantization (SA8, FX8 or FX16).
"""

from __future__ import annotations

from mlitool.mli.fallback import FallbackKernel, register_kernel
from mlitool.ops.resize.reference import bilinear_int


def _run(layer, model, xs, arith):
    x = xs[0]
    oh, ow = model.tensor(layer.outputs[0]).shape[:2]
    c = layer.cfg
    return bilinear_int(x, oh, ow, c["scale_h"], c["scale_w"], bool(c["half_pixel"]))


RESIZE_BILINEAR = FallbackKernel(
    name="resize_bilinear",
    doc="TFLite's integer bilinear resize of an HWC tensor (positions in 1/1024 pixel)",
    cfg=("scale_h", "scale_w", "half_pixel"),
    c_source="""\
/* position (1/1024), lower and upper neighbour of output row / column v */
static void @FN@_axis(int32_t v, int32_t scale, int32_t half, int32_t size, int32_t *pos,
                      int32_t *lo, int32_t *hi) {
    *pos = half ? v * scale + scale / 2 - 512 : v * scale;
    *lo = *pos / 1024 > 0 ? *pos / 1024 : 0; /* C division truncates, as TFLite's */
    *hi = (*pos + 1023) / 1024 < size - 1 ? (*pos + 1023) / 1024 : size - 1;
}

@STORAGE@mli_status @FN@(const mli_tensor *in, const @CFG@ *cfg, mli_tensor *out) {
    const int32_t *s = in->mem_stride;
    const int32_t *o = out->mem_stride;
    const uint32_t size = mli_hlp_tensor_element_size(in);
    int32_t y, x, c;
    for (y = 0; y < (int32_t)out->shape[0]; y++) {
        int32_t py, y0, y1;
        @FN@_axis(y, cfg->scale_h, cfg->half_pixel, (int32_t)in->shape[0], &py, &y0, &y1);
        for (x = 0; x < (int32_t)out->shape[1]; x++) {
            int32_t px, x0, x1;
            @FN@_axis(x, cfg->scale_w, cfg->half_pixel, (int32_t)in->shape[1], &px, &x0, &x1);
            {
                const int64_t dy = py - 1024 * y0, dx = px - 1024 * x0;
                const int64_t w00 = (1024 - dy) * (1024 - dx), w10 = dy * (1024 - dx);
                const int64_t w01 = (1024 - dy) * dx, w11 = dy * dx;
                const int32_t a = y0 * s[0] + x0 * s[1], b = y1 * s[0] + x0 * s[1];
                const int32_t e = y0 * s[0] + x1 * s[1], f = y1 * s[0] + x1 * s[1];
                for (c = 0; c < (int32_t)out->shape[2]; c++) {
                    const int32_t k = c * s[2], dst = y * o[0] + x * o[1] + c * o[2];
                    int64_t acc;
                    if (size == 2u) {
                        const int16_t *p = in->data.mem.pi16;
                        acc = p[a + k] * w00 + p[b + k] * w10 + p[e + k] * w01 + p[f + k] * w11;
                    } else {
                        const int8_t *p = in->data.mem.pi8;
                        acc = p[a + k] * w00 + p[b + k] * w10 + p[e + k] * w01 + p[f + k] * w11;
                    }
                    acc = (acc + (acc > 0 ? (1 << 19) : -(1 << 19))) / (1 << 20);
                    if (size == 2u) {
                        out->data.mem.pi16[dst] = (int16_t)acc;
                    } else {
                        out->data.mem.pi8[dst] = (int8_t)acc;
                    }
                }
            }
        }
    }
    return MLI_STATUS_OK;
}
""",
    run=_run,
)
register_kernel(RESIZE_BILINEAR)
