"""POW in the float and tflite execution modes.

TFLite's POW kernel takes float32 (std::pow per element, with broadcasting) and int32 only; an
int8 model holds it as a float island (DEQUANTIZE -> POW(x, constant) -> QUANTIZE), which import
folds into the op on the int8 tensors carrying the island's 256 results
(`mlitool.passes.islands`, `ISLAND_TABLE`): tflite mode reads that table.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

import numpy as np

from mlitool.execute.reference.call import Call
from mlitool.ir import ISLAND_TABLE

f32 = np.float32


@functools.cache
def _libm_powf():
    """The C library's powf, the function TFLite's float POW calls (std::pow on floats)."""
    path = ctypes.util.find_library("m")
    fn = (ctypes.CDLL(path) if path else ctypes.CDLL(None)).powf
    fn.argtypes, fn.restype = [ctypes.c_float, ctypes.c_float], ctypes.c_float
    return np.frompyfunc(fn, 2, 1)


def pow_real(x: np.ndarray, exponent) -> np.ndarray:
    """float32 powf of each element, as TFLite's float kernel: the C library's own powf.
    numpy's float32 power takes a SIMD routine on CPUs with AVX-512 whose last bit differs
    from libm's in about one element in five (and a float64 power rounded once differs from
    libm's powf too, more rarely), so neither equals TFLite."""
    x, e = np.broadcast_arrays(np.asarray(x, f32), np.asarray(exponent, f32))
    return np.asarray(_libm_powf()(x, e), dtype=f32).reshape(x.shape)


def float_pow(c: Call):
    a, b = c.aligned(0, 1)
    return [pow_real(a, b)]


def tflite_pow(c: Call):
    """POW in tflite mode; an int8 POW is a folded float island: its table."""
    tin, tout = c.tin(0), c.tout()
    island = c.op.options.get(ISLAND_TABLE)
    if island is not None and tin.dtype == tout.dtype == "int8":
        table = np.asarray(island, dtype=np.int8)
        return [table[np.asarray(c.x(0)).astype(np.int16) + 128]]
    if np.dtype(tin.dtype).kind != "f":
        raise c.unsupported(f"{tin.dtype} POW (TFLite's kernel takes float32 and int32)")
    return float_pow(c)


tflite_pow.reads_island_table = True  # mlitool.passes.islands.READS_ISLAND_TABLE
