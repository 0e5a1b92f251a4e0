"""CAST of a bool tensor onto the `select8` fallback C: each byte picks one of two constants,
the values TFLite's CAST writes (1 and 0) in the output's MLI parameters (a float output's, as
mlitool quantizes it; an int8 output holds the raw 1 and 0, as TFLite's CAST ignores its
quantization). Other casts move between types MLI tensors do not hold (int32) or have no
fallback yet (the support check says so)."""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.mli import quant as Q
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.types import ElType
from mlitool.ops.common.fallback_checks import sa8_params
from mlitool.ops.compare.c_kernel import SELECT8
from mlitool.ops.compare.lower import BOOL_NOTE

SA8 = ElType.SA8


def cast_from_bool(s: Subject):
    """CAST from {src} to {dst}: fallback C casts bool to float32 or int8 only"""
    src, dst = s.input(0).dtype, s.output.dtype
    return _OK if src == "bool" and dst in ("float32", "int8") else {"src": src, "dst": dst}


def lower_cast(b: Builder, op: ir.Op, fmt: str) -> None:
    cond = b.use(op, op.inputs[0], SA8)
    b.set_sa(b.tensors[cond], 1.0, 0)
    b.tensors[cond].notes = [BOOL_NOTE]
    out = b.produce(op.outputs[0], SA8)
    t = b.g.tensors[op.outputs[0]]
    if t.dtype == "float32":  # 1.0 and 0.0 in the parameters mlitool gives the output
        q = sa8_params(b, op, op.outputs[0])
        b.set_sa(out, *q)
        one, zero = (int(v) for v in Q.int_quantize(np.array([1.0, 0.0]), *q, 8)[0])
        how = f"1.0 and 0.0 as {one} and {zero}"
    else:  # TFLite writes the raw 1 and 0 whatever the output's parameters
        q = sa8_params(b, op, op.outputs[0]) if t.quant is not None else (1.0, 0)
        b.set_sa(out, *q)
        one, zero, how = 1, 0, "the raw 1 and 0"
    consts = [
        b.sa_constant(f"{out.name}_{name}", SA8, np.array([v], np.int8), q, [f"CAST of {name}"])
        for name, v in (("true", one), ("false", zero))
    ]
    b.fallback(
        op,
        SELECT8,
        [cond, *consts],
        [out.name],
        notes=[f"no MLI kernel for CAST: fallback C picks {how} by each bool byte"],
    )
