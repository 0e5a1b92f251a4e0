"""Binary element-wise ops on int8 with TFLite's arithmetic, from one set of integer parameters.

`int8_params` computes, as TFLite's Prepare() does, every number the int8 arithmetic of ADD, SUB,
MUL, MAXIMUM, MINIMUM, DIV and SQUARED_DIFFERENCE needs (zero points, multipliers, shifts, the
activation range); `apply` runs that arithmetic on broadcast int8 operands. The tflite execution
mode of DIV and SQUARED_DIFFERENCE calls both; the fallback kernel `binary8` takes the same
parameters as its config, so the emitted C, the `mli` executor and tflite mode compute one thing.

Two TFLite behaviours are kept on purpose: MAXIMUM / MINIMUM compare the raw int8 values (no
requantization, whatever the scales), and DIV's last RoundingDivideByPOT by 32 or more bits
shifts by the exponent modulo 32 with an all-ones mask, as LiteRT's compiled reference kernel
does on x86 (a tiny quotient comes out saturated, not zero). A zero divisor, which TFLite refuses
at run time, gives the activation maximum (minimum for a negative dividend).
"""

from __future__ import annotations

import numpy as np

from mlitool.execute.reference import fixedpoint as fp
from mlitool.execute.reference import kernel_common as float_ops
from mlitool.execute.reference.call import Call
from mlitool.execute.reference.params import activation_range, scale_of, zp_of

f32 = np.float32
QParams = tuple[float, int]  # (scale, zero point)

# The op selector of the config (`op` field), shared with the C kernel.
OPS = ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM", "DIV", "SQUARED_DIFFERENCE")
CFG = (
    "op",
    "a_zp",
    "b_zp",
    "out_zp",
    "left_shift",
    "a_mult",
    "a_shift",
    "b_mult",
    "b_shift",
    "out_mult",
    "out_shift",
    "act_min",
    "act_max",
)
IDENTITY = (1 << 30, 1)  # a multiplier that leaves int32 values as they are


def _qm(real) -> tuple[int, int]:
    m, s = fp.quantize_multiplier(np.float64(real))
    return int(m), int(s)


def _common_scale(s1: float, s2: float, left_shift: int, out_real) -> dict:
    """ADD's rescaling of both operands to twice the larger scale, `left_shift` bits up."""
    twice = np.float64(f32(2) * max(f32(s1), f32(s2)))
    a_mult, a_shift = _qm(np.float64(f32(s1)) / twice)
    b_mult, b_shift = _qm(np.float64(f32(s2)) / twice)
    out_mult, out_shift = _qm(out_real(twice))
    return dict(
        left_shift=left_shift,
        a_mult=a_mult,
        a_shift=a_shift,
        b_mult=b_mult,
        b_shift=b_shift,
        out_mult=out_mult,
        out_shift=out_shift,
    )


def int8_params(
    op: str, q1: QParams, q2: QParams, qo: QParams, act: tuple[int, int], raw_minmax: bool = True
) -> dict[str, int]:
    """The config of `op` for int8 operands with parameters q1, q2 and output qo; `act` is the
    clamp range. `raw_minmax`: MAXIMUM / MINIMUM compare raw values, as TFLite (False: across
    the scales, for a float model whose parameters come from calibration)."""
    (s1, z1), (s2, z2), (so, zo) = q1, q2, qo
    p = dict(op=OPS.index(op), a_zp=z1, b_zp=z2, out_zp=zo, act_min=act[0], act_max=act[1])
    p.update(left_shift=0, a_mult=0, a_shift=0, b_mult=0, b_shift=0)
    if op in ("ADD", "SUB") or (op in ("MAXIMUM", "MINIMUM") and not raw_minmax):
        p.update(_common_scale(s1, s2, 20, lambda t: t / np.float64(f32(1 << 20) * f32(so))))
    elif op in ("MAXIMUM", "MINIMUM"):
        p.update(a_zp=0, b_zp=0, out_zp=0, out_mult=IDENTITY[0], out_shift=IDENTITY[1])
    elif op == "SQUARED_DIFFERENCE":
        p.update(_common_scale(s1, s2, 7, lambda t: t * t / np.float64(f32(1 << 14) * f32(so))))
    elif op == "MUL":
        p["out_mult"], p["out_shift"] = _qm(f32(s1) * f32(s2) / f32(so))
    else:  # DIV
        p["out_mult"], p["out_shift"] = _qm(f32(s1) / (f32(s2) * f32(so)))
    return {k: int(p[k]) for k in CFG}


def _leading_sign_bits(x: np.ndarray) -> np.ndarray:
    """CountLeadingSignBits of int32 values (31 for 0)."""
    return fp.count_leading_zeros32(np.where(x >= 0, x, ~x)) - 1


def _rdbpot_x86(x: np.ndarray, e: np.ndarray) -> np.ndarray:
    """RoundingDivideByPOT as LiteRT's compiled kernel computes it for any exponent 0..63: below
    32 the rounding division; from 32 on, the mask is all ones and the shift is e mod 32."""
    small = fp.rdbpot(x, np.minimum(e, 31))
    big = (x >> (e & 31)) + (x >= 0)
    return np.where(e >= 32, big, small)


