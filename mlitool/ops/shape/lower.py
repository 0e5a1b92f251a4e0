"""PACK lowered as an MLI concatenation of its inputs, each viewed with the new axis."""

from __future__ import annotations

from mlitool import ir
from mlitool.mli.lower.builder import Builder
from mlitool.ops.movement import concat

# --- checks ----------------------------------------------------------------------------------


# --- shared steps ----------------------------------------------------------------------------


# --- lowerings -------------------------------------------------------------------------------


def lower_pack(b: Builder, op: ir.Op, fmt: str) -> None:
    """PACK: each input viewed with the new axis of size 1, concatenated along it."""
    el = b.el_of(op.outputs[0], fmt)
    out = b.produce(op.outputs[0], el)
    axis = b.mli_axis(
        int(op.options.get("axis", 0)), len(b.g.tensors[op.outputs[0]].shape), out.rank
    )
    piece = tuple(1 if d == axis else n for d, n in enumerate(out.shape))
    ins = [
        b.dense_view(op, fmt, b.use(op, i, el), piece, "PACK input with the new axis")
        for i in op.inputs
    ]
    concat._concat(b, op, fmt, out, out, ins)
