"""The post-processing of MLI's MAC kernels: bias add, output rescale, built-in ReLU clamp.

Follows the MLI 2.0.2 reference code (mli_prv_quant_ref.h), which is what the x86 build and
therefore the golden vectors run; see mli-arithmetic.md sections 5-7. The ReLU limits are
`activations.relu_limits` (mli_prv_get_relu_limits). Accumulators arrive as exact integer sums
(int64, or a float type holding them exactly); each function applies the container widths MLI uses.
"""

from __future__ import annotations

import numpy as np

from mlitool.errors import UnsupportedError
from mlitool.execute.channels import long_rows
from mlitool.execute.exact_sums import max_abs
from mlitool.execute.mli.kernels import intops as mli_intops
from mlitool.execute.mli.kernels.activations import RELU_1, RELU_6, RELU_GEN, RELU_NONE, relu_limits
from mlitool.execute.mli.kernels.intops import Arith
from mlitool.mli.types import ElType, MliTensor

__all__ = [
    "relu_limits",
    "relu_type",
    "clamp",
    "sa8_multiplier",
    "sa8_bias",
    "sa8_result",
    "fx_acc_bits",
    "fx_bias",
    "fx_result",
]
_RELU_NAMES = {
    "none": RELU_NONE,
    "gen": RELU_GEN,
    "relu": RELU_GEN,
    "relu_1": RELU_1,
    "relu1": RELU_1,
    "relu_6": RELU_6,
    "relu6": RELU_6,
}


def relu_type(cfg: dict) -> int:
    """The cfg's relu type as MLI's enum value; accepts ints or names like 'MLI_RELU_6' / 'relu6'."""
    value = cfg.get("relu_type", cfg.get("relu", RELU_NONE))
    if isinstance(value, str):
        key = value.lower().removeprefix("mli_relu_").removeprefix("mli_")
        if key not in _RELU_NAMES:
            raise UnsupportedError(f"unknown ReLU type {value!r}")
        return _RELU_NAMES[key]
    if int(value) not in (RELU_NONE, RELU_GEN, RELU_1, RELU_6):
        raise UnsupportedError(f"unknown ReLU type {value!r}")
    return int(value)


def clamp(o: np.ndarray, limits: tuple[int, int]) -> np.ndarray:
    """MLI applies MIN(max) then MAX(min): when min > max the result is min."""
    return np.maximum(np.minimum(o, limits[1]), limits[0])


# ---------------------------------------------------------------------------------------------
# SA8 (sa8_sa8_sa32)


def _per_channel(values: np.ndarray, channels: int) -> np.ndarray:
    values = np.asarray(values, dtype=np.int64).reshape(-1)
    return np.broadcast_to(values, (channels,)) if values.size == 1 else values


