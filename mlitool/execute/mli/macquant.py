"""The post-processing of MLI's MAC kernels: bias add, output rescale, built-in ReLU clamp.

Follows the MLI 2.0.2 reference code (mli_prv_quant_ref.h), which is what the x86 build and
therefore the golden vectors run; see mli-arithmetic.md sections 5-7. The ReLU limits are
`activations.relu_limits` (mli_prv_get_relu_limits). Accumulators arrive as exact int64 sums;
each function applies the container widths MLI uses.
"""

from __future__ import annotations

import numpy as np

from mlitool.errors import UnsupportedError
from mlitool.execute import intops
from mlitool.execute.intops import Arith
from mlitool.execute.mli.activations import RELU_1, RELU_6, RELU_GEN, RELU_NONE, relu_limits
from mlitool.mli.types import ElType, MliTensor

__all__ = ["relu_limits", "relu_type", "clamp", "sa8_multiplier", "sa8_bias", "sa8_result",
           "fx_acc_bits", "fx_bias", "fx_result"]
_RELU_NAMES = {"none": RELU_NONE, "gen": RELU_GEN, "relu": RELU_GEN, "relu_1": RELU_1, "relu1": RELU_1,
               "relu_6": RELU_6, "relu6": RELU_6}


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


def sa8_multiplier(inp: MliTensor, weights: MliTensor, out: MliTensor, channels: int,
                   arith: Arith, channel: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(out_mul, out_shift) per output channel: define_quant_params + adjust_quant_params.

    `channel` forces one weight-scale index for every channel (rnn_dense always uses index 0).
    """
    in_scale, out_scale = int(inp.scale[0]), int(out.scale[0])
    n0 = int(intops.norm(in_scale, 32))
    q = (in_scale << n0) // out_scale
    n1 = int(intops.norm(q, 32))
    ratio = int(intops.sat(intops.asr_rnd(q, 16 - n1, 32, arith.round_mode), 16))
    shift0 = int(inp.scale_frac_bits[0]) + n0 - int(out.scale_frac_bits[0]) - (16 - n1)
    w_scale = _per_channel(weights.scale, channels)
    w_frac = _per_channel(weights.scale_frac_bits, channels)
    if channel is not None:
        w_scale = np.full(channels, w_scale[channel])
        w_frac = np.full(channels, w_frac[channel])
    mul = ratio * w_scale
    shift = shift0 + w_frac
    if not arith.full_accu:
        nn = intops.norm(mul, 32)
        mul, shift = mul << nn, shift + nn
    return mul.astype(np.int64), shift.astype(np.int64)


def sa8_bias(bias: np.ndarray, arith: Arith) -> np.ndarray:
    """The int32 bias as bias_additive adds it (FULL_ACCU OFF keeps ~16 significant bits)."""
    b = np.asarray(bias, dtype=np.int64)
    if not arith.full_accu:
        s = np.maximum(16 - intops.norm(b, 32), 0)
        b = (b >> s) << s
    return b


def sa8_result(acc: np.ndarray, mul: np.ndarray, shift: np.ndarray, out_zp: int,
               arith: Arith) -> np.ndarray:
    """result_cast for s8asym: 32-bit accumulator -> int8 before the ReLU clamp."""
    mul, shift = np.asarray(mul, np.int64), np.asarray(shift, np.int64)
    acc = np.asarray(acc, np.int64)
    pre = 0
    if not arith.full_accu:
        # Reduced-precision post-processing: 16-bit multiplier, accumulator squeezed to 16 bits.
        mul = intops.asr_rnd(mul, 16, 32, arith.round_mode)
        shift = shift - 16
        pre = np.clip(shift - 21, 0, 8)
        acc = intops.sat(intops.asr_rnd(acc, np.broadcast_to(pre, acc.shape), 32, arith.round_mode), 16)
    o = intops.asr_rnd(acc * mul, np.minimum(shift - pre, 63), 64, arith.round_mode)
    o = intops.sat(o, 16)
    return intops.sat(intops.sat(o + out_zp, 16), 8)


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
        return intops.wrap(intops.asl(b, shift, 64), 32)
    return intops.asl(b, shift, 32)


def fx_result(acc: np.ndarray, out_shift: int, acc_bits: int, arith: Arith) -> np.ndarray:
    """Accumulator -> int16 output (rounding shift, saturation) before the ReLU clamp."""
    return intops.sat(intops.asr_rnd(acc, out_shift, acc_bits, arith.round_mode), 16)
