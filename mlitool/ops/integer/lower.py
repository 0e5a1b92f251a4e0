"""Lowering of int32 operands onto the int32 fallback C (`c_kernel.py`), and its support checks.

An int32 tensor is an MLI SA32 tensor of scale 1 and zero point 0 (4 bytes an element in the
arena); an ARG_MAX / ARG_MIN's int64 indices are the int32 its MLI kernel writes (exact). A
bool is one byte 0/1 (SA8, scale 1). A CAST from int8, bool or a float tensor held as SA8 goes
through a 256-entry table of the int32 values TFLite's cast gives each byte; into a float
tensor held as SA8, through the 255 int32 thresholds of its quantization levels.
"""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.mli import quant as Q
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.types import ElType, MliTensor
from mlitool.ops.common.fallback_checks import fallback_needs_mli2, sa8_params
from mlitool.ops.integer import c_kernel as K
from mlitool.ops.integer.reference import ACT_RANGE, CODES, COMPARE

SA8, SA32, FX16 = ElType.SA8, ElType.SA32, ElType.FX16
BOOL_NOTE = "bool tensor: one byte 0/1, an SA8 tensor of scale 1 and zero point 0"
RAW16_NOTE = (
    "int16 tensor without quantization: FX16 of 0 frac bits (the containers are the values)"
)
INT_NOTE = "int32 tensor: SA32 of scale 1 and zero point 0 (the containers are the values)"
_TYPES = ("int32", "int64", "int16", "int8", "bool", "float32")

# --- checks ----------------------------------------------------------------------------------


def integer_operands(s: Subject):
    """fallback C runs int32 ops on int32, int8, bool and float tensors (CAST: int16 without
    quantization too); tensor {name!r} is {dtype}"""
    for i in (*s.op.inputs, *s.op.outputs):
        t = s.graph.tensors[i] if i >= 0 else None
        if t is None:
            continue
        wide = t.dtype == "int64" and i in s.op.outputs
        raw16 = t.dtype == "int16" and (t.quant is not None or s.op.type != "CAST")
        if t.dtype not in _TYPES or wide or raw16:
            return {"name": t.name or f"#{i}", "dtype": t.dtype}
    return _OK


def gather_axis_rows(s: Subject):
    """GATHER by run-time indices: fallback C gathers in the HWC layout (layout {layout})"""
    return _OK if s.layout == "hwc" else {"layout": s.layout}


def lookup_same_type(s: Subject):
    """EMBEDDING_LOOKUP from a table of {table} into {out}: fallback C copies rows (no hybrid
    dequantization)"""
    table, out = s.graph.tensors[s.op.inputs[1]], s.output
    return _OK if table.dtype == out.dtype else {"table": table.dtype, "out": out.dtype}


CHECKS = (fallback_needs_mli2, integer_operands)
GATHER_CHECKS = (*CHECKS, gather_axis_rows)
LOOKUP_CHECKS = (*CHECKS, gather_axis_rows, lookup_same_type)


# --- operands --------------------------------------------------------------------------------


def _int_act(t: MliTensor) -> None:
    t.notes = [INT_NOTE]


def _raw16(t: MliTensor) -> None:
    t.frac_bits = 0
    t.notes = [RAW16_NOTE]


def _bool(b: Builder, t: MliTensor) -> None:
    b.set_sa(t, 1.0, 0)
    t.notes = [BOOL_NOTE]


def _int32_operand(b: Builder, op: ir.Op, idx: int, rank: int) -> str:
    """An int32 operand: its SA32 activation, or a constant of at least one dimension
    (right-aligned broadcasting: leading 1s beyond the output's MLI rank dropped)."""
    t = b.g.tensors[idx]
    if t.data is None:
        name = b.use(op, idx, SA32)
        _int_act(b.tensors[name])
        return name
    data = np.asarray(t.data, np.int64)
    shape = tuple(data.shape)
    while len(shape) > max(rank, 1) and shape[0] == 1:
        shape = shape[1:]
    data = data.astype(np.int32).reshape(shape or (1,))
    return b.sa_constant(b.base(idx), SA32, data, (1.0, 0), [INT_NOTE], t)


