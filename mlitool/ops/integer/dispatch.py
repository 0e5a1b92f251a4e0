"""How an op of another family takes this family's int32 path: where it reads or writes an
int32 tensor (or an ARG_MAX / ARG_MIN's int64 indices), its lowering, support checks and
kernels are the int32 ones; otherwise its own. The family's OpSpec names both
(`int32_or`, `checks_or`) and sets `int32=True`."""

from __future__ import annotations

import functools
from collections.abc import Callable

from mlitool import ir
from mlitool.mli.lower.checks import _OK, Subject

INTEGER = ("int32", "int64")


def on_int32(g: ir.Graph, op: ir.Op) -> bool:
    """Whether `op` reads an int32 / int64 activation or writes an int32 / int64 tensor."""
    ins = [g.tensors[i] for i in op.inputs if i >= 0 and g.tensors[i].data is None]
    outs = [g.tensors[i] for i in op.outputs]
    return any(t.dtype in INTEGER for t in ins + outs)


def int32_or(own: Callable | None, int32: Callable, when: Callable = on_int32) -> Callable:
    """A lowering `(builder, op, fmt)` or kernel `(call)`: `int32` where `when(graph, op)` (on
    int32 operands), else `own`."""

    @functools.wraps(own if own is not None else int32)
    def either(*args):
        first = args[0]
        g, op = (first.g, args[1]) if len(args) == 3 else (first.graph, first.op)
        if own is None or when(g, op):
            return int32(*args)
        return own(*args)

    return either


def _only(check: Callable, when: Callable, taken: bool) -> Callable:
    @functools.wraps(check)
    def guarded(s: Subject):
        return check(s) if bool(when(s.graph, s.op)) == taken else _OK

    return guarded


def checks_or(
    own: tuple[Callable, ...], int32: tuple[Callable, ...], when: Callable = on_int32
) -> tuple[Callable, ...]:
    """Support checks: `own` where `when(graph, op)` does not hold (the op is not on int32
    operands), `int32` where it does."""
    return tuple(_only(c, when, False) for c in own) + tuple(_only(c, when, True) for c in int32)


def cast_through_int32(g: ir.Graph, op: ir.Op) -> bool:
    """Whether a CAST runs on `cast32`: every CAST but bool to float32 / int8 (`select8` of the
    two values, the shape family's)."""
    src, dst = g.tensors[op.inputs[0]].dtype, g.tensors[op.outputs[0]].dtype
    return not (src == "bool" and dst in ("float32", "int8"))
