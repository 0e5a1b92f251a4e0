"""ARG_MIN as an MLI composition: MLI has an argmax kernel only. The int8 complement ~v = -1 - v
reverses the order of the 256 int8 values without a tie between two of them (a negation would
saturate -128 and -127 to 127), so argmin(x) = argmax(~x) with the same ties: a 256-entry table
(`lut8` fallback C, on int8 values in any format) then ARG_MAX's lowering in sa8."""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.types import ElType
from mlitool.ops.movement import lower as movement
from mlitool.ops.unary import c_kernel as lut


def arg_min_input_int8(s: Subject):
    """ARG_MIN is lowered on int8 values only (a 256-entry table complements them before MLI's
    argmax); its input {name!r} is {dtype}"""
    t = s.input(0)
    return _OK if t.dtype in ("int8", "float32") else {"name": t.name, "dtype": t.dtype}


def lower_arg_min(b: Builder, op: ir.Op, fmt: str) -> None:
    x = b.use(op, op.inputs[0], ElType.SA8)
    src = b.tensors[x]
    flipped = b.derived(
        src,
        f"{x}_complement",
        buffer=None,
        offset=0,
        capacity=None,
        notes=["-1 - x: the order of the int8 values reversed (ARG_MIN = argmax of it)"],
    )
    table = np.arange(-128, 128, dtype=np.int16)
    table = b.sa_constant(
        f"{flipped.name}_table",
        ElType.SA8,
        (-1 - table).astype(np.int8),
        notes=["-1 - x of every int8 x"],
    )
    b.fallback(
        op,
        lut.LUT8,
        [x],
        [flipped.name],
        params={"table": table},
        notes=["ARG_MIN: the int8 complement (table look-up) before MLI's argmax"],
    )
    # on the sa8 complement whatever the model's format (fx16 converts around the table)
    movement.lower_arg_max(b, op, "sa8", src=flipped.name)