def _bool_operand(b: Builder, op: ir.Op, idx: int, rank: int) -> str:
    t = b.g.tensors[idx]
    if t.data is None:
        name = b.use(op, idx, SA8)
        _bool(b, b.tensors[name])
        return name
    data = np.asarray(t.data).astype(np.int8)
    shape = tuple(data.shape)
    while len(shape) > max(rank, 1) and shape[0] == 1:
        shape = shape[1:]
    return b.sa_constant(b.base(idx), SA8, data.reshape(shape or (1,)), (1.0, 0), [BOOL_NOTE], t)


def _out_rank(b: Builder, op: ir.Op) -> int:
    return len(b.mli_shape(b.g.tensors[op.outputs[0]].shape))


# --- arithmetic, comparisons, SELECT ---------------------------------------------------------


def lower_binary32(b: Builder, op: ir.Op, fmt: str) -> None:
    """ADD, SUB, MUL, FLOOR_DIV, FLOOR_MOD, MAXIMUM, MINIMUM, a comparison on int32 operands."""
    rank = _out_rank(b, op)
    a, c = (_int32_operand(b, op, i, rank) for i in op.inputs[:2])
    code = CODES.index(op.type)
    if op.type in COMPARE:
        out = b.produce(op.outputs[0], SA8)
        _bool(b, out)
    else:
        out = b.produce(op.outputs[0], SA32)
        _int_act(out)
    act = op.options.get("fused_activation", "NONE") or "NONE"
    lo, hi = ACT_RANGE.get(act, ACT_RANGE["NONE"])
    b.fallback(
        op,
        K.BINARY32,
        [a, c],
        [out.name],
        cfg={"op": code, "act_min": lo, "act_max": hi},
        notes=[
            f"int32 {op.type}: fallback C (wrapping int32 arithmetic, a divisor of 0 gives 0 "
            "where TFLite fails)"
        ],
    )


def lower_select32(b: Builder, op: ir.Op, fmt: str) -> None:
    """SELECT / SELECT_V2 of int32 values (`select32`)."""
    rank = _out_rank(b, op)
    cond = _bool_operand(b, op, op.inputs[0], rank)
    x, y = (_int32_operand(b, op, i, rank) for i in op.inputs[1:3])
    out = b.produce(op.outputs[0], SA32)
    _int_act(out)
    b.fallback(op, K.SELECT32, [cond, x, y], [out.name], notes=["int32 SELECT: fallback C"])


# --- CAST ------------------------------------------------------------------------------------


def _lut(b: Builder, t: ir.Tensor, m: MliTensor, dst: str) -> np.ndarray:
    """The int32 TFLite's CAST gives each SA8 byte of `m` (standing for `t`): int8 and bool keep
    their raw value (TFLite ignores quantization); a float tensor's real value truncated toward
    0 and saturated to the output's integer type (LiteRT's cast of float: 3e9 -> INT32_MAX,
    300.7 -> 127 into int8)."""
    q = np.arange(-128, 128, dtype=np.int64)
    if t.dtype != "float32":
        return q.astype(np.int32)
    real = np.float32((q - int(m.zero_point[0])) * float(m.real_scale()[0]))
    info = np.iinfo(np.dtype(dst if dst in ("int8", "int16") else "int32"))
    return np.clip(np.trunc(real.astype(np.float64)), info.min, info.max).astype(np.int32)


def _dequantized_lut(t: ir.Tensor, dst: str) -> np.ndarray:
    """The int32 TFLite's CAST gives each int8 value's DEQUANTIZE (its double product rounded to
    float32), truncated toward 0 and saturated to `dst` (`ir.DEQUANTIZED_CAST`)."""
    real = t.quant.dequantize(np.arange(-128, 128)).astype(np.float32)
    info = np.iinfo(np.dtype(dst if dst in ("int8", "int16") else "int32"))
    return np.clip(np.trunc(real.astype(np.float64)), info.min, info.max).astype(np.int32)


