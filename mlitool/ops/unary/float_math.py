"""CEIL, FLOOR, ROUND, SIN, COS (one input) and FLOOR_DIV, FLOOR_MOD (by a constant): TFLite's
float32 kernels, which are all TFLite (and TFLite Micro) has of them.

An int8 model holds each as a float island (DEQUANTIZE -> op -> QUANTIZE), which import folds
into the op on the int8 tensors with the island's 256 results (`mlitool.passes.islands`,
`ISLAND_TABLE`); a float model quantized by mlitool gets the table of the real function. So
every function here must be TFLite's float32 kernel to the bit:
- CEIL / FLOOR: std::ceil / std::floor of float32 (exact in numpy);
- ROUND: reference_ops::RoundToNearest, half to even: floor, then +1 when the remainder is above
  one half, or exactly one half with an odd floor (so -0.3 gives +0.0, not rint's -0.0);
- SIN / COS: std::sin / std::cos of float, the C library's sinf / cosf (numpy's float32 sin
  takes its own SIMD routine);
- FLOOR_DIV: std::floor of the float64 quotient, rounded to float32;
- FLOOR_MOD: std::fmod, plus the divisor when the remainder is non-zero and its sign is not
  the divisor's.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

import numpy as np

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.execute.reference.call import Call
from mlitool.ir import ISLAND_TABLE
from mlitool.ops.unary.table import QParams, Unary

f32 = np.float32


@functools.cache
def _libm(name: str):
    """The C library's float function `name` (sinf, cosf), vectorised."""
    path = ctypes.util.find_library("m")
    fn = getattr(ctypes.CDLL(path) if path else ctypes.CDLL(None), name)
    fn.argtypes, fn.restype = [ctypes.c_float], ctypes.c_float
    return np.frompyfunc(fn, 1, 1)


def _libm_call(name: str, x) -> np.ndarray:
    x = np.asarray(x, f32)
    return np.asarray(_libm(name)(x), dtype=f32).reshape(x.shape)


def sin(x) -> np.ndarray:
    return _libm_call("sinf", x)


def cos(x) -> np.ndarray:
    return _libm_call("cosf", x)


def ceil(x) -> np.ndarray:
    return np.ceil(np.asarray(x, f32))


def floor(x) -> np.ndarray:
    return np.floor(np.asarray(x, f32))


def round_half_even(x) -> np.ndarray:
    """reference_ops::RoundToNearest in float32."""
    x = np.asarray(x, f32)
    low = np.floor(x)
    diff = x - low
    with np.errstate(invalid="ignore"):
        odd = np.fmod(low, f32(2)) != 0
    up = (diff > f32(0.5)) | ((diff == f32(0.5)) & odd)
    return np.where(up, low + f32(1), low).astype(f32)


def floor_div(a, b) -> np.ndarray:
    with np.errstate(all="ignore"):
        q = np.asarray(a, f32).astype(np.float64) / np.asarray(b, f32).astype(np.float64)
        return np.floor(q).astype(f32)


def floor_mod(a, b) -> np.ndarray:
    a, b = np.asarray(a, f32), np.asarray(b, f32)
    with np.errstate(all="ignore"):
        r = np.fmod(a, b)
        return np.where((r != 0) & ((b < 0) != (r < 0)), r + b, r).astype(f32)


def _float_only(op: ir.Op, qin: QParams, qout: QParams):
    # TFLite's kernel takes float32 only: an int8 one (not an island) is a file TFLite refuses.
    raise UnsupportedError(f"{op.label}: TFLite has no int8 {op.type} kernel (float32 only)")


CEIL = Unary("CEIL", ceil, _float_only)
FLOOR = Unary("FLOOR", floor, _float_only)
ROUND = Unary("ROUND", round_half_even, _float_only)
SIN = Unary("SIN", sin, _float_only)
COS = Unary("COS", cos, _float_only)

# the ops of a tensor and a constant divisor: their float32 function of two operands
BY_CONSTANT = {"FLOOR_DIV": floor_div, "FLOOR_MOD": floor_mod}


def by_constant_kernel(name: str):
    """float and tflite mode of `name` (FLOOR_DIV / FLOOR_MOD): TFLite's float32 function with
    broadcasting; an int8 op is a folded float island, which reads its table."""
    fn = BY_CONSTANT[name]

    def run(c: Call):
        tin, tout = c.tin(0), c.tout()
        island = c.op.options.get(ISLAND_TABLE)
        if c.mode == "tflite" and island is not None and tin.dtype == tout.dtype == "int8":
            table = np.asarray(island, dtype=np.int8)
            return [table[np.asarray(c.x(0)).astype(np.int16) + 128]]
        if c.mode == "tflite" and np.dtype(tin.dtype).kind != "f":
            raise c.unsupported(f"{tin.dtype} {name} (mlitool runs TFLite's float32 kernel)")
        a, b = c.aligned(0, 1)
        return [fn(a, b)]

    run.__name__ = f"run_{name.lower()}"
    run.reads_island_table = True  # mlitool.passes.islands.READS_ISLAND_TABLE
    return run


def divisor_unary(op: ir.Op, divisor: float) -> Unary:
    """`op` (FLOOR_DIV / FLOOR_MOD by the constant `divisor`) as a function of its first input."""
    fn = BY_CONSTANT[op.type]
    d = f32(divisor)
    return Unary(op.type, lambda x: fn(x, d), _float_only)
