"""`logic8`: LOGICAL_AND (`op` 0), LOGICAL_OR (1), LOGICAL_NOT (2, of the first operand) on bool
bytes (0/1; in MLI SA8 tensors of scale 1 and zero point 0), each operand broadcast
right-aligned against the output. Any byte other than 0 reads as true, as a C++ bool does."""

from __future__ import annotations

import numpy as np

from mlitool.mli.fallback import FallbackKernel, register_kernel
from mlitool.ops.common.broadcast_c import BROADCAST_AT, batched


def _run(layer, model, xs, arith) -> np.ndarray:
    rank = len(model.tensor(layer.outputs[0]).shape)
    a, b = (batched(model, n, x, rank) != 0 for n, x in zip(layer.inputs, xs))
    op = layer.cfg["op"]
    y = np.logical_and(a, b) if op == 0 else np.logical_or(a, b) if op == 1 else np.logical_not(a)
    return y.astype(np.int8)


LOGIC8 = FallbackKernel(
    name="logic8",
    doc="LOGICAL_AND / LOGICAL_OR / LOGICAL_NOT of bool bytes (0/1), broadcast right-aligned",
    c_source=BROADCAST_AT
    + """\
@STORAGE@mli_status @FN@(const mli_tensor *in1, const mli_tensor *in2, const @CFG@ *cfg,
                         mli_tensor *out) {
    const int8_t *a = @P@_in8(in1);
    const int8_t *b = @P@_in8(in2);
    int8_t *y = out->data.mem.pi8;
    uint32_t i, n = @P@_count(out);
    for (i = 0u; i < n; i++) {
        const int u = a[@FN@_at(in1, out, i)] != 0;
        const int v = b[@FN@_at(in2, out, i)] != 0;
        const int r = cfg->op == 0 ? (u && v) : cfg->op == 1 ? (u || v) : !u;
        y[@P@_offset(out, i)] = (int8_t)r;
    }
    return MLI_STATUS_OK;
}
""",
    run=_run,
    cfg=("op",),
)
register_kernel(LOGIC8)
