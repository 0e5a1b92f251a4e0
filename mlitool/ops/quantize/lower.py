"""QUANTIZE and DEQUANTIZE lowered onto `mli_hlp_convert_tensor` (a float side stays float only on
MLI 2.x)."""

from __future__ import annotations

from mlitool import ir
from mlitool.mli.lower.builder import Builder, act_el
from mlitool.mli.types import ElType


def lower_quantize(b: Builder, op: ir.Op, fmt: str) -> None:
    """QUANTIZE, DEQUANTIZE: a convert between the float and the quantized tensor."""
    el = act_el(fmt)
    i_t, o_t = b.g.tensors[op.inputs[0]], b.g.tensors[op.outputs[0]]
    in_el = ElType.FP32 if i_t.dtype == "float32" else el
    out_el = ElType.FP32 if o_t.dtype == "float32" else el
    if i_t.dtype == "float32" and o_t.dtype == "float32":
        in_el = out_el = el
    x = b.use(op, op.inputs[0], in_el)
    out = b.produce(op.outputs[0], out_el)
    b.layer(op, "convert", fmt, [x], [out.name])
