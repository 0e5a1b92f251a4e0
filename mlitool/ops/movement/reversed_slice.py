"""STRIDED_SLICE with a negative stride (`x[:, ::-2]`): MLI's views and copies step forward only,
so it is lowered onto the `gather4` fallback C of the index gathers (its selection is one index
vector per axis, read off the slice's own kernel); a forward one stays a view or an mli_mov."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from mlitool import ir
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.lower.facts import const_values
from mlitool.ops.gather import lower as GL
from mlitool.ops.movement import lower as movement


def reverses(graph: ir.Graph, op: ir.Op) -> bool:
    """A STRIDED_SLICE whose constant strides step backward on some axis."""
    if op.type != "STRIDED_SLICE" or len(op.inputs) < 4:
        return False
    strides = const_values(graph, op.inputs[3])
    return strides is not None and bool(np.any(np.asarray(strides) < 0))


def forward_only(check: Callable) -> Callable:
    """`check` for a forward slice; a reversed one passes it (the gather checks apply)."""

    def run(s: Subject):
        return _OK if reverses(s.graph, s.op) else check(s)

    run.__doc__, run.__name__ = check.__doc__, check.__name__
    return run


def reversed_only(check: Callable) -> Callable:
    """`check` for a reversed slice (lowered onto gather4); a forward one passes it."""

    def run(s: Subject):
        return check(s) if reverses(s.graph, s.op) else _OK

    run.__doc__, run.__name__ = check.__doc__, check.__name__
    return run


def no_new_axes(s: Subject):
    """STRIDED_SLICE with a negative stride and an ellipsis_mask or new_axis_mask"""
    o = s.op.options
    return {} if o.get("ellipsis_mask", 0) or o.get("new_axis_mask", 0) else _OK


REVERSED_CHECKS = tuple(reversed_only(c) for c in (*GL.CHECKS, no_new_axes))


def lower_strided_slice(b: Builder, op: ir.Op, fmt: str) -> None:
    if not reverses(b.g, op):
        movement.lower_slice(b, op, fmt)
        return
    # the output seen at the input's rank: a shrunk axis is one of size 1
    shape = list(b.g.tensors[op.outputs[0]].shape)
    shrink = int(op.options.get("shrink_axis_mask", 0))
    for d in range(len(b.g.tensors[op.inputs[0]].shape)):
        if shrink >> d & 1:
            shape.insert(d, 1)
    GL.lower_separable(b, op, fmt, tuple(shape), "slice with a negative stride")
