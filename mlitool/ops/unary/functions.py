"""The element-wise unary ops besides ELU (`mlitool.ops.unary.spec` registers them): their float32 functions and
TFLite's int8 arithmetic as functions of the int8 input values.

HARD_SWISH, RSQRT, SQRT, ABS and NEG compute in integers (or, SQRT, in float32 per element)
rather than through a float table: each function here is that arithmetic, vectorised. EXP, LOG
and GELU are `lut_populate` of the float functions below, which reproduce TFLite's float32
expressions (libm's expf / logf / erfcf / tanhf as float64 rounded once to float32).

LiteRT stops with an error on a negative input of RSQRT or SQRT; the functions give such inputs
the result of a zero input (the fallback table needs a value for every int8), and so does
tflite mode.
"""

from __future__ import annotations

import numpy as np

from mlitool import ir
from mlitool.errors import UnsupportedError
from mlitool.execute.reference import repro
from mlitool.execute.reference.fixedpoint import (
    inv_sqrt_multiplier,
    mul_by_quantized_multiplier,
    quantize_multiplier,
    wrap32,
)
from mlitool.execute.reference.gemmlowp16 import srdhm16, wrap16
from mlitool.ops.unary.table import QParams, Unary, lut_populate

f32 = np.float32


# --- float32 functions -----------------------------------------------------------------------


def _erf_series(z: np.ndarray) -> np.ndarray:
    """erf(z) for |z| <= 1.5 by its Maclaurin series (the 60th term is below 1e-40)."""
    term = z.copy()
    total = z.copy()
    z2 = z * z
    for n in range(1, 60):
        term = term * -z2 / n
        total += term / (2 * n + 1)
    return total * (2 / np.sqrt(np.pi))


def _erfc_fraction(z: np.ndarray) -> np.ndarray:
    """erfc(z) for z >= 1.5 by its continued fraction, evaluated from depth 120."""
    t = z.copy()
    for k in range(120, 0, -1):
        t = z + (k / 2) / t
    return np.exp(-z * z) / (np.sqrt(np.pi) * t)


def erfc64(z) -> np.ndarray:
    """erfc of float64 values, to about 1e-14 relative (float32's erfcf rounds it once)."""
    z = np.asarray(z, np.float64)
    a = np.abs(z)
    with np.errstate(under="ignore"):
        tail = _erfc_fraction(np.maximum(a, 1.5))
    pos = np.where(a < 1.5, 1.0 - _erf_series(np.minimum(a, 1.5)), tail)
    return np.where(z < 0, 2.0 - pos, pos)


def gelu(x: np.ndarray) -> np.ndarray:
    """TFLite's GeluTransform: 0.5f * x * erfcf(x * (float)-M_SQRT1_2)."""
    x = np.asarray(x, f32)
    e = erfc64(x * f32(-np.sqrt(0.5))).astype(f32)
    return (f32(0.5) * x * e).astype(f32)


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """TFLite's GeluTransformApproximate: 0.5f * x * (1 + tanhf(sqrt(2/pi) * (x + 0.044715 x^3)))."""
    x = np.asarray(x, f32)
    inner = x + f32(0.044715) * x * x * x
    t = repro.tanh(f32(np.sqrt(2 / np.pi)) * inner)
    return (f32(0.5) * x * (f32(1) + t)).astype(f32)


def hard_swish(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, f32)
    return (x * np.minimum(f32(6), np.maximum(f32(0), x + f32(3))) / f32(6)).astype(f32)


def exp(x: np.ndarray) -> np.ndarray:
    return repro.exp(x)


