"""TFLite's integer arithmetic on int32 tensors, for the `tflite` (and `float`) mode and the
numpy twins of the fallback C (`c_kernel.py`), which compute the same integers.

- ADD, SUB, MUL: int32 wrapping (two's complement; TFLite's C++ overflows the same way on every
  target mlitool knows), then the fused activation's clamp (RELU: [0, max], RELU6: [0, 6],
  RELU_N1_TO_1: [-1, 1]), as TFLite's `CalculateActivationRange<int32_t>`;
- DIV: the quotient truncated toward 0; SQUARED_DIFFERENCE: (x - y)**2, wrapping;
- FLOOR_DIV: the floor of the quotient, FLOOR_MOD: the remainder with the divisor's sign;
  INT32_MIN / -1 (TFLite's integer division traps on x86) wraps to INT32_MIN, its FLOOR_MOD 0;
- a divisor of 0: TFLite's kernel fails ("Division by 0"); tflite mode refuses the input with
  the same error, the fallback C (and its twin) writes 0;
- MAXIMUM, MINIMUM and the comparisons: as the values are.
"""

from __future__ import annotations

import functools

import numpy as np

from mlitool import ir
from mlitool.errors import InputDataError
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.params import affine_quantize

# Operation codes of the `binary32` fallback C's switch; 7..12 are the comparisons, in the
# order of mlitool.ops.compare.reference.CODES (their output is bool), then DIV and
# SQUARED_DIFFERENCE.
ARITH = ("ADD", "SUB", "MUL", "FLOOR_DIV", "FLOOR_MOD", "MAXIMUM", "MINIMUM")
COMPARE = ("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL")
CODES = ARITH + COMPARE + ("DIV", "SQUARED_DIFFERENCE")
I32 = np.iinfo(np.int32)
ACT_RANGE = {
    "NONE": (int(I32.min), int(I32.max)),
    "RELU": (0, int(I32.max)),
    "RELU6": (0, 6),
    "RELU_N1_TO_1": (-1, 1),
}


def wrap32(x: np.ndarray) -> np.ndarray:
    """int64 values modulo 2**32 as int32 (two's complement)."""
    return np.asarray(x, np.int64).astype(np.uint64).astype(np.uint32).view(np.int32)


def binary32(code: int, a, b, act_min: int, act_max: int) -> np.ndarray:
    """Operation `code` of CODES on int32 (or int64 index) operands, broadcast: int32 results,
    or bool for the comparisons. A zero divisor gives 0."""
    a, b = np.broadcast_arrays(np.asarray(a, np.int64), np.asarray(b, np.int64))
    name = CODES[code]
    if name in COMPARE:
        return {
            "EQUAL": np.equal,
            "NOT_EQUAL": np.not_equal,
            "GREATER": np.greater,
            "GREATER_EQUAL": np.greater_equal,
            "LESS": np.less,
            "LESS_EQUAL": np.less_equal,
        }[name](a, b)
    safe = np.where(b == 0, 1, b)
    if name == "ADD":
        r = a + b
    elif name == "SUB":
        r = a - b
    elif name == "MUL":
        r = a * b  # exact in int64 for int32 operands
    elif name == "FLOOR_DIV":
        r = np.where(b == 0, 0, np.floor_divide(a, safe))
    elif name == "FLOOR_MOD":
        r = np.where(b == 0, 0, np.mod(a, safe))
    elif name == "DIV":  # truncated toward 0, as C's integer division
        q = np.abs(a) // np.abs(safe)
        r = np.where(b == 0, 0, np.where((a < 0) != (b < 0), -q, q))
    elif name == "SQUARED_DIFFERENCE":
        d = wrap32(a - b).astype(np.int64)
        r = d * d
    elif name == "MAXIMUM":
        r = np.maximum(a, b)
    else:
        r = np.minimum(a, b)
    return np.clip(wrap32(r), act_min, act_max).astype(np.int32)


def binary_kernel(name: str):
    """The `float` / `tflite` kernel of `name` on int32 operands."""
    code = CODES.index(name)

    def run(c: Call):
        a, b = c.aligned(0, 1)
        if name in ("FLOOR_DIV", "FLOOR_MOD", "DIV") and np.any(np.asarray(b) == 0):
            raise InputDataError(f"{c.op.label}: Division by 0 (TFLite's int32 {name} fails)")
        lo, hi = ACT_RANGE.get(c.opt("fused_activation", "NONE") or "NONE", ACT_RANGE["NONE"])
        out = binary32(code, a, b, lo, hi)
        return [out if name in COMPARE else out.astype(c.tout().dtype)]

    run.__name__ = f"int32_{name.lower()}"
    return run


def cast_kernel(own):
    """CAST's kernel: `own`, but a float to integer CAST truncates and saturates to the output
    type, NaN to its largest value (LiteRT's cast), and where a graph pass fused the QUANTIZE
    reading an int -> float32 CAST (`ir.QUANTIZED_CAST`), tflite mode quantizes the float32
    value as that QUANTIZE does (float mode keeps real values, as its QUANTIZE does)."""

    @functools.wraps(own)
    def run(c: Call):
        if c.mode == "tflite" and c.opt(ir.QUANTIZED_CAST):
            return [affine_quantize(np.asarray(c.x(0)).astype(np.float32), c.tout())]
        dst = c.tout().dtype
        x = np.asarray(c.x(0))
        if c.mode == "tflite" and c.opt(ir.DEQUANTIZED_CAST):  # TFLite's DEQUANTIZE first
            x = c.tin(0).quant.dequantize(x).astype(np.float32)
        plain = c.mode == "float" and c.tout().quant is not None  # real values stay real
        if x.dtype.kind == "f" and dst in ("int8", "int16", "int32", "int64") and not plain:
            info = np.iinfo(np.dtype(dst))
            v = np.where(np.isnan(x), np.inf, x).astype(np.float64)
            return [np.clip(np.trunc(v), info.min, info.max).astype(dst)]
        return own(c)

    return run
