"""QUANTIZE and DEQUANTIZE lowered onto `mli_hlp_convert_tensor` (a float side stays float only on
MLI 2.x); in a QDQ file, a pair's float side is quantized with the pair's parameters
(`passes.qdq`): the op then changes nothing, and its output is its input's MLI tensor."""

from __future__ import annotations

from mlitool import ir
from mlitool.mli.lower.builder import Builder, act_el
from mlitool.mli.lower.params import same_params
from mlitool.mli.types import ElType


def lower_quantize(b: Builder, op: ir.Op, fmt: str) -> None:
    """QUANTIZE, DEQUANTIZE: a convert between the float and the quantized tensor."""
    el = act_el(fmt)
    i_t, o_t = b.g.tensors[op.inputs[0]], b.g.tensors[op.outputs[0]]
    in_el = ElType.FP32 if i_t.dtype == "float32" and i_t.qdq is None else el
    out_el = ElType.FP32 if o_t.dtype == "float32" and o_t.qdq is None else el
    if i_t.dtype == "float32" and o_t.dtype == "float32":
        in_el = out_el = el
    x = b.use(op, op.inputs[0], in_el)
    if _qdq(i_t, o_t) and op.outputs[0] not in b.g.outputs:
        same = b.new_act(op.outputs[0], out_el)
        if same_params(b.tensors[x], same):  # the same numbers: no layer, no tensor
            b.primary[op.outputs[0]] = x
            return
    out = b.produce(op.outputs[0], out_el)
    b.layer(op, "convert", fmt, [x], [out.name])


def _qdq(i_t: ir.Tensor, o_t: ir.Tensor) -> bool:
    return i_t.qdq is not None or o_t.qdq is not None
