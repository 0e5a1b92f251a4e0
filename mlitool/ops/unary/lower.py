"""The element-wise unary ops lowered onto the `lut8` fallback C: a 256-entry table of TFLite's int8
results, computed by the tflite-mode kernel itself."""

from __future__ import annotations

from mlitool import ir
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.types import ElType
from mlitool.ops.common.fallback_checks import fallback_int8, fallback_needs_mli2, sa8_params
from mlitool.ops.unary import c_kernel as lut
from mlitool.ops.unary.table import Unary

SA8 = ElType.SA8


# --- checks ----------------------------------------------------------------------------------


def fallback_unary_int8(s: Subject):
    """fallback C runs {op} on int8 tensors only, through a 256-entry table (an int16 table
    would take 65536 entries, 128 KiB of flash); tensor {name!r} is {dtype}"""
    found = fallback_int8(s)
    return found if found is _OK else {**found, "op": s.op.type}


UNARY_CHECKS = (fallback_needs_mli2, fallback_unary_int8)


# --- lowering --------------------------------------------------------------------------------


def lower_unary_lut(u: Unary):
    """The lowering of int8 element-wise unary op `u`: TFLite's result for each of the 256
    inputs, in a table (`lut8`)."""

    def lower_lut(b: Builder, op: ir.Op, fmt: str) -> None:
        lower_table(b, op, u)

    return lower_lut


def lower_table(b: Builder, op: ir.Op, u: Unary) -> None:
    """`op` as a `lut8` layer: the table of `u`'s TFLite results over -128..127."""
    in_idx, out_idx = op.inputs[0], op.outputs[0]
    x = b.use(op, in_idx, SA8)
    out = b.produce(out_idx, SA8)
    # An int8 model's table is TFLite's int8 arithmetic; a float model's, its real function.
    tflite = b.g.tensors[in_idx].dtype == "int8"
    qin, qout = sa8_params(b, op, in_idx), sa8_params(b, op, out_idx)
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
