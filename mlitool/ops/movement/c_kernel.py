"""`pad8` / `pad16` / `pad32`: PADV2 on FX tensors (and int32 tensors, SA32 of scale 1) with a
fill that is not 0 (MLI's padding writes zeros, and FX and int32 have no zero point to move), one
C text instantiated for the int8, int16 and int32 containers.

cfg: `pre0`..`pre3`, the elements padded before each MLI dimension (the output's shape gives
the rest), and `fill`, the raw value of the padding in the output's frac bits. Output element i
is the input element at its coordinates minus `pre`, or `fill` outside the input.
"""

from __future__ import annotations

import functools

import numpy as np

from mlitool.mli.fallback import FallbackKernel, register_kernel

CFG = ("pre0", "pre1", "pre2", "pre3", "fill")


def _run(layer, model, xs, arith, dtype=np.int16) -> np.ndarray:
    c = layer.cfg
    x = np.asarray(xs[0])
    out_shape = model.tensor(layer.outputs[0]).shape
    pre = [c[f"pre{d}"] for d in range(len(out_shape))]
    width = [(0, 0)] + [(p, o - i - p) for p, o, i in zip(pre, out_shape, x.shape[1:])]
    return np.pad(x, width, constant_values=c["fill"]).astype(dtype)


_C_TEMPLATE = """\
@STORAGE@mli_status @FN@(const mli_tensor *in, const @CFG@ *cfg, mli_tensor *out) {
    const @T@ *x = in->data.mem.@MEM@;
    @T@ *y = out->data.mem.@MEM@;
    int32_t pre[4];
    uint32_t i, n = @P@_count(out);
    pre[0] = cfg->pre0;
    pre[1] = cfg->pre1;
    pre[2] = cfg->pre2;
    pre[3] = cfg->pre3;
    for (i = 0u; i < n; i++) {
        uint32_t d, r = i, off = 0u;
        int inside = 1;
        for (d = out->rank; d > 0u; d--) {
            int32_t c = (int32_t)(r % out->shape[d - 1u]) - pre[d - 1u];
            r /= out->shape[d - 1u];
            if (c < 0 || c >= (int32_t)in->shape[d - 1u]) {
                inside = 0;
            } else {
                off += (uint32_t)c * (uint32_t)in->mem_stride[d - 1u];
            }
        }
        y[@P@_offset(out, i)] = inside ? x[off] : (@T@)cfg->fill;
    }
    return MLI_STATUS_OK;
}
"""


def _kernel(name: str, dtype) -> FallbackKernel:
    width, bits = np.dtype(dtype).name, np.iinfo(dtype).bits
    text = _C_TEMPLATE.replace("@T@", f"{width}_t").replace("@MEM@", f"pi{bits}")
    return FallbackKernel(
        name=name,
        doc=f"PADV2 of {width} data (FX, or int32 values) with a fill other than 0",
        c_source=text,
        run=functools.partial(_run, dtype=dtype),
        cfg=CFG,
    )


PAD8 = _kernel("pad8", np.int8)
PAD16 = _kernel("pad16", np.int16)
PAD32 = _kernel("pad32", np.int32)
register_kernel(PAD8)
register_kernel(PAD16)
register_kernel(PAD32)