def log(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.log(np.asarray(x, np.float64)).astype(f32)


def rsqrt(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return (f32(1) / np.sqrt(np.asarray(x, f32))).astype(f32)


def sqrt(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.sqrt(np.asarray(x, f32))


def gelu_of(op: ir.Op):
    """GELU's function for this op's `approximate` option."""
    return gelu_tanh if op.options.get("approximate") else gelu


def log_int8(op: ir.Op, qin: QParams, qout: QParams):
    """TFLite's int8 LOG: the table of log, where inputs <= 0 give the real value of -128."""
    return lut_populate(log_real(qout), qin, qout)


def log_real(qout: QParams):
    """LOG's table function: log, and the real value of int8 -128 where log is undefined."""
    out_min = f32(-128 - int(qout[1])) * f32(qout[0])

    def fn(x: np.ndarray) -> np.ndarray:
        return np.where(x <= 0, out_min, log(np.maximum(x, f32(1e-45)))).astype(f32)

    return fn


# --- int8 arithmetic -------------------------------------------------------------------------


def _clamp8(x) -> np.ndarray:
    return np.clip(x, -128, 127).astype(np.int8)


def _q15(real: float) -> tuple[int, int]:
    """QuantizeMultiplier, then DownScaleInt32ToInt16Multiplier: (Q15 multiplier, exponent)."""
    m32, e = (int(v) for v in quantize_multiplier(float(real)))
    m16 = 32767 if m32 >= (1 << 31) - 1 - (1 << 15) else (m32 + (1 << 15)) >> 16
    return m16, e


def _rdbpot16(x: np.ndarray, exponent: int) -> np.ndarray:
    """gemmlowp's RoundingDivideByPOT on int16: its mask (1 << exponent) - 1 narrows to int16,
    so from exponent 16 on it is -1 (negative values then round to -1, not 0)."""
    mask = int(wrap16(np.int64((1 << exponent) - 1)))
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + ((x & mask) > threshold)


def _sat_left16(x: np.ndarray, amount: int) -> np.ndarray:
    return np.clip(x * (1 << amount), -(1 << 15), (1 << 15) - 1)


def hard_swish_int8(op: ir.Op, qin: QParams, qout: QParams):
    """TFLite's int8 HARD_SWISH: x on a 2^7 finer scale in int16, a Q15 'relu-ish' factor in
    [0, 1] from x / 3, their product (truncating), then the output shift."""
    hires = f32(1 / 128) * f32(qin[0])
    out_m, out_e = _q15(f32(hires / f32(qout[0])))
    relu_m, relu_e = _q15(f32(hires / f32(3 / 32768)))
    if out_e > 0:
        raise UnsupportedError(
            f"HARD_SWISH: input scale {qin[0]:g} is 128 or more times the output scale "
            f"{qout[0]:g} (TFLite refuses it)"
        )
    zin, zout = int(qin[1]), int(qout[1])

    def fn(x: np.ndarray) -> np.ndarray:
        v = (x.astype(np.int64) - zin) * 128  # on the hires input scale, fits int16
        pre_out = srdhm16(v, out_m)
        relu = _sat_left16(v, relu_e - 1) if relu_e > 0 else v
        relu = srdhm16(relu, relu_m)
        if relu_e > 0:
            relu = _sat_left16(relu, 1)
        elif relu_e < 0:
            relu = _rdbpot16(relu, -relu_e)
        relu = (relu + (1 << 15)) >> 1  # [-1, 1] -> [0, 1]
        prod = relu * pre_out  # SaturatingDoublingHighMul: relu >= 0, so never saturates
        prod = np.where(prod >= 0, prod >> 15, -((-prod) >> 15))
        return _clamp8(wrap16(_rdbpot16(prod, -out_e) + zout))

    return fn


def rsqrt_int8(op: ir.Op, qin: QParams, qout: QParams):
    """TFLite's int8 RSQRT: the integer inverse square root of x - zp (gemmlowp's Newton
    iteration) as a multiplier, applied to 1 << 20, then 1 / (sqrt(s_in) * s_out); x == zp
    gives 127."""
    scale = 1.0 / float(f32(np.sqrt(f32(qin[0]))) * f32(qout[0]))
    mult, shift = (int(v) for v in quantize_multiplier(scale))
    zin, zout = int(qin[1]), int(qout[1])

    def fn(x: np.ndarray) -> np.ndarray:
        v = np.maximum(x.astype(np.int64) - zin, 0)
        m, s = inv_sqrt_multiplier(np.maximum(v, 1), -1)
        data = mul_by_quantized_multiplier(np.ones_like(v), m, s + 20)
        out = mul_by_quantized_multiplier(data, mult, shift - 20) + zout
        return _clamp8(np.where(v == 0, 127, out))

    return fn


def _f32_to_int(y: np.ndarray) -> np.ndarray:
    """C's (int) of float32 values on x86: truncation, INT32_MIN when out of range."""
    big = ~(np.abs(y) < f32(2**31))
    return np.where(big, -(1 << 31), np.trunc(np.where(big, 0, y)).astype(np.int64))


def sqrt_int8(op: ir.Op, qin: QParams, qout: QParams):
    """TFLite's int8 SQRT: sqrtf of the dequantized input, divided by the output scale and
    truncated toward zero (not rounded), plus the zero point in int32 (INT32_MIN plus a negative
    zero point wraps to a large positive value, as on x86)."""
    s_in, s_out = f32(qin[0]), f32(qout[0])
    zin, zout = int(qin[1]), int(qout[1])

    def fn(x: np.ndarray) -> np.ndarray:
        real = s_in * np.maximum(x.astype(np.int64) - zin, 0).astype(f32)
        return _clamp8(wrap32(_f32_to_int(np.sqrt(real) / s_out) + zout))

    return fn


def abs_int8(op: ir.Op, qin: QParams, qout: QParams):
    """TFLite's int8 ABS: |x - zp_in|, rescaled by s_in / s_out when the scales differ."""
    zin, zout = int(qin[1]), int(qout[1])
    rescale = f32(qin[0]) != f32(qout[0])
    mult, shift = (int(v) for v in quantize_multiplier(f32(qin[0]) / f32(qout[0])))

    def fn(x: np.ndarray) -> np.ndarray:
        v = np.abs(x.astype(np.int64) - zin)
        if rescale:
            v = mul_by_quantized_multiplier(v, mult, shift)
        return _clamp8(v + zout)

    return fn


def abs_int16(op: ir.Op, qin: QParams, qout: QParams):
    """TFLite's int16 ABS (zero points 0): |x|, rescaled by s_in / s_out when the scales differ
    (MultiplyByQuantizedMultiplier, not a table), saturated to int16."""
    rescale, mult, shift = abs16_params(qin[0], qout[0])

    def fn(x: np.ndarray) -> np.ndarray:
        return abs16(x, rescale, mult, shift)

    return fn


def abs16_params(s_in: float, s_out: float) -> tuple[int, int, int]:
    """(rescale, multiplier, shift) TFLite's Prepare derives from the two scales."""
    mult, shift = (int(v) for v in quantize_multiplier(f32(s_in) / f32(s_out)))
    return int(f32(s_in) != f32(s_out)), mult, shift


def abs16(x: np.ndarray, rescale: int, mult: int, shift: int) -> np.ndarray:
    v = np.abs(np.asarray(x).astype(np.int64))
    if rescale:
        v = mul_by_quantized_multiplier(v, mult, shift)
    return np.clip(v, -32768, 32767).astype(np.int16)


def neg_int8(op: ir.Op, qin: QParams, qout: QParams):
    """TFLite's int8 NEG negates the stored integers and ignores the quantization (-(-128)
    wraps to -128)."""
    return lambda x: (-x.astype(np.int16)).astype(np.int8)


def _square(x: np.ndarray) -> np.ndarray:
    return np.multiply(x, x, dtype=np.float32)  # TFLite's float kernel: f * f in float32


def _no_int8_square(op: ir.Op, qin: QParams, qout: QParams):
    # TFLite's SQUARE kernel takes float32 only: an int8 one is a file TFLite refuses.
    raise UnsupportedError(f"{op.label}: TFLite has no int8 SQUARE kernel (float32 only)")


SQUARE = Unary("SQUARE", _square, _no_int8_square, options="SquareOptions")
