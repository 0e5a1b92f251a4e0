"""POW in the float and tflite execution modes.

TFLite's POW kernel takes float32 (std::pow per element, with broadcasting) and int32 only; an
int8 model holds it as a float island (DEQUANTIZE -> POW(x, constant) -> QUANTIZE), which import
folds into the op on the int8 tensors carrying the island's 256 results
(`mlitool.passes.islands`, `ISLAND_TABLE`): tflite mode reads that table.
"""

from __future__ import annotations

import numpy as np

from mlitool.execute.reference.call import Call
from mlitool.ir import ISLAND_TABLE

f32 = np.float32


def pow_real(x: np.ndarray, exponent) -> np.ndarray:
    """float32 powf of each element, as TFLite's float kernel."""
    with np.errstate(all="ignore"):
        return np.power(np.asarray(x, f32), np.asarray(exponent, f32), dtype=f32)


def float_pow(c: Call):
    a, b = c.aligned(0, 1)
    return [pow_real(a, b)]


def tflite_pow(c: Call):
    tin, tout = c.tin(0), c.tout()
    island = c.op.options.get(ISLAND_TABLE)
    if island is not None and tin.dtype == tout.dtype == "int8":
        table = np.asarray(island, dtype=np.int8)
        return [table[np.asarray(c.x(0)).astype(np.int16) + 128]]
    if np.dtype(tin.dtype).kind != "f":
        raise c.unsupported(f"{tin.dtype} POW (TFLite's kernel takes float32 and int32)")
    return float_pow(c)