def sa8_multiplier(
    inp: MliTensor,
    weights: MliTensor,
    out: MliTensor,
    channels: int,
    arith: Arith,
    channel: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(out_mul, out_shift) per output channel: define_quant_params + adjust_quant_params.

    `channel` forces one weight-scale index for every channel (rnn_dense always uses index 0).
    """
    in_scale, out_scale = int(inp.scale[0]), int(out.scale[0])
    n0 = int(mli_intops.norm(in_scale, 32))
    q = (in_scale << n0) // out_scale
    n1 = int(mli_intops.norm(q, 32))
    ratio = int(mli_intops.sat(mli_intops.asr_rnd(q, 16 - n1, 32, arith.round_mode), 16))
    shift0 = int(inp.scale_frac_bits[0]) + n0 - int(out.scale_frac_bits[0]) - (16 - n1)
    w_scale = _per_channel(weights.scale, channels)
    w_frac = _per_channel(weights.scale_frac_bits, channels)
    if channel is not None:
        w_scale = np.full(channels, w_scale[channel])
        w_frac = np.full(channels, w_frac[channel])
    mul = ratio * w_scale
    shift = shift0 + w_frac
    if not arith.full_accu:
        nn = mli_intops.norm(mul, 32)
        mul, shift = mul << nn, shift + nn
    return mul.astype(np.int64), shift.astype(np.int64)


def sa8_bias(bias: np.ndarray, arith: Arith) -> np.ndarray:
    """The int32 bias as bias_additive adds it (FULL_ACCU OFF keeps ~16 significant bits)."""
    b = np.asarray(bias, dtype=np.int64)
    if not arith.full_accu:
        s = np.maximum(16 - mli_intops.norm(b, 32), 0)
        b = (b >> s) << s
    return b


# sa8_result's exact shortcuts before the generic int64 asr_rnd: float64 rounding while
# |acc * mul| stays below _FLOAT64_EXACT, an in-place int64 rounding shift while |acc| stays below
# _SHIFT64_ACC (then |acc * mul| < 2^62). Named so the tests can force each path on golden data.
_FLOAT64_EXACT = 1 << 52
_SHIFT64_ACC = 1 << 31


def sa8_known_bound(
    acc_bound: int | None, bias: np.ndarray, mul: np.ndarray, arith: Arith
) -> int | None:
    """|acc| + |bias| from the operands' ranges when that bound already picks sa8_result's
    float64 path (no pass over the sums to find their largest), else None."""
    if acc_bound is None:
        return None
    amax = acc_bound + max_abs(bias)
    if amax >= (1 << 31) - 256:
        return None
    if not arith.full_accu:  # squeezed to 16 bits, a 16-bit multiplier
        return amax
    return amax if amax * int(np.abs(mul).max(initial=0)) < _FLOAT64_EXACT else None


def sa8_result(
    acc: np.ndarray,
    mul: np.ndarray,
    shift: np.ndarray,
    out_zp: int,
    arith: Arith,
    limits: tuple[int, int] | None = None,
    *,
    bias: np.ndarray | None = None,
    amax: int | None = None,
    dtype: type = np.int64,
) -> np.ndarray:
    """result_cast for s8asym: 32-bit accumulator -> int8 (then the ReLU clamp when `limits`).

    The last dimension of `acc` is the output channel (`mul`, `shift` per channel or scalar).
    `acc` holds integers (any numeric dtype) inside the int32 range, `bias` (per channel) is
    added to it first (the caller checked acc + bias stays inside int32), `amax` bounds
    |acc| + |bias| when the caller knows it. Returns `dtype` values.
    """
    mul, shift = np.asarray(mul, np.int64), np.asarray(shift, np.int64)
    acc = np.asarray(acc)
    shape = acc.shape
    acc, mul, shift, bias = long_rows(acc, mul, shift, bias)
    lim = (1 << 31) - 256 if acc.size else 0
    if amax is None:
        amax = max_abs(acc) + (max_abs(bias) if bias is not None else 0)
    pre = np.zeros_like(shift)
    if not arith.full_accu:
        # Reduced-precision post-processing: 16-bit multiplier, accumulator squeezed to 16 bits.
        mul = mli_intops.asr_rnd(mul, 16, 32, arith.round_mode)
        shift = shift - 16
        pre = np.clip(shift - 21, 0, 8)
        if amax < lim:
            acc = _round_scaled(acc, np.ldexp(1.0, -pre), arith.round_mode, bias)
            np.clip(acc, -32768, 32767, out=acc)
        else:
            acc = mli_intops.asr_rnd(
                _with_bias(acc, bias), np.broadcast_to(pre, acc.shape), 32, arith.round_mode
            )
            acc = mli_intops.sat(acc, 16).astype(np.float64)
        bias = None
        amax = min(amax, 1 << 15)
    n = np.minimum(shift - pre, 63)
    hi, lo = 127, -128
    if limits is not None:
        hi, lo = min(hi, int(limits[1])), max(lo, int(limits[0]))
    if n.size and int(n.min()) >= 0 and amax * int(np.abs(mul).max(initial=0)) < _FLOAT64_EXACT:
        # Exact in float64: |(acc + bias) * mul| < 2^52, and scaling by 2^-n keeps every bit.
        # UP takes the zero point inside the floor (floor(x) + zp = floor(x + zp)), exact while
        # |x| < 2^(52-n) leaves room for it.
        zp_inside = out_zp if arith.round_mode == mli_intops.UP and int(n.max()) <= 40 else 0
        o = _round_scaled(acc, mul * np.ldexp(1.0, -n), arith.round_mode, bias, zp_inside)
        out_zp -= zp_inside
    elif n.size and int(n.min()) >= 1 and amax < _SHIFT64_ACC:
        o = _rounding_shift64(_with_bias(acc, bias) * mul, n, arith.round_mode)
    else:
        o = mli_intops.asr_rnd(_with_bias(acc, bias) * mul, n, 64, arith.round_mode)
    # sat16(o), + zp, sat16, sat8 is one clamp of o + zp to int8 (|zp| <= 128); MLI's ReLU clamp
    # (MIN(max) then MAX(min)) folds into it.
    if out_zp:
        o += out_zp
    if lo <= hi:
        np.clip(o, lo, hi, out=o)
    else:  # MLI's order: MIN(max) then MAX(min) gives min
        np.minimum(o, hi, out=o)
        np.maximum(o, lo, out=o)
    return o.astype(dtype, copy=False).reshape(shape)


def _with_bias(acc: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    acc = np.asarray(acc, np.int64)
    return acc if bias is None else acc + bias


def _round_scaled(
    acc: np.ndarray, scale: np.ndarray, mode: str, bias: np.ndarray | None = None, offset: int = 0
) -> np.ndarray:
    """asr_rnd((acc + bias) * m, n) + offset computed as round(acc * s + bias * s) + offset in
    float64, s = m * 2^-n, for operands whose products are below 2^52 (both products and their
    sum are then exact multiples of 2^-n): UP rounds half up (floor(x + 0.5), the integer offset
    inside the floor; the caller keeps x + offset exact), CONVERGENT half to even (rint)."""
    f = np.multiply(acc, scale, dtype=np.float64)
    b = 0.0 if bias is None else np.asarray(bias, np.float64) * scale
    if mode == mli_intops.UP:
        f += b + (offset + 0.5)
        return np.floor(f, out=f)
    if bias is not None:
        f += b
    np.rint(f, out=f)
    if offset:
        f += offset
    return f


def _rounding_shift64(p: np.ndarray, n: np.ndarray, mode: str) -> np.ndarray:
    """asr_rnd64(p, n) for 1 <= n <= 63 and |p| < 2^62, in place (p is a fresh product).

    UP: (p + 2^(n-1)) >> n cannot overflow here. CONVERGENT: adding 2^(n-1) - 1 plus the LSB of
    the truncated result rounds ties to even: x = q*2^n + r rounds up iff r > half, or r == half
    and q is odd. Both give 0 at n = 63 (|p| < 2^62 is below half of 2^63), as asr_rnd64 does.
    """
    half = np.left_shift(np.int64(1), n - 1)
    if mode == mli_intops.UP:
        p += half
        return np.right_shift(p, n, out=p)
    odd = np.right_shift(p, n) & 1
    p += half - 1
    p += odd
    return np.right_shift(p, n, out=p)


# ---------------------------------------------------------------------------------------------
# FX (fx16, fx16_fx8_fx8)


def fx_acc_bits(weights: MliTensor) -> int:
    """MLI's accumulator width on x86: 64 bits for fx16 weights, 32 for fx8 weights."""
    return 64 if weights.el_type == ElType.FX16 else 32


def fx_bias(bias: np.ndarray, shift: int, acc_bits: int) -> np.ndarray:
    """The bias shifted to the accumulator's frac bits as bias_additive does it."""
    b = np.asarray(bias, dtype=np.int64)
    if acc_bits == 64:
        # mli_math_cast_fx<int16_t, mli_acc40_t> truncates its 64-bit result to int32.
        return mli_intops.wrap(mli_intops.asl(b, shift, 64), 32)
    return mli_intops.asl(b, shift, 32)


def fx_result(acc: np.ndarray, out_shift: int, acc_bits: int, arith: Arith) -> np.ndarray:
    """Accumulator -> int16 output (rounding shift, saturation) before the ReLU clamp."""
    return mli_intops.sat(mli_intops.asr_rnd(acc, out_shift, acc_bits, arith.round_mode), 16)
