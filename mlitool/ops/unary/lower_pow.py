"""Lowering of POW with a constant exponent of one value, and of FLOOR_DIV / FLOOR_MOD by a
constant divisor of one value: the function of every int8 input in a 256-entry table (`lut8`),
as for the unary ops (`fallback.lower_lut`)."""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.ops.unary import lower as FB
from mlitool.ops.unary.float_math import divisor_unary
from mlitool.ops.unary.power import pow_real
from mlitool.ops.unary.table import Unary


def _exponent(graph: ir.Graph, op: ir.Op) -> np.ndarray | None:
    t = graph.tensor(op.inputs[1]) if len(op.inputs) > 1 else None
    return None if t is None or t.data is None else np.asarray(t.data).reshape(-1)


def pow_exponent_constant(s: Subject):
    """POW is lowered only with a constant exponent of one value (a 256-entry table of x ** e)"""
    e = _exponent(s.graph, s.op)
    return _OK if e is not None and e.size == 1 else {}


CHECKS = (*FB.UNARY_CHECKS, pow_exponent_constant)


def lower_pow(b: Builder, op: ir.Op, fmt: str) -> None:
    e = np.float32(_exponent(b.g, op)[0])
    FB.lower_table(b, op, Unary("POW", lambda x: pow_real(x, e)))


def divisor_constant(s: Subject):
    """{op} is lowered only with a constant divisor of one value as its second input (a
    256-entry table of the first input)"""
    d = _exponent(s.graph, s.op)
    return _OK if d is not None and d.size == 1 else {"op": s.op.type}


DIVISOR_CHECKS = (*FB.UNARY_CHECKS, divisor_constant)


def lower_by_constant(b: Builder, op: ir.Op, fmt: str) -> None:
    """FLOOR_DIV / FLOOR_MOD by a constant: the table of the float32 function of the input."""
    FB.lower_table(b, op, divisor_unary(op, float(_exponent(b.g, op)[0])))
