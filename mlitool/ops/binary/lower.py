"""Binary ops onto fallback C: DIV, SQUARED_DIFFERENCE and BATCH_MATMUL, which MLI lacks, and
ADD, SUB, MUL, MAXIMUM, MINIMUM where MLI's route refuses (an activation broadcast against a
constant: MLI's element-wise kernels take equal shapes or a scalar, and the runtime moves views
of activations only). Both operands keep their own shapes (a constant is not materialized at the
output's); the kernel broadcasts. Every number of the config is computed here as TFLite's
Prepare() computes it (`mlitool.ops.binary.reference`, `mlitool.ops.binary.batch_matmul`).
"""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.execute.reference import fixedpoint as fp
from mlitool.mli import quant as Q
from mlitool.mli.lower import checks as C
from mlitool.mli.lower import params as P
from mlitool.mli.lower.builder import Builder
from mlitool.mli.types import ElType, MliTensor, Role
from mlitool.ops import spec as opspec
from mlitool.ops.binary import batch_matmul as BMM
from mlitool.ops.binary import reference as BIN
from mlitool.ops.binary.c_kernel import (
    BATCH_MATMUL8,
    BATCH_MATMUL16,
    BINARY8,
    SQUARED_DIFFERENCE16,
)
from mlitool.ops.common import fallback_checks as FB

SA8, FX16 = ElType.SA8, ElType.FX16
# DIV's last shift (mlitool.ops.binary.reference) is covered for output multipliers in this range
DIV_SHIFTS = (-24, 22)


# --- checks ----------------------------------------------------------------------------------


def _int8_quant(t: ir.Tensor) -> tuple[float, int] | None:
    if t.dtype == "int8" and t.quant is not None and not t.quant.per_axis:
        return float(t.quant.scale[0]), int(t.quant.zero_point[0])
    return None


def div_multiplier_in_range(s: C.Subject):
    """DIV's output multiplier {real} (dividend scale / (divisor scale x output scale)) is
    outside 2^-25..2^22, where TFLite's int8 arithmetic shifts by more than the register holds"""
    q = [_int8_quant(t) for t in (s.input(0), s.input(1), s.output)]
    if None in q:
        return C._OK
    real = np.float32(q[0][0]) / (np.float32(q[1][0]) * np.float32(q[2][0]))
    _, shift = fp.quantize_multiplier(np.float64(real))
    return C._OK if DIV_SHIFTS[0] <= int(shift) <= DIV_SHIFTS[1] else {"real": f"{float(real):.3g}"}


def operands_per_tensor(s: C.Subject):
    """operand {name!r} is quantized per axis (TFLite's int8 kernel takes one scale)"""
    for t in (s.input(0), s.input(1)):
        if t.quant is not None and t.quant.per_axis and t.size > 1:
            return {"name": t.name}
    return C._OK


def mli_refuses(b: Builder, op: ir.Op) -> bool:
    """An element-wise op whose activation broadcasts against a constant of several elements
    (`checks.broadcast_against_activation`): MLI's route cannot take it, the fallback does."""
    s = C.Subject(b.g, op, b.target, b.layout)
    t = C._broadcast_activation(s)
    other = s.input("input2") if t is s.input("input") else s.input("input")
    return t is not None and other.data is not None and other.size > 1


# --- lowering --------------------------------------------------------------------------------


def act_range(scale: float, zp: int, act: str) -> tuple[int, int]:
    """CalculateActivationRangeQuantized of an int8 output (ADD_N and L2_POOL_2D use it too)."""

    def q(real: float) -> int:
        return zp + int(fp.round_away_f32(np.float32(real) / np.float32(scale)))

    lo, hi = {"RELU": (0.0, None), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0)}.get(
        act, (None, None)
    )
    return (-128 if lo is None else max(-128, q(lo))), (127 if hi is None else min(127, q(hi)))


def _operand(b: Builder, op: ir.Op, idx: int, out_rank: int) -> tuple[str, tuple[float, int]]:
    """(MLI tensor, its (scale, zero point)): an activation as SA8, or a constant as an SA8
    parameter in its own shape (aligned to the output's rank, leading ones dropped)."""
    t = b.g.tensors[idx]
    if t.data is None:
        return b.use(op, idx, SA8), FB.sa8_params(b, op, idx)
    q = _int8_quant(t)
    if q is not None:
        data = np.asarray(t.data, np.int8)
    else:  # a float (or per-axis) constant: int8 over its own range
        real = P.real(t)
        q = Q.sa8_params_from_range(real.min(), real.max())
        data = Q.int_quantize(real, q[0], q[1], 8)[0].astype(np.int8)
    shape = (1,) * (out_rank - len(t.shape)) + tuple(t.shape)
    while shape and shape[0] == 1:
        shape = shape[1:]
    note = f"constant operand {list(t.shape)}: broadcast by the fallback kernel"
    return b.sa_constant(b.base(idx), SA8, data.reshape(shape), q, [note], t), q


