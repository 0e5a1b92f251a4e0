"""Comparisons and SELECT / SELECT_V2 of int16 operands (16x8 models) onto `compare16` /
`select16`: the operands stay FX16 (an SA8 detour would lose 8 bits).

TFLite compares int16 operands as the stored integers (LiteRT's GREATER / LESS / EQUAL...:
no rescaling; the converter gives both operands one scale). On FX16 tensors the kernel compares
the values shifted onto common frac bits: with one power-of-two scale in the model that is the
integers TFLite compares. An int16 constant operand takes the frac bits of the operand it meets,
so that its values stay exact where the activation's range holds them. SELECT copies int16
values unchanged, as TFLite does whatever the scales (constants keep their integers).
"""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.mli import quant as Q
from mlitool.mli.lower.builder import Builder
from mlitool.mli.types import ElType, MliTensor, Role
from mlitool.ops.compare import c_kernel as K

FX16, SA8 = ElType.FX16, ElType.SA8


def is_int16(b: Builder, op: ir.Op, slots) -> bool:
    return any(b.g.tensors[op.inputs[i]].dtype == "int16" for i in slots)


def _real(t: ir.Tensor) -> np.ndarray:
    data = np.asarray(t.data, np.float64)
    if t.quant is None:
        return data
    return (data - int(t.quant.zero_point[0])) * float(t.quant.scale[0])


def _constant(b: Builder, op: ir.Op, idx: int, frac_bits: int) -> str:
    """The int16 constant `idx` as an FX16 parameter of `frac_bits`, right-aligned to the
    output's MLI rank (leading 1s beyond it dropped)."""
    t = b.g.tensors[idx]
    shape, rank = tuple(t.shape), len(b.mli_shape(b.g.tensors[op.outputs[0]].shape))
    while len(shape) > rank and shape[0] == 1:
        shape = shape[1:]
    data, saturated = Q.fx_quantize(_real(t), frac_bits, 16)
    m = MliTensor(
        name=b.base(idx),
        role=Role.PARAM,
        shape=shape or (1,),
        el_type=FX16,
        data=np.asarray(data, np.int16).reshape(shape or (1,)),
        frac_bits=frac_bits,
        source=t.name,
        source_index=idx,
        notes=[f"int16 constant on the frac bits {frac_bits} of the operand it meets"]
        + ([f"{saturated} values saturated"] if saturated else []),
    )
    return b.add(m)


def lower_compare16(b: Builder, op: ir.Op, code: int, bool_output) -> None:
    """GREATER, ..., EQUAL of int16 operands (`compare16`)."""
    i1, i2 = op.inputs[:2]
    acts = [i for i in (i1, i2) if b.g.tensors[i].data is None]
    names = {i: b.use(op, i, FX16) for i in acts}
    # a constant takes the frac bits of the activation it meets
    fb = b.tensors[names[acts[0]]].frac_bits if acts else 15
    for i in (i1, i2):
        if i not in names:
            names[i] = _constant(b, op, i, fb)
    f1, f2 = (b.tensors[names[i]].frac_bits for i in (i1, i2))
    top = max(f1, f2)
    out = bool_output(b, op)
    b.fallback(
        op,
        K.COMPARE16,
        [names[i1], names[i2]],
        [out.name],
        cfg={"op": code, "shift1": top - f1, "shift2": top - f2},
        notes=[
            f"no MLI kernel for {op.type}: fallback C (int16 operands on common frac bits "
            f"{top}, compared as TFLite compares the int16 values of one scale)"
        ],
    )


def lower_select16(b: Builder, op: ir.Op, condition: str) -> None:
    """SELECT / SELECT_V2 of int16 x and y (`select16`): the int16 values copied unchanged, as
    TFLite (and TFLite Micro) copy them whatever the operands' scales; an int16 constant keeps
    its integers."""
    out = b.produce(op.outputs[0], FX16)
    xy, notes = [], []
    for i in op.inputs[1:3]:
        t = b.g.tensors[i]
        if t.data is None:
            xy.append(b.use(op, i, FX16))
            f = b.tensors[xy[-1]].frac_bits
        elif t.dtype == "int16":
            xy.append(_raw_constant(b, op, i, out.frac_bits))
            f = out.frac_bits
        else:
            xy.append(_constant(b, op, i, out.frac_bits))
            f = out.frac_bits
        if f != out.frac_bits:
            notes.append(
                f"operand '{xy[-1]}' has frac bits {f}, the output {out.frac_bits}: values copied "
                "unchanged, as TFLite copies them (it does not check the scales)"
            )
    b.fallback(
        op,
        K.SELECT16,
        [condition, *xy],
        [out.name],
        notes=[f"no MLI kernel for {op.type}: fallback C (copies int16 values, as TFLite does)"]
        + notes,
    )


def _raw_constant(b: Builder, op: ir.Op, idx: int, frac_bits: int) -> str:
    """An int16 constant with its own integers, labelled with `frac_bits` (SELECT copies them)."""
    t = b.g.tensors[idx]
    shape, rank = tuple(t.shape), len(b.mli_shape(b.g.tensors[op.outputs[0]].shape))
    while len(shape) > rank and shape[0] == 1:
        shape = shape[1:]
    m = MliTensor(
        name=b.base(idx),
        role=Role.PARAM,
        shape=shape or (1,),
        el_type=FX16,
        data=np.asarray(t.data, np.int16).reshape(shape or (1,)),
        frac_bits=frac_bits,
        source=t.name,
        source_index=idx,
        notes=["int16 constant: its integers, copied by SELECT as TFLite copies them"],
    )
    return b.add(m)