def _div(x: np.ndarray, y: np.ndarray, p: dict) -> np.ndarray:
    """TFLite's int8 DIV on offset operands: x / y through GetReciprocal (int32)."""
    neg = y < 0
    x, y = np.where(neg, -x, x), np.abs(y)
    zero = y == 0
    inv, recip_shift = fp.get_reciprocal(np.where(zero, 1, y), 31)
    headroom = _leading_sign_bits(x)
    unscaled = fp.srdhm(x << headroom, inv)
    e = headroom + recip_shift - p["out_shift"]
    q = _rdbpot_x86(fp.srdhm(unscaled, p["out_mult"]), e) + p["out_zp"]
    return np.where(zero, np.where(x >= 0, p["act_max"], p["act_min"]), q)


def apply(p: dict, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The int8 result of config `p` on int8 operands `a`, `b` (broadcast as numpy does)."""
    a, b = np.broadcast_arrays(np.asarray(a, np.int64), np.asarray(b, np.int64))
    x, y = a - p["a_zp"], b - p["b_zp"]
    op = OPS[p["op"]]
    if op == "DIV":
        q = _div(x, y, p)
    else:
        if p["left_shift"]:
            x = fp.mul_by_quantized_multiplier(x << p["left_shift"], p["a_mult"], p["a_shift"])
            y = fp.mul_by_quantized_multiplier(y << p["left_shift"], p["b_mult"], p["b_shift"])
        r = {
            "ADD": lambda: x + y,
            "SUB": lambda: x - y,
            "MUL": lambda: x * y,
            "MAXIMUM": lambda: np.maximum(x, y),
            "MINIMUM": lambda: np.minimum(x, y),
            "SQUARED_DIFFERENCE": lambda: (x - y) * (x - y),
        }[op]()
        q = fp.mul_by_quantized_multiplier(r, p["out_mult"], p["out_shift"]) + p["out_zp"]
    return np.clip(q, p["act_min"], p["act_max"]).astype(np.int8)


def int16_squared_difference_params(q1: QParams, q2: QParams, qo: QParams) -> dict[str, int]:
    """The config of TFLite Micro's int16 SQUARED_DIFFERENCE (zero points 0): left shift 0,
    both operands to twice the larger scale, the output multiplier of that scale squared."""
    p = dict(op=OPS.index("SQUARED_DIFFERENCE"), a_zp=0, b_zp=0, out_zp=0)
    p.update(act_min=-32768, act_max=32767)
    p.update(_common_scale(q1[0], q2[0], 0, lambda t: t * t / np.float64(f32(1) * f32(qo[0]))))
    return {k: int(p[k]) for k in CFG}


def apply_squared_difference16(p: dict, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """TFLite Micro's int16 SQUARED_DIFFERENCE of config `p`: each operand rescaled
    (MultiplyByQuantizedMultiplierSmallerThanOneExp, even with left shift 0), the difference
    squared in int32, MultiplyByQuantizedMultiplier, clamped to int16."""
    a, b = np.broadcast_arrays(np.asarray(a, np.int64), np.asarray(b, np.int64))
    x = fp.mul_by_quantized_multiplier(a, p["a_mult"], p["a_shift"])
    y = fp.mul_by_quantized_multiplier(b, p["b_mult"], p["b_shift"])
    q = fp.mul_by_quantized_multiplier((x - y) * (x - y), p["out_mult"], p["out_shift"])
    return np.clip(q, p["act_min"], p["act_max"]).astype(np.int16)


# --- float and tflite modes of the ops MLI lacks ---------------------------------------------


def float_div(c: Call):
    a, b = c.aligned(0, 1)
    with np.errstate(all="ignore"):
        y = np.asarray(a, f32) / np.asarray(b, f32)
    # TFLite clamps to the activation range, float's finite range without one (x/0: +-FLT_MAX)
    y = float_ops.activate(y, c.opt("fused_activation"))
    big = np.finfo(f32).max
    return [np.where(np.isnan(y), -big, np.clip(y, -big, big)).astype(f32)]


def float_squared_difference(c: Call):
    a, b = c.aligned(0, 1)
    d = np.asarray(a, f32) - np.asarray(b, f32)
    return [d * d]


def _tflite(name: str, float_kernel):
    def run(c: Call):
        t1, t2, out = c.tin(0), c.tin(1), c.tout()
        if np.dtype(out.dtype).kind == "f":
            return float_kernel(c)
        q = [(scale_of(t), zp_of(t)) for t in (t1, t2, out)]
        if name == "SQUARED_DIFFERENCE" and (t1.dtype, t2.dtype, out.dtype) == ("int16",) * 3:
            # LiteRT has no int16 SQUARED_DIFFERENCE; this is TFLite Micro's kernel
            p = int16_squared_difference_params(*q)
            return [apply_squared_difference16(p, *c.aligned(0, 1))]
        if (t1.dtype, t2.dtype, out.dtype) != ("int8",) * 3:
            raise c.unsupported(f"{out.dtype} {name}")
        act = activation_range(out, c.opt("fused_activation"))
        return [apply(int8_params(name, *q, act), *c.aligned(0, 1))]

    run.__name__ = f"tflite_{name.lower()}"
    return run


tflite_div = _tflite("DIV", float_div)
tflite_squared_difference = _tflite("SQUARED_DIFFERENCE", float_squared_difference)
