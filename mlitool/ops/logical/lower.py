"""Lowerings of the bool ops: LOGICAL_AND / OR / NOT onto the `logic8` fallback C, REDUCE_ALL
onto the reductions' `reduce8` as the minimum of bool bytes (all of 0/1 values is their
minimum; equal parameters, so no rescale)."""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.facts import axis_list
from mlitool.mli.types import ElType, MliTensor
from mlitool.ops.compare.lower import BOOL_NOTE
from mlitool.ops.logical.c_kernel import LOGIC8
from mlitool.ops.logical.reference import CODES
from mlitool.ops.reduce import c_kernel as R

SA8 = ElType.SA8


def _bool(t: MliTensor) -> MliTensor:
    t.notes = [BOOL_NOTE]
    return t


def _operand(b: Builder, op: ir.Op, idx: int) -> str:
    """A bool operand as SA8 bytes (scale 1, zero point 0): an activation, or a constant."""
    t = b.g.tensors[idx]
    if t.data is None:
        name = b.use(op, idx, SA8)
        b.set_sa(b.tensors[name], 1.0, 0)
        _bool(b.tensors[name])
        return name
    shape, rank = tuple(t.shape), len(b.mli_shape(b.g.tensors[op.outputs[0]].shape))
    while len(shape) > rank and shape[0] == 1:  # right-aligned: leading 1s beyond the output go
        shape = shape[1:]
    data = np.asarray(t.data, np.int8).reshape(shape)
    return b.sa_constant(b.base(idx), SA8, data, (1.0, 0), [BOOL_NOTE], t)


def _output(b: Builder, op: ir.Op) -> MliTensor:
    out = b.produce(op.outputs[0], SA8)
    b.set_sa(out, 1.0, 0)
    return _bool(out)


def lower_logical(b: Builder, op: ir.Op, fmt: str) -> None:
    a = _operand(b, op, op.inputs[0])
    c = a if op.type == "LOGICAL_NOT" else _operand(b, op, op.inputs[1])
    out = _output(b, op)
    b.fallback(
        op,
        LOGIC8,
        [a, c],
        [out.name],
        cfg={"op": CODES[op.type]},
        notes=[f"no MLI kernel for {op.type}: fallback C over bool bytes"],
    )


def lower_reduce_all(b: Builder, op: ir.Op, fmt: str) -> None:
    x = _operand(b, op, op.inputs[0])
    out = _output(b, op)
    rank = len(b.g.tensors[op.inputs[0]].shape)
    mask = 0
    for a in axis_list(b.g, op):
        a %= max(rank, 1)
        if rank < 2 or a > 0:  # the batch axis (size 1) is no MLI dimension
            mask |= 1 << b.mli_axis(a, rank, len(b.tensors[x].shape))
    cfg = dict.fromkeys(R.CFG, 0) | {"mode": R.MODE["min"], "axes": mask}
    b.fallback(
        op,
        R.REDUCE8,
        [x],
        [out.name],
        cfg=cfg,
        notes=["no MLI kernel for REDUCE_ALL: fallback C (the minimum of bool bytes)"],
    )
