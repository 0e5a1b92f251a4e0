"""Ops MLI has no kernel for, lowered onto fallback kernels (`mlitool.fallback`): layers of kind
"fallback" over SA8 tensors, every number computed here from the model's quantization exactly
as the tflite execution mode computes it. In FX formats `Builder.use` / the consumers insert the
conversions around them (mli_hlp_convert_tensor), as for any change of format.
"""

from __future__ import annotations

from mlitool import ir
from mlitool.execute.unary import Unary
from mlitool.fallback import lut
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.types import ElType

SA8 = ElType.SA8


# --- checks ----------------------------------------------------------------------------------


def fallback_needs_mli2(s: Subject):
    """no MLI kernel; mlitool's fallback C for it needs MLI 2.x tensors (convert with --mli 2.0)"""
    return _OK if s.target.offers("fallback") else {}


def fallback_int8(s: Subject):
    """fallback C runs this op on int8 tensors only; tensor {name!r} is {dtype}"""
    for i in (*s.op.inputs, *s.op.outputs):
        t = s.graph.tensors[i] if i >= 0 else None
        if t is not None and t.data is None and t.dtype not in ("int8", "float32"):
            return {"name": t.name or f"#{i}", "dtype": t.dtype}
    return _OK


def fallback_unary_int8(s: Subject):
    """fallback C runs {op} on int8 tensors only, through a 256-entry table (an int16 table
    would take 65536 entries, 128 KiB of flash); tensor {name!r} is {dtype}"""
    found = fallback_int8(s)
    return found if found is _OK else {**found, "op": s.op.type}


CHECKS = (fallback_needs_mli2, fallback_int8)
UNARY_CHECKS = (fallback_needs_mli2, fallback_unary_int8)


# --- lowering --------------------------------------------------------------------------------


def _sa8_params(b: Builder, op: ir.Op, idx: int) -> tuple[float, int]:
    p = b.sa_params(idx)
    if p is None:  # weights-only conversion of a float model: placeholders, as for any layer
        return 1.0, 0
    return p


def lower_unary_lut(u: Unary):
    """The lowering of int8 element-wise unary op `u`: TFLite's result for each of the 256
    inputs, in a table (`lut8`)."""

    def lower_lut(b: Builder, op: ir.Op, fmt: str) -> None:
        _lower_lut(b, op, u)

    return lower_lut


def _lower_lut(b: Builder, op: ir.Op, u: Unary) -> None:
    in_idx, out_idx = op.inputs[0], op.outputs[0]
    x = b.use(op, in_idx, SA8)
    out = b.produce(out_idx, SA8)
    # An int8 model's table is TFLite's int8 arithmetic; a float model's, its real function.
    tflite = b.g.tensors[in_idx].dtype == "int8"
    qin, qout = _sa8_params(b, op, in_idx), _sa8_params(b, op, out_idx)
    fn = u.int8_function(op, qin, qout, tflite=tflite)
    note = f"{op.type} of every int8 input -128..127, as TFLite computes it"
    table = b.sa_constant(f"{out.name}_table", SA8, lut.table_of(fn), notes=[note])
    b.fallback(
        op,
        lut.LUT8,
        [x],
        [out.name],
        params={"table": table},
        notes=[f"no MLI kernel for {op.type}: fallback C (table look-up, 256 bytes)"],
    )
