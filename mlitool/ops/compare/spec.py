"""OpSpecs of the comparisons (GREATER, GREATER_EQUAL, LESS, LESS_EQUAL, EQUAL, NOT_EQUAL: bool
output) and SELECT / SELECT_V2: no MLI kernel, lowered onto the `compare8` / `select8` fallback
C (`lower.py`, `c_kernel.py`), run by the executors with TFLite's arithmetic
(`reference.py`)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from mlitool import ir
from mlitool.ops.common.register import fallback_op
from mlitool.ops.compare import lower as FC
from mlitool.ops.compare import reference as X
from mlitool.ops.integer import lower as IL
from mlitool.ops.integer.dispatch import checks_or, int32_or
from mlitool.ops.spec import CONVERT
from mlitool.tflite import validate_ops as V


def compare_types(g: ir.Graph, op: ir.Op) -> Iterator[V.Problem]:
    """Both operands of one type (TFLite's Prepare), a bool output, broadcast shapes."""
    a, b, out = g.slot(op, "input"), g.slot(op, "input2"), g.tensors[op.outputs[0]]
    if a.dtype != b.dtype:
        yield V.Problem(f"has type {b.dtype}, the op's input {a.dtype}", op, b)
    elif out.dtype != "bool":
        yield V.Problem(f"has type {out.dtype}, the op writes bool", op, out)
    else:
        yield from V.eltwise_shapes(g, op)


def select_shapes(g: ir.Graph, op: ir.Op) -> Iterator[V.Problem]:
    """A bool condition; SELECT: x and y of one shape, the condition of theirs, rank 1 along
    their first dimension or a scalar; SELECT_V2: the three broadcast."""
    cond, x, y = (g.tensors[i] for i in op.inputs[:3])
    out = g.tensors[op.outputs[0]]
    if cond.dtype != "bool":
        yield V.Problem(f"has type {cond.dtype}, the condition must be bool", op, cond)
        return
    if op.type == "SELECT":
        low = cond.shape == () or (len(cond.shape) == 1 and x.shape[:1] == cond.shape)
        if x.shape != y.shape or not (cond.shape == x.shape or low):
            yield V.Problem(
                f"condition {list(cond.shape)} does not select between x {list(x.shape)} and "
                f"y {list(y.shape)}",
                op,
                cond,
            )
            return
        want = tuple(x.shape)
    else:
        try:
            want = np.broadcast_shapes(cond.shape, x.shape, y.shape)
        except ValueError:
            yield V.Problem(
                f"cannot broadcast {list(cond.shape)}, {list(x.shape)} and {list(y.shape)}",
                op,
                cond,
            )
            return
    if tuple(out.shape) != want:
        yield V.Problem(
            f"has shape {list(out.shape)}, but the op computes {list(want)}", op, out, computed=want
        )


# Each comparison with its code in mlitool.ops.compare.reference.CODES (the fallback C's switch).
for _name, _code in (
    ("EQUAL", 0),
    ("NOT_EQUAL", 1),
    ("GREATER", 2),
    ("GREATER_EQUAL", 3),
    ("LESS", 4),
    ("LESS_EQUAL", 5),
):
    fallback_op(
        _name,
        ("input", "input2"),
        options="".join(w.capitalize() for w in _name.split("_")) + "Options",
        types=CONVERT,
        shapes=compare_types,
        checks=checks_or(FC.COMPARE_CHECKS, IL.CHECKS),
        bools=True,
        int32=True,  # int32 operands: the `integer` family's fallback C
        leading_dims=True,  # element-wise: a leading dimension other than 1 is rows
        lower=int32_or(FC.comparison(_code), IL.lower_binary32),
        run=(X.float_compare(_name, _code), X.tflite_compare(_name, _code)),
    )
for _name, _options in (("SELECT", "SelectOptions"), ("SELECT_V2", "SelectV2Options")):
    fallback_op(
        _name,
        ("condition", "input", "input2"),
        options=_options,
        all_data=True,
        shapes=select_shapes,
        checks=checks_or(FC.SELECT_CHECKS, IL.CHECKS),
        bools=True,
        int32=True,
        leading_dims=True,
        lower=int32_or(FC.lower_select, IL.lower_select32),
        run=(X.select, X.select),
    )
