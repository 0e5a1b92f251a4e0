"""LOG_SOFTMAX onto the `log_softmax8` fallback C: TFLite's int8 arithmetic over the last axis,
its numbers computed here by `mlitool.ops.log_softmax.reference.prepare` from the input scale, as
TFLite's Prepare() does. The kernel writes TFLite's fixed output parameters (scale 16/256, zero
point 127); where the model wants others (a calibrated float model) a convert follows.
"""

from __future__ import annotations

from mlitool import ir
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.types import ElType
from mlitool.ops.common import fallback_checks as FB
from mlitool.ops.log_softmax import reference as LX
from mlitool.ops.log_softmax.c_kernel import CFG, LOG_SOFTMAX8

SA8 = ElType.SA8


# --- checks ----------------------------------------------------------------------------------


def log_softmax_int8(s: Subject):
    """fallback C runs LOG_SOFTMAX on int8 tensors only{why}; tensor {name!r} is {dtype}"""
    for i in (s.op.inputs[0], s.op.outputs[0]):
        t = s.graph.tensors[i]
        if t.dtype not in ("int8", "float32"):
            why = " (TFLite has no int16 LOG_SOFTMAX kernel)" if t.dtype == "int16" else ""
            return {"name": t.name or f"#{i}", "dtype": t.dtype, "why": why}
    return _OK


def log_softmax_params(s: Subject):
    """int8 LOG_SOFTMAX needs what TFLite's Prepare requires: {what}"""
    x, out = s.input(0), s.output
    if x.dtype != "int8" or out.quant is None or x.quant is None:
        return _OK
    so, zo = float(out.quant.scale[0]), int(out.quant.zero_point[0])
    if (so, zo) != (LX.OUT_SCALE, LX.OUT_ZP):
        return {"what": f"output scale 16/256 and zero point 127, not {so!r} and {zo}"}
    if not float(x.quant.scale[0]) * 2.0 ** (31 - LX.INPUT_BITS) > 1.0:
        return {"what": f"an input scale above 2^-26, not {float(x.quant.scale[0])!r}"}
    return _OK


def log_softmax_depth(s: Subject):
    """{reason}"""
    shape = s.input(0).shape
    if not shape:
        return {"reason": "LOG_SOFTMAX of a scalar: no last axis"}
    if shape[-1] > LX.MAX_DEPTH:
        return {"reason": LX.depth_reason(shape[-1])}
    return _OK


CHECKS = (FB.fallback_needs_mli2, log_softmax_int8, log_softmax_params, log_softmax_depth)


# --- lowering --------------------------------------------------------------------------------


def lower_log_softmax(b: Builder, op: ir.Op, fmt: str) -> None:
    """One `log_softmax8` layer over SA8 tensors, then a convert where the model's output
    parameters are not TFLite's fixed ones."""
    in_idx = op.inputs[0]
    x = b.use(op, in_idx, SA8)
    scale, _ = FB.sa8_params(b, op, in_idx)
    p = LX.prepare(scale)
    kout, pending = b.kernel_output(
        op, op.outputs[0], SA8, lambda t: b.set_sa(t, LX.OUT_SCALE, LX.OUT_ZP)
    )
    b.fallback(
        op,
        LOG_SOFTMAX8,
        [x],
        [kout],
        cfg={k: getattr(p, k) for k in CFG},
        notes=[
            "no MLI kernel for LOG_SOFTMAX: fallback C (TFLite's integer arithmetic over the "
            f"last axis: differences times {p.multiplier} * 2^{p.shift - 31} in Q5.26, "
            "exp and log in fixed point; output scale 16/256, zero point 127)"
        ],
    )
    b.finish(op, pending, "LOG_SOFTMAX writes TFLite's fixed output parameters")