def lower_binary(b: Builder, op: ir.Op, fmt: str) -> None:
    """An element-wise binary op on the fallback kernel `binary8` (TFLite's int8 arithmetic and
    broadcasting)."""
    out_idx = op.outputs[0]
    rank = len(b.g.tensors[out_idx].shape)
    if op.type == "SQUARED_DIFFERENCE" and b.g.tensors[out_idx].dtype == "int16":
        return _lower_squared_difference16(b, op, rank)
    (x, q1), (y, q2) = (_operand(b, op, i, rank) for i in op.inputs[:2])
    out = b.produce(out_idx, SA8)
    qo = FB.sa8_params(b, op, out_idx)
    act = act_range(*qo, op.options.get("fused_activation", "NONE"))
    # TFLite's MAXIMUM / MINIMUM compare raw values; a calibrated float model's differ in scale
    raw = all(b.g.tensors[i].dtype == "int8" for i in (*op.inputs[:2], out_idx))
    cfg = BIN.int8_params(op.type, q1, q2, qo, act, raw_minmax=raw)
    shapes = " x ".join(str(list(b.g.tensors[i].shape)) for i in op.inputs[:2])
    why = (
        f"no MLI kernel for {op.type}"
        if opspec.spec(op.type).kind == "fallback"
        else f"{op.type} {shapes}: MLI's element-wise kernels take equal shapes or a scalar"
    )
    b.fallback(op, BINARY8, [x, y], [out.name], cfg=cfg, notes=[f"{why}: fallback C (binary8)"])


def lower_batch_matmul(b: Builder, op: ir.Op, fmt: str) -> None:
    """BATCH_MATMUL on the fallback kernel `batch_matmul8` (int32 sums, TFLite's requantization;
    int16: `batch_matmul16`)."""
    out_idx = op.outputs[0]
    if b.g.tensors[out_idx].dtype == "int16":
        return _lower_batch_matmul16(b, op)
    rank = max(len(b.g.tensors[i].shape) for i in (*op.inputs[:2], out_idx))
    (x, ql), (w, qr) = (_operand(b, op, i, rank) for i in op.inputs[:2])
    out = b.produce(out_idx, SA8)
    qo = FB.sa8_params(b, op, out_idx)
    adj = bool(op.options.get("adj_x", False)), bool(op.options.get("adj_y", False))
    cfg = BMM.int8_params(ql, qr, qo, *adj)
    b.fallback(
        op,
        BATCH_MATMUL8,
        [x, w],
        [out.name],
        cfg=cfg,
        notes=["no MLI kernel for BATCH_MATMUL: fallback C (batch_matmul8)"],
    )


def _lower_batch_matmul16(b: Builder, op: ir.Op) -> None:
    """int16 x int16 -> int16 BATCH_MATMUL (16x8 models) on FX16 activations (`batch_matmul16`):
    TFLite's arithmetic on the scales 2^-frac_bits (with power-of-two scales in the model,
    TFLite's integers)."""
    names = [b.use(op, i, FX16) for i in op.inputs[:2]]
    out = b.produce(op.outputs[0], FX16)
    ql, qr = ((2.0 ** -b.tensors[n].frac_bits, 0) for n in names)
    adj = bool(op.options.get("adj_x", False)), bool(op.options.get("adj_y", False))
    cfg = BMM.int8_params(ql, qr, (2.0**-out.frac_bits, 0), *adj)
    b.fallback(
        op,
        BATCH_MATMUL16,
        names,
        [out.name],
        cfg=cfg,
        notes=["no MLI kernel for BATCH_MATMUL: fallback C (batch_matmul16, int64 sums)"],
    )


def _operand16(b: Builder, op: ir.Op, idx: int, out_rank: int) -> str:
    """An int16 operand as FX16: an activation, or a constant as an FX16 parameter in its own
    shape (aligned to the output's rank, leading ones dropped): its own integers where its
    scale is a power of two, else quantized on the frac bits of its values."""
    t = b.g.tensors[idx]
    if t.data is None:
        return b.use(op, idx, FX16)
    real = P.real(t)
    shape = (1,) * (out_rank - len(t.shape)) + tuple(t.shape)
    while len(shape) > 1 and shape[0] == 1:
        shape = shape[1:]
    frac = _pow2_frac_bits(t)
    if frac is not None:  # the model's own integers: TFLite's arithmetic on the same scale
        data = np.asarray(t.data, np.int16)
    else:
        frac = Q.fx_frac_bits(np.max(np.abs(real), initial=0.0), 16)
        data, _ = Q.fx_quantize(real, frac, 16)
    m = MliTensor(
        name=b.base(idx),
        role=Role.PARAM,
        shape=shape,
        el_type=FX16,
        data=np.asarray(data, np.int16).reshape(shape),
        frac_bits=frac,
        source=t.name,
        source_index=idx,
        notes=[f"constant operand {list(t.shape)}: broadcast by the fallback kernel"],
    )
    return b.add(m)


def _pow2_frac_bits(t: ir.Tensor) -> int | None:
    """-log2 of an int16 constant's scale where it is a power of two (zero point 0), else None."""
    if t.dtype != "int16" or t.quant is None or t.quant.per_axis:
        return None
    m, e = np.frexp(float(t.quant.scale[0]))
    return int(1 - e) if m == 0.5 and int(t.quant.zero_point[0]) == 0 else None


def _lower_squared_difference16(b: Builder, op: ir.Op, rank: int) -> None:
    """int16 SQUARED_DIFFERENCE (16x8 models) on FX16 tensors (`squared_difference16`):
    TFLite Micro's arithmetic on the scales 2^-frac_bits."""
    x, y = (_operand16(b, op, i, rank) for i in op.inputs[:2])
    out = b.produce(op.outputs[0], FX16)
    q1, q2, qo = (
        (2.0**-f, 0) for f in (b.tensors[x].frac_bits, b.tensors[y].frac_bits, out.frac_bits)
    )
    cfg = BIN.int16_squared_difference_params(q1, q2, qo)
    b.fallback(
        op,
        SQUARED_DIFFERENCE16,
        [x, y],
        [out.name],
        cfg=cfg,
        notes=[
            "no MLI kernel for SQUARED_DIFFERENCE: fallback C (TFLite Micro's int16 arithmetic)"
        ],
    )
