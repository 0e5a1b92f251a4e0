"""`lut8`: an int8 element-wise op through a 256-entry table, out[i] = table[in[i] + 128].

Every int8 unary op with per-tensor parameters is a function of 256 input values, so lowering
tabulates the tflite-mode kernel itself over -128..127: the table is TFLite's result for every
input, and C, executor and tflite mode cannot differ.
"""

from __future__ import annotations

import numpy as np

from mlitool.mli.fallback import FallbackKernel, register_kernel
from mlitool.mli.kinds import PER_ELEMENT


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
