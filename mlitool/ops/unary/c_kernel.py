"""`lut8`: an int8 element-wise op through a 256-entry table, out[i] = table[in[i] + 128];
`abs16`: TFLite's int16 ABS on FX16 tensors (an int16 table would take 128 KiB).

Every int8 unary op with per-tensor parameters is a function of 256 input values, so lowering
tabulates the tflite-mode kernel itself over -128..127: the table is TFLite's result for every
input, and C, executor and tflite mode cannot differ.
"""

from __future__ import annotations

import numpy as np

from mlitool.mli.fallback import FallbackKernel, register_kernel
from mlitool.mli.kinds import PER_ELEMENT
from mlitool.ops.unary.functions import abs16


def _run(layer, model, xs, arith) -> np.ndarray:
    table = model.tensor(layer.params["table"]).data
    return table[xs[0].astype(np.int16) + 128]


LUT8 = FallbackKernel(
    name="lut8",
    doc="int8 element-wise op through a 256-entry table: out[i] = table[in[i] + 128]",
    c_source="""\
@STORAGE@mli_status @FN@(const mli_tensor *in, const mli_tensor *table, mli_tensor *out) {
    const int8_t *x = in->data.mem.pi8;
    const int8_t *lut = table->data.mem.pi8;
    int8_t *y = out->data.mem.pi8;
    uint32_t i, n = @P@_count(out);
    for (i = 0u; i < n; i++) {
        y[@P@_offset(out, i)] = lut[x[@P@_offset(in, i)] + 128];
    }
    return MLI_STATUS_OK;
}
""",
    run=_run,
)


def table_of(fn, x_dtype=np.int8) -> np.ndarray:
    """The 256-entry table of an int8 function `fn(x int8 array) -> int8 array`."""
    x = np.arange(-128, 128, dtype=np.int16).astype(x_dtype)
    return np.asarray(fn(x), dtype=np.int8).reshape(256)


register_kernel(LUT8, row_tiling=PER_ELEMENT)  # tiles by rows as an activation does


def _run_abs16(layer, model, xs, arith) -> np.ndarray:
    c = layer.cfg
    return abs16(xs[0], c["rescale"], c["multiplier"], c["shift"])


ABS16 = FallbackKernel(
    name="abs16",
    doc="int16 ABS as TFLite computes it: |x|, MultiplyByQuantizedMultiplier where scales differ",
    c_source="""\
@STORAGE@mli_status @FN@(const mli_tensor *in, const @CFG@ *cfg, mli_tensor *out) {
    const int16_t *x = in->data.mem.pi16;
    int16_t *y = out->data.mem.pi16;
    uint32_t i, n = @P@_count(out);
    for (i = 0u; i < n; i++) {
        int32_t v = x[@P@_offset(in, i)];
        v = v < 0 ? -v : v;
        if (cfg->rescale != 0) {
            v = @P@_mbqm(v, cfg->multiplier, cfg->shift);
        }
        y[@P@_offset(out, i)] = (int16_t)(v < -32768 ? -32768 : (v > 32767 ? 32767 : v));
    }
    return MLI_STATUS_OK;
}
""",
    run=_run_abs16,
    cfg=("rescale", "multiplier", "shift"),
)
register_kernel(ABS16, row_tiling=PER_ELEMENT)
