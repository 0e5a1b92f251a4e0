"""The support checks of each op: named checks whose docstring is the refusal.

A check takes a `Subject` (graph, op, MLI version, layout) and returns None when the op passes,
else the fields its docstring's first paragraph is formatted with: that text is the message.
An op's OpSpec lists its checks in order (mlitool/ops/); support.py runs the common checks
then those, and reports the first refusal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mlitool import ir
from mlitool.mli.lower.facts import (
    layer_kind,
)
from mlitool.mli.target import Target


@dataclass(frozen=True)
class Subject:
    graph: ir.Graph
    op: ir.Op
    target: Target
    layout: str

    def input(self, slot: int | str) -> ir.Tensor:
        """The tensor in input slot `slot` (an index, or a name of the op's OpSpec)."""
        return self.graph.tensors[
            self.op.input(slot) if isinstance(slot, str) else self.op.inputs[slot]
        ]

    @property
    def output(self) -> ir.Tensor:
        return self.graph.tensors[self.op.outputs[0]]


Check = Callable[[Subject], "dict | None"]
TensorCheck = Callable[[Subject, ir.Tensor], "dict | None"]
_OK = None


def message(check: Callable, **fields) -> str:
    """The refusal text of `check`: its docstring's first paragraph, formatted with `fields`."""
    text = check.__doc__.split("\n\n")[0]
    return " ".join(text.split()).format(**fields)


# --- MLI 1.x -------------------------------------------------------------------------------


def kernel_needs_mli2(s: Subject):
    """{kind} has no MLI {version} kernel (MLI 2.x has one)"""
    kind = layer_kind(s.graph, s.op)
    if not s.target.offers(kind) and kind in (
        "group_conv2d",
        "prelu",
        "l2_normalize",
        "argmax",
        "transpose_conv2d",
    ):
        return {"kind": kind, "version": s.target.version}
    return _OK


def float_needs_mli2(s: Subject):
    """MLI {version} has no float tensors (QUANTIZE/DEQUANTIZE of float data)"""
    tensors = [s.graph.tensors[i] for i in s.op.inputs[:1] + s.op.outputs]
    if not s.target.float_tensors and any(t.dtype == "float32" for t in tensors):
        return {"version": s.target.version}
    return _OK


# --- MAC layers ----------------------------------------------------------------------------


# --- element-wise, activations, pooling ----------------------------------------------------


def _broadcast(s: Subject) -> tuple | None:
    """The broadcast shape of an element-wise op's operands when one must be expanded (None:
    equal shapes or a scalar, which MLI takes as they are)."""
    a, b = s.input("input"), s.input("input2")
    if a.shape == b.shape or a.size == 1 or b.size == 1:
        return None
    return tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))


def one_operand_variable(s: Subject):
    """both operands are constant"""
    return {} if s.input("input").data is not None and s.input("input2").data is not None else _OK


def operands_broadcast(s: Subject):
    """shapes {a} and {b} do not broadcast"""
    try:
        _broadcast(s)
    except ValueError:
        return {"a": list(s.input("input").shape), "b": list(s.input("input2").shape)}
    return _OK


def _broadcast_activation(s: Subject) -> ir.Tensor | None:
    """The activation operand that broadcasts to the output's shape (a constant one is
    materialized at the output's shape instead)."""
    full = _broadcast(s)
    return next(
        (
            t
            for t in (s.input("input"), s.input("input2"))
            if full is not None and t.data is None and tuple(t.shape) != full
        ),
        None,
    )


def broadcast_needs_mli2(s: Subject):
    """activation {name!r} {shape} broadcasts to {full}: MLI's element-wise kernels take equal
    shapes or a scalar, so mlitool calls the kernel once per slice, through views whose data
    pointers the runtime moves; that is done for MLI 2.x only (convert with --mli 2.0)"""
    t = _broadcast_activation(s)
    if t is None or s.target.strided_views:
        return _OK
    return {"name": t.name, "shape": list(t.shape), "full": list(_broadcast(s))}


def broadcast_against_activation(s: Subject):
    """activation {name!r} {shape} broadcasts against the constant {const!r}: the kernel is
    called once per slice of both operands, and the runtime moves views of activations only

    A constant that broadcasts is materialized at the output's shape; an activation that
    broadcasts is taken slice by slice (`mlitool.mli.lower.broadcast`); against a constant, on
    MLI 2.x with int8 or float activations, the op runs as fallback C (`eltwise_fallback`)."""
    t = _broadcast_activation(s)
    other = s.input("input2") if t is s.input("input") else s.input("input")
    if t is None or other.data is None or other.size == 1 or eltwise_fallback(s):
        return _OK
    return {"name": t.name, "shape": list(t.shape), "const": other.name}


def eltwise_fallback(s: Subject) -> bool:
    """mlitool's fallback C (binary8) takes any broadcast: MLI 2.x, int8 or float activations."""
    acts = [s.graph.tensors[i] for i in (*s.op.inputs[:2], *s.op.outputs)]
    ok = all(t.dtype in ("int8", "float32") for t in acts if t.data is None)
    return ok and s.target.offers("fallback")


def output_broadcast_shape(s: Subject):
    """output shape {out} is not the broadcast shape {full}"""
    full = _broadcast(s)
    if full is not None and tuple(s.output.shape) != full:
        return {"out": list(s.output.shape), "full": list(full)}
    return _OK


# --- data movement -------------------------------------------------------------------------
