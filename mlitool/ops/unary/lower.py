"""The element-wise unary ops lowered onto the `lut8` fallback C: a 256-entry table of TFLite's int8
results, computed by the tflite-mode kernel itself."""

from __future__ import annotations

from mlitool import ir
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.types import ElType
from mlitool.ops.common.fallback_checks import fallback_int8, fallback_needs_mli2, sa8_params
from mlitool.ops.unary import c_kernel as lut
from mlitool.ops.unary.functions import abs16_params
from mlitool.ops.unary.table import Unary

SA8, FX16 = ElType.SA8, ElType.FX16


# --- checks ----------------------------------------------------------------------------------


def fallback_unary_int8(s: Subject):
    """fallback C runs {op} on int8 tensors only, through a 256-entry table (an int16 table
    would take 65536 entries, 128 KiB of flash); tensor {name!r} is {dtype}"""
    found = fallback_int8(s)
    return found if found is _OK else {**found, "op": s.op.type}


def fallback_unary_int8_or_int16(s: Subject):
    """fallback C runs {op} on int8 or int16 tensors only; tensor {name!r} is {dtype}"""
    for i in (*s.op.inputs, *s.op.outputs):
        t = s.graph.tensors[i]
        if t.data is None and t.dtype not in ("int8", "int16", "float32"):
            return {"name": t.name or f"#{i}", "dtype": t.dtype, "op": s.op.type}
    return _OK


UNARY_CHECKS = (fallback_needs_mli2, fallback_unary_int8)
UNARY16_CHECKS = (fallback_needs_mli2, fallback_unary_int8_or_int16)


# --- lowering --------------------------------------------------------------------------------


def lower_unary_lut(u: Unary):
    """The lowering of int8 element-wise unary op `u`: TFLite's result for each of the 256
    inputs, in a table (`lut8`)."""

    def lower_lut(b: Builder, op: ir.Op, fmt: str) -> None:
        if u.int16 is not None and b.g.tensors[op.inputs[0]].dtype == "int16":
            lower_abs16(b, op)
        else:
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


def lower_abs16(b: Builder, op: ir.Op) -> None:
    """int16 ABS (16x8 models) as an `abs16` layer on FX16 tensors: TFLite's arithmetic with the
    scales 2^-frac_bits (with power-of-two scales in the model, TFLite's integers)."""
    x = b.use(op, op.inputs[0], FX16)
    out = b.produce(op.outputs[0], FX16)
    rescale, mult, shift = abs16_params(2.0 ** -b.tensors[x].frac_bits, 2.0**-out.frac_bits)
    b.fallback(
        op,
        lut.ABS16,
        [x],
        [out.name],
        cfg={"rescale": rescale, "multiplier": mult, "shift": shift},
        notes=["no MLI kernel for int16 ABS: fallback C (|x| rescaled as TFLite's int16 ABS)"],
    )
