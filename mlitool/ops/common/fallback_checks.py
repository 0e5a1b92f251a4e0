"""What every op lowered onto fallback C shares: the support checks (MLI 2.x tensors, int8
activations) and the SA8 parameters the fallback lowerings compute with."""

from __future__ import annotations

from mlitool import ir
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.types import ElType

SA8 = ElType.SA8


# --- checks ----------------------------------------------------------------------------------


def fallback_needs_mli2(s: Subject):
    """no MLI kernel; mlitool's fallback C for it needs MLI 2.x tensors (convert with --mli 2.0)"""
    return _OK if s.target.offers("fallback") else {}


def fallback_int8(s: Subject):
    """fallback C runs this op on int8 tensors only; tensor {name!r} is {dtype}"""
    for i in (*s.op.inputs, *s.op.outputs):
        t = s.graph.tensors[i] if i >= 0 else None
        if t is not None and t.data is None and t.dtype not in ("int8", "float32"):
            return {"name": t.name or f"#{i}", "dtype": t.dtype}
    return _OK


def fallback_int8_or_int16(s: Subject):
    """fallback C runs this op on int8 or int16 (16x8) tensors only; tensor {name!r} is {dtype}"""
    for i in (*s.op.inputs, *s.op.outputs):
        t = s.graph.tensors[i] if i >= 0 else None
        if t is not None and t.data is None and t.dtype not in ("int8", "int16", "float32"):
            return {"name": t.name or f"#{i}", "dtype": t.dtype}
    return _OK


def int16_operands_variable(s: Subject):
    """int16 operand {name!r} is a constant: the int16 fallback C takes activations only"""
    if s.output.dtype == "int16":
        for t in (s.input(0), s.input(1)):
            if t.data is not None:
                return {"name": t.name}
    return _OK


CHECKS = (fallback_needs_mli2, fallback_int8)
CHECKS16 = (fallback_needs_mli2, fallback_int8_or_int16, int16_operands_variable)


# --- lowering --------------------------------------------------------------------------------


def sa8_params(b: Builder, op: ir.Op, idx: int) -> tuple[float, int]:
    p = b.sa_params(idx)
    if p is None:  # weights-only conversion of a float model: placeholders, as for any layer
        return 1.0, 0
    return p
