"""Element-wise unary ops MLI has no kernel for, in the float and tflite execution modes.

Each `Unary` gives the op's real function (float mode, float32 as TFLite's float kernels) and,
for int8 tensors, TFLite's integer arithmetic as a function of the int8 input values. The
fallback lowering tabulates that same function over -128..127 (`mlitool.ops.unary.c_kernel`), so the
emitted C, the `mli` executor and tflite mode compute one thing.

`lut_populate` is TFLite's table construction for the ops its int8 kernels evaluate in float
(ELU, GELU, EXP, LOG...): dequantize in float32, apply the function, round half away from zero
after multiplying by the inverse output scale, add the zero point, clamp.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mlitool import ir
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.fixedpoint import round_away_f32
from mlitool.execute.reference.params import scale_of, zp_of

f32 = np.float32
Int8Fn = Callable[[np.ndarray], np.ndarray]
QParams = tuple[float, int]  # (scale, zero point) of an int8 tensor
# Option of an op that stands for DEQUANTIZE -> op -> QUANTIZE: its 256 int8 results.
ISLAND_TABLE = ir.ISLAND_TABLE  # the option a fused float island carries


@dataclass(frozen=True)
class Unary:
    """One element-wise unary op; `mlitool.ops` registers it (`unary_op`)."""

    name: str  # the TFLite op
    real: Callable[[np.ndarray], np.ndarray]  # float32 -> float32
    # (op, (input scale, zero point), (output scale, zero point)) -> the int8 function;
    # None: lut_populate of `real`
    int8: Callable[[ir.Op, QParams, QParams], Int8Fn] | None = None
    # the float function when the op's options choose it (GELU's `approximate`)
    real_of: Callable[[ir.Op], Callable[[np.ndarray], np.ndarray]] | None = None
    options: str | None = None  # its builtin options table, where the schema has one
    # TFLite's int16 arithmetic (16x8 models, zero points 0), where the op has one
    int16: Callable[[ir.Op, QParams, QParams], Int8Fn] | None = None

    def function(self, op: ir.Op) -> Callable[[np.ndarray], np.ndarray]:
        return self.real_of(op) if self.real_of else self.real

    def int8_function(self, op: ir.Op, qin: QParams, qout: QParams, tflite=True) -> Int8Fn:
        """TFLite's int8 arithmetic for these input / output parameters; with `tflite` False
        (a float model quantized by mlitool) the table of the real function. A float island
        folded at import (`mlitool.passes.islands`) carries its own table."""
        island = op.options.get(ISLAND_TABLE)
        if island is not None:
            table = np.asarray(island, dtype=np.int8)
            return lambda x: table[np.asarray(x).astype(np.int16) + 128]
        if tflite and self.int8:
            return self.int8(op, qin, qout)
        return lut_populate(self.function(op), qin, qout)


def lut_populate(real, qin: QParams, qout: QParams) -> Int8Fn:
    """TFLite's LUTPopulate<int8_t>: float32 throughout, as the C++ does."""
    in_scale, in_zp = f32(qin[0]), int(qin[1])
    inverse = f32(1.0) / f32(qout[0])
    out_zp = int(qout[1])

    def fn(x: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            deq = in_scale * (x.astype(np.int32) - in_zp).astype(f32)
            y = np.asarray(real(deq), dtype=f32) * inverse
            # roundf (floor(y + 0.5) rounds 0.49999997 up)
            rounded = np.nan_to_num(round_away_f32(y), nan=0.0, posinf=1e9, neginf=-1e9)
            q = rounded.astype(np.float64) + out_zp
        return np.clip(q, -128, 127).astype(np.int8)

    return fn


def _elu(x):
    return np.where(x < 0, np.expm1(np.minimum(x, f32(0))), x).astype(f32)


ELU = Unary("ELU", _elu)


def float_kernel(u: Unary):
    def run(c: Call):
        real = u.function(c.op)
        with np.errstate(all="ignore"):
            return [np.asarray(real(np.asarray(c.x(0), dtype=f32)), dtype=f32)]

    run.__name__ = f"float_{u.name.lower()}"
    return run


def tflite_kernel(u: Unary):
    def run(c: Call):
        tin, tout = c.tin(0), c.tout()
        if np.dtype(tin.dtype).kind == "f":
            return float_kernel(u)(c)
        qin, qout = (scale_of(tin), zp_of(tin)), (scale_of(tout), zp_of(tout))
        if tin.dtype == tout.dtype == "int16" and u.int16 is not None:
            return [u.int16(c.op, qin, qout)(np.asarray(c.x(0)))]
        if tin.dtype != "int8" or tout.dtype != "int8":
            raise c.unsupported(f"{tin.dtype} {u.name}")
        return [u.int8_function(c.op, qin, qout)(np.asarray(c.x(0)))]

    run.__name__ = f"tflite_{u.name.lower()}"
    return run
