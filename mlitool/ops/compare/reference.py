"""Comparisons (GREATER, ..., EQUAL) and SELECT / SELECT_V2 in the float and tflite modes.

TFLite compares int8 operands of different scales on a common footing: each operand, its zero
point removed, is shifted left by 8 bits and multiplied by its own scale as a fixed-point
multiplier (QuantizeMultiplierSmallerThanOneExp, then MultiplyByQuantizedMultiplierSmallerThan-
OneExp): about 256 x its real value, rounded to an integer; the two integers are compared. The
output is bool. SELECT copies the int8 values of x or y unchanged: TFLite checks neither
operand's quantization against the output's (the converter makes them equal).
"""

from __future__ import annotations

import numpy as np

from mlitool.errors import UnsupportedError
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.fixedpoint import mul_smaller_than_one, quantize_multiplier
from mlitool.execute.reference.params import scale_of, zp_of

# The comparisons, by the code the fallback C switches on (the op table maps ops to codes).
CODES = (np.equal, np.not_equal, np.greater, np.greater_equal, np.less, np.less_equal)
LEFT_SHIFT = 8  # TFLite's comparisons shift both operands left by 8 bits before scaling


def scaling(scale: float, zero_point: int) -> tuple[int, int, int]:
    """(offset, multiplier, shift) TFLite's Prepare derives from an int8 operand's parameters."""
    if not 0 < scale < 1:
        # TFLite's shift would be positive, a right shift by a negative amount (undefined)
        raise UnsupportedError(
            f"int8 comparison of an operand with scale {scale:g}: TFLite's arithmetic needs a "
            "scale below 1"
        )
    mult, shift = quantize_multiplier(np.float64(np.float32(scale)))
    return -int(zero_point), int(mult), int(shift)


def scaled(x: np.ndarray, offset: int, mult: int, shift: int) -> np.ndarray:
    """An int8 operand on the common footing: ((x + offset) << 8) times the multiplier."""
    shifted = (np.asarray(x, np.int64) + offset) * (1 << LEFT_SHIFT)
    return mul_smaller_than_one(shifted, mult, shift)


def compare_int8(code: int, a: np.ndarray, qa, b: np.ndarray, qb) -> np.ndarray:
    """TFLite's int8 comparison `code` of a and b (broadcast), parameters (scale, zero point)
    qa, qb."""
    return CODES[code](scaled(a, *scaling(*qa)), scaled(b, *scaling(*qb)))


def float_compare(name: str, code: int):
    fn = CODES[code]

    def run(c: Call):
        a, b = c.aligned(0, 1)
        return [fn(np.asarray(a, np.float32), np.asarray(b, np.float32))]

    run.__name__ = f"float_{name.lower()}"
    return run


def tflite_compare(name: str, code: int):
    fn = CODES[code]

    def run(c: Call):
        ta, tb = c.tin(0), c.tin(1)
        a, b = c.aligned(0, 1)
        if ta.dtype == "int8" and tb.dtype == "int8":
            qa, qb = (scale_of(ta), zp_of(ta)), (scale_of(tb), zp_of(tb))
            return [compare_int8(code, a, qa, b, qb)]
        if ta.dtype == tb.dtype and ta.dtype in ("float32", "int16", "int32", "int64", "bool"):
            # LiteRT compares these values as they are: int16 too, scales ignored (the
            # converter gives both operands one scale)
            return [fn(a, b)]
        raise c.unsupported(f"{ta.dtype} {name}")

    run.__name__ = f"tflite_{name.lower()}"
    return run


def select(c: Call):
    """SELECT / SELECT_V2: x where the condition holds, else y (broadcast; SELECT's rank-1
    condition picks along the first dimension)."""
    cond, x, y = c.x(0), c.x(1), c.x(2)
    rank = len(c.tout().shape)
    if c.op.type == "SELECT" and len(c.tin(0).shape) == 1 and rank > 1:
        cond = cond.reshape(cond.shape + (1,) * (rank - 1))
    else:
        cond, x, y = c.aligned(0, 1, 2)
    return [np.where(np.asarray(cond, bool), x, y)]
