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


def int32_or(own: Callable | None, int32: Callable) -> Callable:
    """A lowering `(builder, op, fmt)` or kernel `(call)`: `int32` on int32 operands, else `own`."""

    @functools.wraps(own if own is not None else int32)
    def either(*args):
        first = args[0]
        g, op = (first.g, args[1]) if len(args) == 3 else (first.graph, first.op)
        if on_int32(g, op) or own is None:
            return int32(*args)
        return own(*args)

    return either


def _only(check: Callable, when_int32: bool) -> Callable:
    @functools.wraps(check)
    def guarded(s: Subject):
        return check(s) if on_int32(s.graph, s.op) == when_int32 else _OK

    return guarded


def checks_or(own: tuple[Callable, ...], int32: tuple[Callable, ...]) -> tuple[Callable, ...]:
    """Support checks: `own` where the op is not on int32 operands, `int32` where it is."""
    return tuple(_only(c, False) for c in own) + tuple(_only(c, True) for c in int32)