def thresholds(level_of) -> tuple[np.ndarray, int]:
    """(the 255 smallest int32 values whose level `level_of` (a vectorized, non-decreasing int32
    -> -128..127) is at least -127..127, the number of those levels some int32 reaches); a
    level no int32 reaches gets INT32_MAX, and `reach` keeps it from counting."""
    info = np.iinfo(np.int32)
    want = np.arange(-127, 128, dtype=np.int64)
    lo = np.full(want.shape, int(info.min), np.int64)  # binary search, every level at once
    hi = np.full(want.shape, int(info.max) + 1, np.int64)  # hi: reaches (or past the range)
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        ok = level_of(np.clip(mid, info.min, info.max)) >= want
        hi, lo = np.where(ok & (lo < hi), mid, hi), np.where(~ok & (lo < hi), mid + 1, lo)
    reach = int(np.count_nonzero(hi <= info.max))
    return np.minimum(hi, info.max).astype(np.int32), reach


def sa8_levels(m: MliTensor):
    """int32 -> the SA8 level of its value in `m`'s parameters (mlitool's quantization)."""
    s, zp = float(m.real_scale()[0]), int(m.zero_point[0])
    return lambda v: Q.int_quantize(np.asarray(v, np.float64), s, zp, 8)[0].astype(np.int64)


def tflite_levels(t: ir.Tensor):
    """int32 -> TFLite's QUANTIZE of its float32 value into `t`'s parameters (a CAST to float32
    that a QUANTIZE reads: `passes/cast_quantize.py`)."""
    from mlitool.execute.reference.params import affine_quantize

    return lambda v: affine_quantize(np.asarray(v).astype(np.float32), t).astype(np.int64)


def lower_cast32(b: Builder, op: ir.Op, fmt: str) -> None:
    """CAST between int32 (or ARG_* int64 indices) and int32, int8, bool or float (`cast32`)."""
    src, dst = b.g.tensors[op.inputs[0]], b.g.tensors[op.outputs[0]]
    dummy = np.zeros(1, np.int32)
    if src.dtype in ("int32", "int64"):
        x, in_bytes, lut = b.use(op, src.index, SA32), 4, dummy
        _int_act(b.tensors[x])
    elif src.dtype == "int16":  # without quantization (the support check): raw integers
        x, in_bytes, lut = b.use(op, src.index, FX16), 2, dummy
        _raw16(b.tensors[x])
    else:
        x, in_bytes = b.use(op, src.index, SA8), 1
        if src.dtype == "bool":
            _bool(b, b.tensors[x])
        lut = _lut(b, src, b.tensors[x], dst.dtype)
        if op.options.get(ir.DEQUANTIZED_CAST):  # the int8 input's DEQUANTIZE values, cast
            lut = _dequantized_lut(src, dst.dtype)
    thr, reach = dummy, 0
    if op.options.get(ir.QUANTIZED_CAST):  # CAST -> QUANTIZE: TFLite's levels of the float value
        out, mode = b.produce(dst.index, SA8), K.TO_SA8
        b.set_sa(out, *sa8_params(b, op, dst.index))
        thr, reach = thresholds(tflite_levels(dst))
    elif dst.dtype == "int32":
        out, mode = b.produce(dst.index, SA32), K.TO_INT32
        _int_act(out)
    elif dst.dtype == "int16":
        out, mode = b.produce(dst.index, FX16), K.TO_INT16
        _raw16(out)
    elif dst.dtype == "bool":
        out, mode = b.produce(dst.index, SA8), K.TO_BOOL
        _bool(b, out)
    elif dst.dtype == "int8":  # TFLite writes the low byte, whatever the output's parameters
        out, mode = b.produce(dst.index, SA8), K.TO_INT8
        b.set_sa(out, *(sa8_params(b, op, dst.index) if dst.quant is not None else (1.0, 0)))
    else:
        out, mode = b.produce(dst.index, SA8), K.TO_SA8
        b.set_sa(out, *sa8_params(b, op, dst.index))
        thr, reach = thresholds(sa8_levels(out))
    name = b.base(op.outputs[0])
    tables = [
        b.sa_constant(f"{name}_lut", SA32, lut, (1.0, 0), ["CAST: int32 of each input byte"]),
        b.sa_constant(f"{name}_thr", SA32, thr, (1.0, 0), ["CAST: thresholds of the levels"]),
    ]
    b.fallback(
        op,
        K.CAST32,
        [x, *tables],
        [out.name],
        cfg={"in_bytes": in_bytes, "mode": mode, "reach": reach},
        notes=[f"CAST {src.dtype} -> {dst.dtype}: fallback C through int32"],
    )


