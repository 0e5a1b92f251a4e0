"""What the element-wise fallback kernels of several families share: the C of TFLite's
right-aligned broadcast (an operand's dimension of 1 repeats) and its numpy twin's operand shape."""

from __future__ import annotations

import numpy as np

# The offset in `t` of the output's i-th element (row-major), `t` broadcast against `out`
# right-aligned (a dimension of 1 repeats; a constant is never rank 0 here: lowering gives it one
# dimension).
BROADCAST_AT = """\
static uint32_t @FN@_at(const mli_tensor *t, const mli_tensor *out, uint32_t i) {
    uint32_t d, k = t->rank, off = 0u;
    for (d = out->rank; d > 0u && k > 0u; d--) {
        uint32_t c = i % out->shape[d - 1u];
        i /= out->shape[d - 1u];
        k--;
        if (t->shape[k] != 1u) {
            off += c * (uint32_t)t->mem_stride[k];
        }
    }
    return off;
}
"""


def batched(model, name: str, x: np.ndarray, rank: int) -> np.ndarray:
    """x with a sample axis (constants come without) and right-aligned to `rank` dimensions."""
    shape = model.tensor(name).shape
    x = np.asarray(x)
    if x.ndim == len(shape):
        x = x[None]
    return x.reshape((x.shape[0],) + (1,) * (rank - len(shape)) + tuple(shape))
