"""DYNAMIC_UPDATE_SLICE onto the `update_slice` fallback C: the start indices, constants, clamped
at conversion as TFLite clamps them at run time (`update_slice_at` where they are an int32 tensor
computed at run time: read and clamped in C); the update an activation or a constant in the
output's element type (an int8 / int16 model's: its stored values, which TFLite copies raw; a
float island's: its QUANTIZE of the float update; a float model's: its real values in the
output's parameters)."""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.execute.reference.params import affine_quantize
from mlitool.ir import FLOAT_ISLAND
from mlitool.mli import quant as Q
from mlitool.mli.lower import params as P
from mlitool.mli.lower.builder import Builder
from mlitool.mli.lower.checks import _OK, Subject
from mlitool.mli.lower.facts import const_values
from mlitool.mli.types import ElType, MliTensor, Role
from mlitool.ops.gather.lower import gather_output
from mlitool.ops.integer.lower import INT_NOTE
from mlitool.ops.update_slice.c_kernel import UPDATE_SLICE, UPDATE_SLICE_AT
from mlitool.ops.update_slice.reference import clamped_starts

# --- checks ----------------------------------------------------------------------------------


def start_int32(s: Subject):
    """DYNAMIC_UPDATE_SLICE with {dtype} start indices computed at run time (fallback C reads
    int32 ones)"""
    t = s.graph.tensors[s.op.inputs[2]]
    if const_values(s.graph, t.index) is not None or t.dtype == "int32":
        return _OK
    return {"dtype": t.dtype}


def island_copies(s: Subject):
    """float island DEQUANTIZE -> DYNAMIC_UPDATE_SLICE -> QUANTIZE whose QUANTIZE changes the
    operand's values (fallback C copies them: equal input and output parameters)"""
    table = s.op.options.get(FLOAT_ISLAND)
    if table is None:
        return _OK
    q = affine_quantize(np.asarray(table, np.float32), s.output)
    return _OK if np.array_equal(q, np.arange(-128, 128)) else {}


# --- lowering --------------------------------------------------------------------------------


def lower_dynamic_update_slice(b: Builder, op: ir.Op, fmt: str) -> None:
    el = b.el_of(op.inputs[0], fmt)  # int32 data: SA32 (the values)
    src, upd = b.g.tensors[op.inputs[0]], b.g.tensors[op.inputs[1]]
    x = b.use(op, src.index, el)
    kout, pending = gather_output(b, op, x, el)
    if upd.data is None:
        u = b.use(op, upd.index, el)
    else:
        u = _update_constant(b, op, upd, b.tensors[kout], b.mli_dims(upd.shape, src.shape))
    if const_values(b.g, op.inputs[2]) is None:
        _run_time_starts(b, op, fmt, x, u, kout)
        b.finish(op, pending, "DYNAMIC_UPDATE_SLICE copies raw values")
        return
    start = np.asarray(const_values(b.g, op.inputs[2])).reshape(-1)
    starts = b.mli_dims(clamped_starts(start, src.shape, upd.shape), src.shape)
    cfg = {f"s{d}": int(v) for d, v in enumerate([0] * (4 - len(starts)) + list(starts))}
    b.fallback(
        op,
        UPDATE_SLICE,
        [x, u],
        [kout],
        cfg=cfg,
        notes=[
            f"no MLI kernel for DYNAMIC_UPDATE_SLICE: fallback C (update {list(upd.shape)} "
            f"written from {[int(v) for v in start]}, clamped to {list(starts)})"
        ],
    )
    b.finish(op, pending, "DYNAMIC_UPDATE_SLICE copies raw values")


def _run_time_starts(b: Builder, op: ir.Op, fmt: str, x: str, u: str, kout: str) -> None:
    """`update_slice_at`: the start indices read from their int32 tensor and clamped in C."""
    src = b.g.tensors[op.inputs[0]]
    k = b.use(op, op.inputs[2], ElType.SA32)
    b.tensors[k].notes = [INT_NOTE]
    k = b.dense(op, fmt, b.tensors[k], "update_slice_at reads contiguous start indices").name
    axes = list(b.mli_dims(list(range(len(src.shape))), src.shape))
    cfg = {f"a{d}": int(a) for d, a in enumerate([-1] * (4 - len(axes)) + axes)}
    b.fallback(
        op,
        UPDATE_SLICE_AT,
        [x, u, k],
        [kout],
        cfg=cfg,
        notes=[
            "no MLI kernel for DYNAMIC_UPDATE_SLICE: fallback C (start indices read at run "
            "time, clamped as TFLite clamps them)"
        ],
    )


def _update_constant(
    b: Builder, op: ir.Op, upd: ir.Tensor, out: MliTensor, shape: tuple[int, ...]
) -> str:
    """The constant update in the output's element type and parameters (copied raw)."""
    model_out = b.g.tensors[op.outputs[0]]
    m = MliTensor(
        name=f"{b.base(upd.index)}_update",
        role=Role.PARAM,
        shape=tuple(shape),
        el_type=out.el_type,
        source=upd.name,
        source_index=upd.index,
    )
    raw = (upd.dtype, out.el_type) in (
        ("int8", ElType.SA8),
        ("int16", ElType.FX16),
        ("int32", ElType.SA32),
    )
    if op.options.get(FLOAT_ISLAND) is not None:
        data = affine_quantize(np.asarray(upd.data, np.float32), model_out)
        m.notes.append("the float update as the island's QUANTIZE computes it")
    elif raw and upd.dtype == model_out.dtype:
        data = np.asarray(upd.data)
        m.notes.append("stored values, copied raw as TFLite copies them")
    elif out.el_type.is_sa:
        scale = float(out.scale[0]) / 2.0 ** int(out.scale_frac_bits[0])
        data = Q.int_quantize(P.real(upd), scale, int(out.zero_point[0]), 8)[0]
    else:
        data = Q.fx_quantize(P.real(upd), int(out.frac_bits), out.el_type.bits)[0]
    if out.el_type.is_sa:
        m.zero_point, m.scale = out.zero_point.copy(), out.scale.copy()
        m.scale_frac_bits, m.dim = out.scale_frac_bits.copy(), out.dim
    m.frac_bits = out.frac_bits
    m.data = np.ascontiguousarray(np.asarray(data).reshape(m.shape))
    return b.add(m)
