"""Comparisons and SELECT / SELECT_V2 lowered onto fallback C (`mlitool.ops.compare.c_kernel`).

A bool tensor (a comparison's output, a SELECT's condition) is one byte, 0 or 1, held in MLI as
an SA8 tensor of scale 1 and zero point 0. The comparison's config is what TFLite's Prepare
derives from the operands' int8 parameters (`mlitool.ops.compare.reference.scaling`); SELECT copies
int8 values unchanged, as TFLite does.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.mli import quant as Q
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.types import ElType, MliTensor, Role
from mlitool.ops.common.fallback_checks import fallback_needs_mli2, sa8_params
from mlitool.ops.compare import c_kernel as K
from mlitool.ops.compare import lower16 as L16
from mlitool.ops.compare.reference import scaling

SA8 = ElType.SA8
BOOL_NOTE = "bool tensor: one byte 0/1, an SA8 tensor of scale 1 and zero point 0"


# --- checks ----------------------------------------------------------------------------------


def operands_int8(s: Subject):
    """fallback C runs this op on int8 or int16 tensors only; tensor {name!r} is {dtype}"""
    for i in (*s.op.inputs, *s.op.outputs):
        t = s.graph.tensors[i] if i >= 0 else None
        if t is not None and t.dtype not in ("int8", "int16", "float32", "bool"):
            return {"name": t.name or f"#{i}", "dtype": t.dtype}
    return _OK


def scales_below_one(s: Subject):
    """operand {name!r} has scale {scale}: TFLite compares int8 operands only with scales
    below 1 (its shift would be negative)"""
    for i in s.op.inputs[:2]:
        t = s.graph.tensors[i]
        if t.dtype == "int8" and t.quant is not None and not float(t.quant.scale[0]) < 1:
            return {"name": t.name or f"#{i}", "scale": f"{float(t.quant.scale[0]):g}"}
    return _OK


def condition_broadcasts(s: Subject):
    """SELECT's rank-1 condition of {n} elements picks along the first dimension; the fallback C
    broadcasts right-aligned only"""
    cond, x = s.input(0), s.input(1)
    if s.op.type == "SELECT" and len(cond.shape) == 1 and len(x.shape) > 1 and cond.size != 1:
        return {"n": cond.size}
    return _OK


COMPARE_CHECKS = (fallback_needs_mli2, operands_int8, scales_below_one)
SELECT_CHECKS = (fallback_needs_mli2, operands_int8, condition_broadcasts)


# --- lowering --------------------------------------------------------------------------------


def _bool_act(b: Builder, t: MliTensor) -> None:
    b.set_sa(t, 1.0, 0)
    t.notes = [BOOL_NOTE]


def _operand(b: Builder, op: ir.Op, idx: int) -> tuple[str, tuple[float, int]]:
    """(MLI tensor name, (scale, zero point)) of an operand as SA8: an activation, or a constant
    passed as a parameter (an int8 model's keeps its values and parameters)."""
    t = b.g.tensors[idx]
    if t.data is None:
        name = b.use(op, idx, SA8)
        p = (1.0, 0) if t.dtype == "bool" else sa8_params(b, op, idx)
        return name, p
    # right-aligned broadcasting: leading 1s beyond the output's MLI rank go, nothing else
    shape, rank = tuple(t.shape), len(b.mli_shape(b.g.tensors[op.outputs[0]].shape))
    while len(shape) > rank and shape[0] == 1:
        shape = shape[1:]
    data, notes = np.asarray(t.data), []
    if t.dtype == "bool":
        p = (1.0, 0)
        notes.append(BOOL_NOTE)
    elif t.dtype == "int8" and t.quant is not None:
        p = (float(t.quant.scale[0]), int(t.quant.zero_point[0]))
    else:
        real = np.asarray(data, np.float64)
        p = Q.sa8_params_from_range(float(real.min()), float(real.max()))
        data, _ = Q.int_quantize(real, *p, 8)
    return b.sa_constant(b.base(idx), SA8, np.asarray(data, np.int8).reshape(shape), p, notes, t), p


def _output(b: Builder, op: ir.Op) -> MliTensor:
    out = b.produce(op.outputs[0], SA8)
    if b.g.tensors[op.outputs[0]].dtype == "bool":
        _bool_act(b, out)
    return out


def comparison(code: int):
    """The lowering of the comparison `code` (`mlitool.ops.compare.reference.CODES`)."""

    def lower_compare(b: Builder, op: ir.Op, fmt: str) -> None:
        """GREATER, ..., EQUAL of two int8 operands: the rescaled operands compared
        (`compare8`)."""
        _lower_compare(b, op, code)

    return lower_compare


def _lower_compare(b: Builder, op: ir.Op, code: int) -> None:
    if L16.is_int16(b, op, (0, 1)):
        L16.lower_compare16(b, op, code, _output)
        return
    (a, qa), (c, qc) = (_operand(b, op, i) for i in op.inputs[:2])
    # a bool input of the graph takes its first consumer's type: SA8, but 0/1
    for name, i in zip((a, c), op.inputs[:2]):
        if b.g.tensors[i].dtype == "bool" and b.tensors[name].role != Role.PARAM:
            _bool_act(b, b.tensors[name])
    out = _output(b, op)
    if all(b.g.tensors[i].dtype == "bool" for i in op.inputs[:2]):
        # bytes 0/1 compared as they are: one scale below 1 for both keeps TFLite's footing
        qa = qc = (0.5, 0)
    qa, qc = _below_one(b, op, qa, qc)
    try:
        sa, sc = scaling(*qa), scaling(*qc)
    except UnsupportedError as exc:  # a float model's operand range of 255 or more
        raise UnsupportedError(f"{op.label}: {exc.message}") from None
    cfg = {"op": code}
    for k, (offset, mult, shift) in ((1, sa), (2, sc)):
        cfg.update({f"offset{k}": offset, f"mult{k}": mult, f"shift{k}": shift})
    b.fallback(
        op,
        K.COMPARE8,
        [a, c],
        [out.name],
        cfg=cfg,
        notes=[
            f"no MLI kernel for {op.type}: fallback C (operands rescaled as TFLite does, "
            "((x - zero point) << 8) times a fixed-point multiplier, then compared)",
            f"output: {BOOL_NOTE}",
        ],
    )


def _below_one(b: Builder, op: ir.Op, qa, qc):
    """The operands' parameters, both scales divided by one power of two where a float model's
    operand has a scale of 1 or more (the placeholder 1 of `--weights-only`, or a wide range):
    the comparison of the two real values is the same, and the fixed-point footing TFLite's
    int8 arithmetic uses needs scales below 1. An int8 model's own parameters stay as they are
    (`scales_below_one` refuses those)."""
    floats = all(b.g.tensors[i].dtype == "float32" for i in op.inputs[:2])
    top = max(qa[0], qc[0])
    if not floats or top < 1:
        return qa, qc
    f = 2.0 ** -(int(np.floor(np.log2(top))) + 1)
    return (qa[0] * f, qa[1]), (qc[0] * f, qc[1])


def lower_select(b: Builder, op: ir.Op, fmt: str) -> None:
    """SELECT / SELECT_V2: int8 values of x or y copied unchanged (`select8`; int16:
    `select16`)."""
    cond, _ = _operand(b, op, op.inputs[0])
    if b.tensors[cond].role != Role.PARAM:
        _bool_act(b, b.tensors[cond])
    if L16.is_int16(b, op, (1, 2)):
        L16.lower_select16(b, op, cond)
        return
    (x, qx), (y, qy) = (_operand(b, op, i) for i in op.inputs[1:3])
    out = _output(b, op)
    notes = [f"no MLI kernel for {op.type}: fallback C (copies int8 values, as TFLite does)"]
    qo = sa8_params(b, op, op.outputs[0])
    if b.g.tensors[op.outputs[0]].dtype == "float32":
        # a calibrated float model: x and y get the output's parameters first
        x, y = (_requantized(b, op, n, q, qo) for n, q in ((x, qx), (y, qy)))
    elif qx != qo or qy != qo:
        notes.append(
            f"operands' parameters {qx}, {qy} differ from the output's {qo}: values copied "
            "unchanged, as TFLite copies them (it does not check the parameters)"
        )
    b.fallback(op, K.SELECT8, [cond, x, y], [out.name], notes=notes)


def _requantized(b: Builder, op: ir.Op, name: str, q, qo) -> str:
    """`name` with the parameters `qo`: itself when they are its own, else a converted copy."""
    src = b.tensors[name]
    if q == qo:
        return name
    t = dataclasses.replace(src, name=f"{name}_rq", role=Role.ACTIVATION, notes=[])
    b.set_sa(t, *qo)
    if src.data is not None:  # a constant: quantized again from its real values
        t.role = Role.PARAM
        real = np.asarray(b.g.tensors[src.source_index].data, np.float64)
        t.data = np.asarray(Q.int_quantize(real, *qo, 8)[0], np.int8).reshape(t.shape)
        return b.add(t)
    name = b.add(t)
    b.convert(op, src.name, name, "SELECT copies values: its operand takes the output's parameters")
    return name
