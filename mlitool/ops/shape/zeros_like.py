"""ZEROS_LIKE that constant folding cannot fold (a graph output, a shape known at run time only):
`fill_value` fallback C writes one stored value into every element of the output: TFLite's zero
in the output's MLI representation (an int8 model's stored 0, as TFLite Micro writes it; a
float tensor's real 0: its zero point in SA8, 0 in FX; an int32 tensor's 0)."""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.mli import quant as Q
from mlitool.mli.fallback import FallbackKernel, register_kernel
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.types import ElType, MliTensor


def _run(layer, model, xs, arith) -> np.ndarray:
    x, out = np.asarray(xs[0]), model.tensor(layer.outputs[0])
    dtype = {1: np.int8, 2: np.int16, 4: np.int32}[out.el_type.bits // 8]
    return np.full(x.shape[:1] + tuple(out.shape), layer.cfg["value"], dtype)


FILL_VALUE = register_kernel(
    FallbackKernel(
        name="fill_value",
        doc="every element of the output one stored value (ZEROS_LIKE); the input gives the "
        "shape only",
        cfg=("value",),
        c_source="""\
@STORAGE@mli_status @FN@(const mli_tensor *in, const @CFG@ *cfg, mli_tensor *out) {
    const uint32_t size = mli_hlp_tensor_element_size(out);
    uint32_t i, n = @P@_count(out);
    (void)in;
    for (i = 0u; i < n; i++) {
        const uint32_t to = @P@_offset(out, i);
        if (size == 4u) {
            out->data.mem.pi32[to] = cfg->value;
        } else if (size == 2u) {
            out->data.mem.pi16[to] = (int16_t)cfg->value;
        } else {
            out->data.mem.pi8[to] = (int8_t)cfg->value;
        }
    }
    return MLI_STATUS_OK;
}
""",
        run=_run,
    )
)

ZERO_TYPES = ("int8", "int16", "int32", "float32")


def zeros_of_known_type(s: Subject):
    """ZEROS_LIKE of {dtype} (fallback C fills int8, int16, int32 and float32 tensors)"""
    dtype = s.output.dtype
    return _OK if dtype in ZERO_TYPES else {"dtype": dtype}


def stored_zero(t: ir.Tensor, m: MliTensor) -> int:
    """TFLite's zero of `t` as a stored value of its MLI tensor `m`."""
    if m.el_type == ElType.SA32:
        return 0
    real = 0.0
    if t.dtype in ("int8", "int16") and t.quant is not None:  # the stored 0's real value
        real = float(t.quant.dequantize(np.zeros(1, t.dtype)).reshape(-1)[0])
    if m.el_type.is_sa:
        q = Q.int_quantize(np.float64(real), float(m.real_scale()[0]), int(m.zero_point[0]), 8)
        return int(np.asarray(q[0]).reshape(-1)[0])
    return int(np.asarray(Q.fx_quantize(real, int(m.frac_bits), m.el_type.bits)[0]).reshape(-1)[0])


def lower_zeros_like(b: Builder, op: ir.Op, fmt: str) -> None:
    x = b.use(op, op.inputs[0], b.el_of(op.inputs[0], fmt))
    t = b.g.tensors[op.outputs[0]]
    out = b.produce(op.outputs[0], b.el_of(op.outputs[0], fmt))
    value = stored_zero(t, out)
    b.fallback(
        op,
        FILL_VALUE,
        [x],
        [out.name],
        cfg={"value": value},
        notes=[f"ZEROS_LIKE not folded: fallback C writes the stored value {value}"],
    )