# --- gathers by run-time indices -------------------------------------------------------------


def _copy_params(dst: MliTensor, src: MliTensor) -> None:
    dst.scale, dst.scale_frac_bits = src.scale.copy(), src.scale_frac_bits.copy()
    dst.zero_point, dst.dim = src.zero_point.copy(), src.dim


def lower_gather_rows(b: Builder, op: ir.Op, fmt: str) -> None:
    """GATHER (axis, batch_dims) / EMBEDDING_LOOKUP (axis 0) by int32 indices: rows of the
    input copied (`gather_rows`), each of the leading batch_dims rows by its own indices."""
    lookup = op.type == "EMBEDDING_LOOKUP"
    p_idx, k_idx = (op.inputs[1], op.inputs[0]) if lookup else (op.inputs[0], op.inputs[1])
    pt, kt = b.g.tensors[p_idx], b.g.tensors[k_idx]
    axis = 0 if lookup else int(op.options.get("axis", 0) or 0) % len(pt.shape)
    bd = 0 if lookup else int(op.options.get("batch_dims", 0) or 0)
    bd += len(kt.shape) if bd < 0 else 0  # TFLite: a negative one counts from the indices' rank
    wide = pt.dtype in ("int32", "int64")
    el = SA32 if wide else SA8
    out = b.produce(op.outputs[0], el)
    if pt.data is not None:  # the table
        data = np.asarray(pt.data)
        if wide:
            p = b.sa_constant(b.base(p_idx), SA32, data.astype(np.int32), (1.0, 0), [INT_NOTE], pt)
        elif pt.dtype == "int8" and pt.quant is not None:
            q = (float(pt.quant.scale[0]), int(pt.quant.zero_point[0]))
            p = b.sa_constant(b.base(p_idx), SA8, data.astype(np.int8), q, [], pt)
        else:  # float: quantized with the output's parameters (the copy keeps them)
            q = sa8_params(b, op, op.outputs[0])
            ints = np.asarray(Q.int_quantize(data, *q, 8)[0], np.int8)
            p = b.sa_constant(b.base(p_idx), SA8, ints, q, [], pt)
    else:  # rows are read contiguously
        p = b.use(op, p_idx, el)
        p = b.dense(op, fmt, b.tensors[p], "gather_rows reads contiguous rows").name
    if wide:
        _int_act(out)
    else:  # rows are copied: the output holds the input's parameters
        _copy_params(out, b.tensors[p])
    k = _int32_operand(b, op, k_idx, 1)
    k = b.dense(op, fmt, b.tensors[k], "gather_rows reads contiguous indices").name
    shape = tuple(pt.shape)
    cfg = {
        "batch": int(np.prod(shape[:bd], dtype=np.int64)),
        "outer": int(np.prod(shape[bd:axis], dtype=np.int64)),
        "rows": int(shape[axis]),
        "inner": int(np.prod(shape[axis + 1 :], dtype=np.int64)),
        "count": int(np.prod(kt.shape[bd:], dtype=np.int64)),
        "bytes": 4 if wide else 1,
    }
    b.fallback(
        op,
        K.GATHER_ROWS,
        [p, k],
        [out.name],
        cfg=cfg,
        notes=[
            f"{op.type} by run-time indices: fallback C copies rows; an index out of range "
            "gives a row of raw 0 (TFLite fails)"
        ],
    )
